"""Residual paths: T5 (Jacobian I + J_F, 2 + 0.3), pre- and post-norm on shared parameters."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, jacobians
from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.nn import FeedForward, LayerNorm, Linear, Residual, post_norm, pre_norm
from llm_from_scratch.nn import residual as residual_sum
from llm_from_scratch.random import SplitMix64


def draw(seed: int, shape: tuple[int, ...], low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return SplitMix64(seed).uniform(low, high, shape)


def test_scalar_residual_sum_is_2_3() -> None:
    """Seed fact T5: x + F(x) for the scalar fixture is 2.3."""
    y = residual_sum(np.array(2.0), lambda x: Tensor(0.3))
    assert y.item() == pytest.approx(2.3, abs=1e-15)


def test_jacobian_is_identity_plus_branch_jacobian() -> None:
    """Seed fact T5: the Jacobian of x + F(x) is I + J_F."""
    W = draw(1, (3, 3))
    branch = Linear.from_parameters(W)
    x = draw(2, (3,))
    (full,) = jacobians(lambda t: residual_sum(t, branch), [x])
    (branch_only,) = jacobians(lambda t: branch(t), [x])
    np.testing.assert_allclose(branch_only, W.T)  # y_i = Σ_j x_j W_ji
    np.testing.assert_allclose(full, np.eye(3) + W.T, rtol=1e-15)


def test_scalar_jacobian_is_1_plus_branch_slope() -> None:
    """Seed fact T5: for a scalar branch the derivative is 1 + F'(x)."""
    (jac,) = jacobians(lambda t: residual_sum(t, lambda u: 0.3 * u * u), [np.array(2.0)])
    assert jac.item() == pytest.approx(1.0 + 0.3 * 2 * 2.0, abs=1e-15)


def test_post_norm_of_residual_sum_1_3_centres_to_minus1_1() -> None:
    """Seed fact T6: post-norm LayerNorm (ε = 0) of the residual sum (1, 3) is (−1, 1)."""
    norm = LayerNorm(2, eps=0.0)
    y = post_norm(np.array([1.0, 2.0]), norm, lambda x: Tensor([0.0, 1.0]))  # sum (1, 3)
    np.testing.assert_allclose(y.value, [-1.0, 1.0], atol=5e-7)


def make_parts(width: int = 3, seed: int = 4) -> tuple[LayerNorm, FeedForward]:
    norm = LayerNorm.from_parameters(draw(seed, (width,), 0.5, 1.5), draw(seed + 1, (width,)))
    ffn = FeedForward(width, 4 * width, rng=SplitMix64(seed + 2))
    return norm, ffn


def test_orderings_on_the_same_parameters() -> None:
    norm, ffn = make_parts()
    x = draw(5, (2, 3), -2.0, 2.0)
    pre = Residual(norm, ffn, ordering="pre")
    post = pre.with_ordering("post")
    assert all(p is q for p, q in zip(pre.parameters(), post.parameters(), strict=True))
    np.testing.assert_allclose(pre(x).value, x + ffn(norm(x)).value, rtol=1e-15)
    np.testing.assert_allclose(post(x).value, norm(x + ffn(x).value).value, rtol=1e-15)
    assert not np.allclose(pre(x).value, post(x).value)
    np.testing.assert_array_equal(pre(x).value, pre_norm(x, norm, ffn).value)
    np.testing.assert_array_equal(post(x).value, post_norm(x, norm, ffn).value)
    assert repr(pre) == "Residual(pre-norm, norm='norm', branch='ffn', parameters=93)"
    assert [n for n, _ in pre.named_parameters()][:3] == [
        "norm.gain",
        "norm.bias",
        "ffn.up.weight",
    ]


def test_pre_norm_direct_path_carries_the_upstream_gradient() -> None:
    norm, ffn = make_parts()
    x = draw(6, (3,))
    (pre_jac,) = jacobians(lambda t: pre_norm(t, norm, ffn), [x])
    (branch_jac,) = jacobians(lambda t: ffn(norm(t)), [x])
    np.testing.assert_allclose(pre_jac, np.eye(3) + branch_jac, atol=1e-14)


def test_post_norm_kills_a_uniform_upstream_gradient() -> None:
    # A unit-gain LN output has a fixed mean, so 1ᵀ J_LN = 0 and hence 1ᵀ J_post = 0.
    norm, ffn = make_parts()
    unit = LayerNorm(3)
    x = draw(7, (3,))
    (post_jac,) = jacobians(lambda t: post_norm(t, unit, ffn), [x])
    np.testing.assert_allclose(np.ones(3) @ post_jac, 0.0, atol=1e-12)
    (pre_jac,) = jacobians(lambda t: pre_norm(t, unit, ffn), [x])
    assert np.linalg.norm(np.ones(3) @ pre_jac) > 0.1
    # With a linear branch u ↦ u/2 a uniform input shift is ignored as well: J_post 1 = 0.
    (linear_jac,) = jacobians(lambda t: post_norm(t, norm, lambda u: u * 0.5), [x])
    np.testing.assert_allclose(linear_jac @ np.ones(3), 0.0, atol=1e-12)


@pytest.mark.parametrize("ordering", ["pre", "post"])
def test_gradcheck_both_orderings(ordering: str) -> None:
    norm, ffn = make_parts()
    block = Residual(norm, ffn, ordering=ordering)
    result = gradcheck(lambda t: block(t), [draw(8, (2, 3))], atol=2e-6, name=f"{ordering}-norm")
    assert result.passed, result.message


def test_errors() -> None:
    norm, ffn = make_parts()
    with pytest.raises(ArgumentError) as info:
        Residual(norm, ffn, ordering="sandwich")
    assert str(info.value) == (
        "Residual ordering must be 'pre' (x + F(N(x))) or 'post' (N(x + F(x))); got 'sandwich'."
    )
    with pytest.raises(ArgumentError, match=r"^Residual branch must be a Module"):
        Residual(norm, lambda x: x)
    with pytest.raises(ShapeError) as info:
        pre_norm(np.ones((2, 3)), norm, lambda x: x[..., :2])
    assert str(info.value) == (
        "pre_norm adds the branch output to its input, so the branch must keep the shape; "
        "input (2, 3), branch output (2, 2). Make the branch return width 3 "
        "(e.g. an FFN D → hidden → D)."
    )
