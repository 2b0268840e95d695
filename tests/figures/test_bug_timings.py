"""The bug zoo's timing figure: one bar per check, in order, in milliseconds."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.figures.bugs import check_times_figure


def test_one_bar_per_check_in_order_with_its_milliseconds() -> None:
    fig = check_times_figure({"numpy-block": 0.003, "gradcheck": 0.5})
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    widths = [bar.get_width() for bar in ax.patches]
    assert widths == pytest.approx([3.0, 500.0])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["numpy-block", "gradcheck"]


@pytest.mark.parametrize("bad", [{}, {"a": 0.0}, {"a": -1.0}, {"a": float("nan")}])
def test_empty_or_non_positive_times_are_refused(bad: dict) -> None:
    with pytest.raises(ArgumentError):
        check_times_figure(bad)
