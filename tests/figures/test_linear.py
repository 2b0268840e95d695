"""Numbers behind the linear-layers figures (L12), read from the trace; smoke tests on Agg."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.autodiff import Tensor
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
from llm_from_scratch.nn import Linear
from llm_from_scratch.traces import (
    TRACE_TOLERANCE,
    LinearEvidence,
    linear_evidence,
    linear_layers_trace,
    read_linear_trace,
)

X = [[[1.0, 2.0], [-1.0, 3.0]]]
W = [[1.0, 0.0, -1.0], [2.0, 0.5, 1.0]]
B = [0.5, -0.5, 1.0]
G = [[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]]


def traced(x, w, b, g) -> LinearEvidence:
    """The chapter's path: arrays → evidence → trace text → the evidence the figures draw."""
    return read_linear_trace(str(linear_layers_trace(linear_evidence(x, w, b, g))))


@pytest.fixture
def evidence() -> LinearEvidence:
    return traced(X, W, B, G)


def test_number_text() -> None:
    assert [number_text(v) for v in (5.5, 1.0, -0.5, -0.0, 0.125)] == [
        "5.5",
        "1",
        "-0.5",
        "0",
        "0.125",
    ]


def test_expansion_writes_out_one_output_coordinate(evidence) -> None:
    """L12: the expansion y₀ = 1·1 + 2·2 + 0.5 = 5.5, and two other coordinates."""
    assert expansion_text(evidence) == "y₀ = 1·1 + 2·2 + 0.5 = 5.5"
    assert expansion_text(evidence, 1, 2) == "y₂ = (-1)·(-1) + 3·1 + 1 = 5"
    assert expansion_text(evidence, 0, 1) == "y₁ = 1·0 + 2·0.5 + (-0.5) = 0.5"


def test_policy_bars_set_affine_beside_bias_free_outputs(evidence) -> None:
    """L5: affine and bias-free outputs per coordinate, with 9 and 6 parameters."""
    bars = policy_bars(evidence)
    np.testing.assert_array_equal(bars.affine, [5.5, 0.5, 2.0, 5.5, 1.0, 5.0])
    np.testing.assert_array_equal(bars.bias_free, [5.0, 1.0, 1.0, 5.0, 1.5, 4.0])
    assert bars.affine_label == "affine XW + b (9 parameters)"
    assert bars.bias_free_label == "bias-free XW (6 parameters)"
    assert bars.labels[0] == "(0,0) y₀" and bars.labels[-1] == "(0,1) y₂"


def test_gradient_panels_pair_local_gradients_with_shared_sums(evidence) -> None:
    """L3: each position's G_p and dX_p beside dW and db, the sums over positions."""
    panels = gradient_panels(evidence)
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


def test_figure_numbers_are_the_layers_own_numbers() -> None:
    """The numbers the figures show equal the layer's outputs and gradients to the trace's 5e-7."""
    rng = np.random.default_rng(11)
    x, g = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 5))
    w, b = rng.normal(size=(4, 5)), rng.normal(size=5)
    layer = Linear.from_parameters(w, b)
    leaf = Tensor(x, requires_grad=True)
    layer(leaf).backward(g)
    evidence = traced(x, w, b, g)
    bars, panels = policy_bars(evidence), gradient_panels(evidence)
    close = {"rtol": 0, "atol": TRACE_TOLERANCE}
    np.testing.assert_allclose(bars.affine, layer(Tensor(x)).value.ravel(), **close)
    np.testing.assert_allclose(bars.bias_free, (x @ w).ravel(), **close)
    np.testing.assert_allclose(panels.upstream, g.reshape(6, 5), **close)
    np.testing.assert_allclose(panels.input_gradients, leaf.grad.reshape(6, 4), **close)
    np.testing.assert_allclose(panels.weight_gradient, layer.weight.grad, **close)
    np.testing.assert_allclose(panels.bias_gradient, layer.bias.grad, **close)
    # the figure's per-position terms are products of traced values: within the rounding
    # of each factor (|x|, |g| < 10 here), and they sum to the shared gradient
    np.testing.assert_allclose(panels.weight_terms.sum(axis=0), layer.weight.grad, atol=1e-4)


def test_figures_draw_on_agg(evidence) -> None:
    for fig in (
        projection_figure(evidence),
        policy_figure(evidence),
        gradient_figure(evidence),
    ):
        assert isinstance(fig, Figure)
        fig.canvas.draw()


def test_shape_figure_draws(evidence) -> None:
    from llm_from_scratch.figures import shape_layout

    layout = shape_layout(
        [("input X", evidence.input_shape), ("output Y = XW + b", evidence.output_shape)],
        axis_labels=[axis_labels(3, "d_in"), axis_labels(3, "d_out")],
        highlight_axis=-1,
    )
    lengths = [[box.length for box in stage.boxes] for stage in layout.stages]
    assert lengths == [[1, 2, 2], [1, 2, 3]]
    fig = linear_shape_figure(evidence)
    assert isinstance(fig, Figure)
    fig.canvas.draw()


def test_figures_follow_other_widths() -> None:
    x = np.arange(12.0).reshape(2, 2, 3) / 4
    w = np.arange(12.0).reshape(3, 4) / 10 - 0.5
    other = traced(x, w, [1.0, -1.0, 0.25, 0.0], np.ones((2, 2, 4)))
    assert len(policy_bars(other).labels) == 16
    assert gradient_panels(other).weight_terms.shape == (4, 3, 4)
    for fig in (
        projection_figure(other, position=3, feature=3),
        policy_figure(other),
        gradient_figure(other),
    ):
        fig.canvas.draw()
