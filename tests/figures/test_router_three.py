"""The numbers behind the three-expert router figure (T15, T16, T23), and a smoke test on Agg."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.router_three import router_three, router_three_figure


def test_worked_example_gates_output_and_loss() -> None:
    view = router_three([0.56, 0.24, 0.20], 2, tokens=4)
    assert view.selected.tolist() == [0, 1]
    np.testing.assert_allclose(view.gates, [0.7, 0.3, 0.0], atol=5e-7)
    assert view.chosen.tolist() == [True, True, False]
    assert view.output([2.0, 5.0, -3.0]) == pytest.approx(2.9, abs=5e-7)
    np.testing.assert_allclose(view.importance, [2.8, 1.2, 0.0], atol=1e-12)
    mean = 4.0 / 3.0
    variance = ((2.8 - mean) ** 2 + (1.2 - mean) ** 2 + mean**2) / 3.0
    assert view.balance_loss == pytest.approx(variance / mean**2, rel=1e-12)


def test_even_routing_has_zero_loss() -> None:
    view = router_three([0.5, 0.5], 2, tokens=3)
    np.testing.assert_allclose(view.importance, [1.5, 1.5])
    assert view.balance_loss == 0.0


def test_rejects_bad_inputs() -> None:
    with pytest.raises(ShapeError):
        router_three([[0.5, 0.5]], 1, tokens=1)
    with pytest.raises(ArgumentError):
        router_three([0.5, 0.5], 1, tokens=0)
    with pytest.raises(ShapeError):
        router_three([0.5, 0.5], 1, tokens=1).output([1.0])


def test_figure_draws_one_box_per_expert() -> None:
    fig = router_three_figure(router_three([0.56, 0.24, 0.20], 2, tokens=4))
    assert isinstance(fig, Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum(t.startswith("expert ") for t in texts) == 3
    assert any("CV²" in t for t in texts)
    png, size = fig._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and size["width"] > 0
