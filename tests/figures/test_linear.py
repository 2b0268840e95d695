"""Numbers behind the linear-layers figures (L12), and smoke tests on Agg."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.figures.linear import (
    axis_labels,
    expansion_text,
    gradient_figure,
    gradient_panels,
    linear_shape_figure,
    number_text,
    policy_bars,
    policy_figure,
    projection_figure,
)
from llm_from_scratch.nn import linear_layers_trace, read_linear_trace

X = [[[1.0, 2.0], [-1.0, 3.0]]]
W = [[1.0, 0.0, -1.0], [2.0, 0.5, 1.0]]
B = [0.5, -0.5, 1.0]
G = [[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]]


@pytest.fixture
def view():
    return read_linear_trace(str(linear_layers_trace(X, W, B, G)))


def test_number_text() -> None:
    assert [number_text(v) for v in (5.5, 1.0, -0.5, -0.0, 0.125)] == [
        "5.5",
        "1",
        "-0.5",
        "0",
        "0.125",
    ]


def test_l12_expansion_y0(view) -> None:
    assert expansion_text(view) == "y₀ = 1·1 + 2·2 + 0.5 = 5.5"
    assert expansion_text(view, 1, 2) == "y₂ = (-1)·(-1) + 3·1 + 1 = 5"
    assert expansion_text(view, 0, 1) == "y₁ = 1·0 + 2·0.5 + (-0.5) = 0.5"


def test_l5_policy_bars(view) -> None:
    bars = policy_bars(view)
    np.testing.assert_array_equal(bars.affine, [5.5, 0.5, 2.0, 5.5, 1.0, 5.0])
    np.testing.assert_array_equal(bars.bias_free, [5.0, 1.0, 1.0, 5.0, 1.5, 4.0])
    assert bars.affine_label == "affine XW + b (9 parameters)"
    assert bars.bias_free_label == "bias-free XW (6 parameters)"
    assert bars.labels[0] == "(0,0) y₀" and bars.labels[-1] == "(0,1) y₂"


def test_l3_gradient_panels(view) -> None:
    panels = gradient_panels(view)
    assert panels.coordinates == ["0,0", "0,1"]
    np.testing.assert_array_equal(panels.input_gradients, [[2.0, 1.0], [-0.5, 3.0]])
    np.testing.assert_array_equal(panels.upstream, [[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]])
    np.testing.assert_array_equal(panels.weight_gradient, [[0.5, -2.0, -2.0], [3.5, 6.0, 1.0]])
    np.testing.assert_array_equal(panels.bias_gradient, [1.5, 2.0, 0.0])
    # The shared dW is the sum of the per-position outer products the figure sets beside it.
    np.testing.assert_array_equal(panels.weight_terms.sum(axis=0), panels.weight_gradient)
    np.testing.assert_array_equal(panels.upstream.sum(axis=0), panels.bias_gradient)


def test_axis_labels() -> None:
    assert axis_labels(1) == ["d"]
    assert axis_labels(3, "d_in") == ["batch", "seq", "d_in"]
    assert axis_labels(4, "d_out") == ["a0", "a1", "a2", "d_out"]


def test_figures_draw_on_agg(view) -> None:
    for fig in (projection_figure(view), policy_figure(view), gradient_figure(view)):
        assert isinstance(fig, Figure)
        fig.canvas.draw()


def test_shape_figure_draws(view) -> None:
    from llm_from_scratch.figures import shape_layout

    layout = shape_layout(
        [("input X", view.input_shape), ("output Y = XW + b", view.output_shape)],
        axis_labels=[axis_labels(3, "d_in"), axis_labels(3, "d_out")],
        highlight_axis=-1,
    )
    lengths = [[box.length for box in stage.boxes] for stage in layout.stages]
    assert lengths == [[1, 2, 2], [1, 2, 3]]
    fig = linear_shape_figure(view)
    assert isinstance(fig, Figure)
    fig.canvas.draw()


def test_figures_follow_other_widths() -> None:
    x = np.arange(12.0).reshape(2, 2, 3) / 4
    w = np.arange(12.0).reshape(3, 4) / 10 - 0.5
    other = read_linear_trace(
        str(linear_layers_trace(x, w, [1.0, -1.0, 0.25, 0.0], np.ones((2, 2, 4))))
    )
    assert len(policy_bars(other).labels) == 16
    assert gradient_panels(other).weight_terms.shape == (4, 3, 4)
    for fig in (
        projection_figure(other, position=3, feature=3),
        policy_figure(other),
        gradient_figure(other),
    ):
        fig.canvas.draw()
