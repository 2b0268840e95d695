"""The numbers behind the bug-zoo figures, and smoke tests of the figures on Agg."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.bugs import (
    STATUS_CODES,
    attention_maps_figure,
    causal_boundary,
    matrix_codes,
    zoo_matrix_figure,
)
from llm_from_scratch.figures.style import legibility_of


def test_matrix_codes_map_each_status_and_refuse_others() -> None:
    codes = matrix_codes([["caught", "missed"], ["n/a", "caught"]])
    np.testing.assert_array_equal(codes, [[2, 1], [0, 2]])
    assert STATUS_CODES == {"caught": 2, "missed": 1, "n/a": 0}
    with pytest.raises(ArgumentError):
        matrix_codes([["caught", "passed"]])
    for ragged in ([], [[]], [["caught"], ["caught", "missed"]]):
        with pytest.raises(ShapeError):
            matrix_codes(ragged)


def test_causal_boundary_is_the_staircase_after_each_diagonal_cell() -> None:
    x, y = causal_boundary(3)
    np.testing.assert_array_equal(x, [0.5, 0.5, 1.5, 1.5, 2.5, 2.5])
    np.testing.assert_array_equal(y, [-0.5, 0.5, 0.5, 1.5, 1.5, 2.5])


def test_matrix_figure_draws_one_cell_per_pair_within_the_column() -> None:
    statuses = [["caught", "missed", "n/a"], ["missed", "missed", "caught"]]
    fig = zoo_matrix_figure(statuses, ["a", "b"], ["x", "y", "z"])
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(ax.patches) == 6
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    record = legibility_of(fig.render_png())
    assert record.width_px <= 672 and record.smallest_font_pt >= 8
    with pytest.raises(ShapeError):
        zoo_matrix_figure(statuses, ["a"], ["x", "y", "z"])


def test_attention_maps_figure_shares_one_scale_and_refuses_non_square_maps() -> None:
    maps = {"clean": np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None], "other": np.eye(4)}
    fig = attention_maps_figure(maps)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2 and all(im.get_clim() == (0.0, 1.0) for im in images)
    np.testing.assert_array_equal(images[1].get_array(), np.eye(4))
    record = legibility_of(fig.render_png())
    assert record.width_px <= 672 and record.smallest_font_pt >= 8
    with pytest.raises(ShapeError):
        attention_maps_figure({"bad": np.ones((2, 3))})
    with pytest.raises(ArgumentError):
        attention_maps_figure({})
