"""The numbers behind the normalization and feed-forward figures, and smoke tests on Agg."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.autodiff import Tensor, jacobians
from llm_from_scratch.figures.feedforward import (
    activation_curves,
    activation_figure,
    budget_rows,
    budget_table,
)
from llm_from_scratch.figures.norms import (
    gradient_paths_figure,
    root_mean_square,
    scaling_curves,
    scaling_figure,
    stack_input_gradient_norms,
)
from llm_from_scratch.nn import (
    FeedForward,
    LayerNorm,
    RMSNorm,
    parameter_budget,
    post_norm,
    pre_norm,
)
from llm_from_scratch.random import SplitMix64


def test_root_mean_square() -> None:
    assert root_mean_square(np.array([3.0, 4.0])) == pytest.approx(math.sqrt(12.5))


def test_scaling_curves_flat_for_norms_linear_for_input() -> None:
    x = np.array([3.0, 4.0, -1.0])
    scales = [0.5, 1.0, 10.0, 100.0]
    curves = scaling_curves(x, scales, {"LN": LayerNorm(3, eps=0.0), "RMS": RMSNorm(3, eps=0.0)})
    np.testing.assert_allclose(curves["input c·x"], np.array(scales) * root_mean_square(x))
    np.testing.assert_allclose(curves["LN"], 1.0, rtol=1e-12)  # zero mean, unit variance
    np.testing.assert_allclose(curves["RMS"], 1.0, rtol=1e-12)


def test_scaling_curves_show_epsilon_at_small_scale() -> None:
    x = np.array([3.0, 4.0])
    c = 1e-4  # mean square 12.5e-8, comparable to ε = 1e-6
    curves = scaling_curves(x, [c], {"RMS": RMSNorm(2, eps=1e-6)})
    expected = root_mean_square(c * x) / math.sqrt(12.5 * c * c + 1e-6)
    np.testing.assert_allclose(curves["RMS"], [expected], rtol=1e-12)
    assert curves["RMS"][0] < 0.35


def test_stack_gradient_norm_matches_jacobian_for_two_blocks() -> None:
    rng = SplitMix64(3)
    parts = [
        (LayerNorm(3, name=f"n{i}"), FeedForward(3, 6, rng=rng, name=f"f{i}")) for i in (0, 1)
    ]
    x = SplitMix64(4).normal((2, 3))
    g = SplitMix64(5).normal((2, 3))
    for ordering, rule in (("pre", pre_norm), ("post", post_norm)):
        norms = stack_input_gradient_norms(parts, x, g, ordering)
        (jac,) = jacobians(lambda t, fn=rule: fn(fn(t, *parts[0]), *parts[1]), [x])
        expected = np.linalg.norm(np.tensordot(g, jac, axes=2))
        assert norms.shape == (2,)
        assert norms[1] == pytest.approx(expected, rel=1e-12)


def test_zero_branch_pre_norm_passes_upstream_unchanged() -> None:
    zero = FeedForward.from_parameters(np.zeros((3, 4)), None, np.zeros((4, 3)), None)
    parts = [(LayerNorm(3), zero)] * 5
    g = SplitMix64(6).normal((2, 3))
    norms = stack_input_gradient_norms(parts, SplitMix64(7).normal((2, 3)), g, "pre")
    np.testing.assert_allclose(norms, np.linalg.norm(g), rtol=1e-15)


def test_zero_branch_post_norm_is_one_layernorm_deep() -> None:
    # With ε = 0, LN(LN(x)) = LN(x): any depth has the gradient of a single LN.
    zero = FeedForward.from_parameters(np.zeros((3, 4)), None, np.zeros((4, 3)), None)
    norm = LayerNorm(3, eps=0.0)
    x, g = SplitMix64(8).normal((2, 3)), SplitMix64(9).normal((2, 3))
    norms = stack_input_gradient_norms([(norm, zero)] * 4, x, g, "post")
    leaf = Tensor(x, requires_grad=True)
    post_norm(leaf, norm, lambda t: t * 0.0).backward(g)
    np.testing.assert_allclose(norms, np.linalg.norm(leaf.grad), rtol=1e-9)


def test_activation_curves_values() -> None:
    curves = activation_curves([-1.0, 0.0, 1.0])
    np.testing.assert_allclose(curves.gelu, [-0.158655, 0.0, 0.841345], atol=5e-7)
    np.testing.assert_allclose(curves.silu, [-0.268941, 0.0, 0.731059], atol=5e-7)
    np.testing.assert_array_equal(curves.relu, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(curves.sigmoid, [0.268941, 0.5, 0.731059], atol=5e-7)
    z, gap = curves.largest_gap_to_relu
    assert (z, gap) == (-1.0, pytest.approx(0.158655, abs=5e-7))


def test_budget_table_markdown() -> None:
    b = parameter_budget(768)
    rows = budget_rows({"D = 768": b})
    assert rows[0] == ["attention per block", "2,359,296"]
    assert rows[2] == ["one block", "7,077,888"]
    table = budget_table({"D = 768": b})
    assert table.splitlines()[0] == "| count | D = 768 |"
    assert table.splitlines()[1] == "|---|---:|"


def test_figures_build_on_agg() -> None:
    curves = activation_curves(np.linspace(-3, 3, 7))
    assert isinstance(activation_figure(curves, marks={"GELU(1)": (1.0, 0.84)}), Figure)
    scales = [0.1, 1.0]
    assert isinstance(scaling_figure(scales, {"a": np.ones(2), "b": np.ones(2)}), Figure)
    fig = gradient_paths_figure({("pre", "c = 1"): [1.0, 1.1], ("post", "c = 1"): [0.9, 0.8]})
    assert isinstance(fig, Figure)
    assert [line.get_label() for line in fig.axes[0].get_lines()][:2] == [
        "pre-norm, c = 1",
        "post-norm, c = 1",
    ]
