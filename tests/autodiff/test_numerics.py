"""The float64 range with warnings as errors: limits instead of NaN (issue 16, numerics).

Expected values are the mathematical limits: SiLU(−∞) = GELU(−∞) = 0 with slope 0,
SiLU′(+∞) = GELU′(+∞) = 1, d x⁰/dx = 0 at x = 0, and a softmax row over −∞-shifted keys.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import erf

from llm_from_scratch.autodiff import Tensor, ops
from llm_from_scratch.errors import ArgumentError

RAISE = {"over": "raise", "invalid": "raise", "divide": "raise"}  # numpy's warnings, as errors


def forward_and_slope(method: str, points: list[float]) -> tuple[np.ndarray, np.ndarray]:
    x = Tensor(points, requires_grad=True)
    with np.errstate(**RAISE):
        y = getattr(x, method)()
        y.backward(np.ones(len(points)))
    return y.value, x.grad


@pytest.mark.parametrize("method", ["silu", "gelu"])
def test_silu_and_gelu_at_infinity_are_their_limits(method):
    value, slope = forward_and_slope(method, [-math.inf, math.inf])
    np.testing.assert_array_equal(value, [0.0, math.inf])
    np.testing.assert_array_equal(slope, [0.0, 1.0])


@pytest.mark.parametrize("magnitude", [1e155, 1e200, 1e308])
def test_gelu_slope_at_huge_magnitudes_is_zero_or_one(magnitude):
    """x² overflows from |x| ≈ 1.3e154; GELU′ = Φ(x) + x φ(x) is 0 below and 1 above."""
    value, slope = forward_and_slope("gelu", [-magnitude, magnitude])
    np.testing.assert_array_equal(value, [0.0, magnitude])
    np.testing.assert_array_equal(slope, [0.0, 1.0])


@pytest.mark.parametrize("magnitude", [1e155, 1e308])
def test_silu_slope_at_huge_magnitudes_is_zero_or_one(magnitude):
    value, slope = forward_and_slope("silu", [-magnitude, magnitude])
    np.testing.assert_array_equal(value, [0.0, magnitude])
    np.testing.assert_array_equal(slope, [0.0, 1.0])


def test_gelu_slope_unchanged_inside_the_range():
    """Φ(x) + x φ(x) by hand at x = 1: 0.8413447460685429 + 0.24197072451914337."""
    _, slope = forward_and_slope("gelu", [1.0])
    assert slope[0] == pytest.approx(0.8413447460685429 + 0.24197072451914337, rel=1e-15)


def test_gelu_equals_the_erf_form_and_is_accurate_in_the_left_tail():
    """Φ by scipy's ndtr: the erf form ½ (1 + erf(x/√2)) to rounding where it is accurate.

    For x < −2 the erf form loses digits to the cancellation in 1 + erf (at x = −5 it is off
    by 9e-11 relative, and it is 0 from x ≈ −8.3); there GELU is checked against x · ½ erfc(−x/√2),
    which has no cancellation, to its conditioning. Everywhere the forms differ by a few ulps of
    |x|.
    """
    x = np.linspace(-30.0, 30.0, 60001)
    with np.errstate(**RAISE):
        value = Tensor(x).gelu().value
    erf_form = x * (0.5 * (1.0 + erf(x / math.sqrt(2.0))))
    inside = x >= -2.0
    np.testing.assert_allclose(value[inside], erf_form[inside], rtol=2.5e-15, atol=0)
    assert np.all(np.abs(value - erf_form) <= 4.5e-16 * np.abs(x))
    tail = x[~inside]
    reference = np.array([v * 0.5 * math.erfc(-v / math.sqrt(2.0)) for v in tail])
    # Φ's relative condition number there is about x² (rounding x/√2 moves erfc by x² ulps)
    error = np.abs(value[~inside] - reference) / np.abs(reference)
    assert np.all(error <= 5e-16 * (1.0 + tail * tail)), float(np.max(error))


def test_power_zero_has_gradient_zero_at_zero():
    x = Tensor([0.0, 3.0, -2.0], requires_grad=True)
    with np.errstate(**RAISE):
        y = x**0
        y.sum().backward()
    np.testing.assert_array_equal(y.value, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0])


def test_two_finite_masks_that_sum_past_the_range_block_without_nan():
    """−1e308 + −1e308 overflows to −∞: that key is blocked; the row keeps its open key."""
    q = Tensor(np.ones((1, 1, 1, 2)), requires_grad=True)
    k = Tensor([[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]], requires_grad=True)
    added = np.array([[-1e308, -1e308, 0.0]])
    bias = Tensor(np.array([[[[-1e308, 0.0, 0.0]]]]), requires_grad=True)
    with np.errstate(**RAISE):
        weights = ops.attention_weights(q, k, bias, scale=1.0, blocked=None, added=added)
        weights.backward(np.array([[[[1.0, 2.0, 3.0]]]]))
    # key 0 at −∞, key 1 at 1 − 1e308 (weight e^(−1e308) = 0 next to key 2), key 2 at score 2
    np.testing.assert_array_equal(weights.value, [[[[0.0, 0.0, 1.0]]]])
    for grad in (q.grad, k.grad, bias.grad):
        assert np.isfinite(grad).all()


def test_a_row_whose_masks_sum_to_minus_inf_everywhere_reads_nothing():
    """Every key of the row overflows to −∞: the documented choice, all-zero weights."""
    q = Tensor(np.ones((1, 1, 2, 2)), requires_grad=True)
    k = Tensor(np.ones((1, 1, 2, 2)), requires_grad=True)
    added = np.array([[-1e308, -1e308], [0.0, -1e308]])
    bias = np.array([[-1e308, -1e308], [0.0, 0.0]])
    with np.errstate(**RAISE):
        weights = ops.attention_weights(q, k, bias, scale=1.0, blocked=None, added=added)
        weights.backward(np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(weights.value[0, 0], [[0.0, 0.0], [1.0, 0.0]])
    assert np.isfinite(q.grad).all() and np.isfinite(k.grad).all()


def test_two_float_masks_through_attention_give_no_warning_and_no_nan():
    """End to end: the layer sums the masks (−1e308 + −1e308) before the engine sees them."""
    from llm_from_scratch.nn.attention import scaled_dot_product_attention

    q = Tensor(np.ones((1, 1, 2, 2)), requires_grad=True)
    k = Tensor(np.ones((1, 1, 3, 2)))
    v = Tensor(np.arange(6.0).reshape(1, 1, 3, 2))
    mask = np.full((2, 3), -1e308)
    padding = np.array([[-1e308, 0.0, -1e308]])
    with np.errstate(**RAISE):
        out, weights = scaled_dot_product_attention(q, k, v, mask=mask, key_padding_mask=padding)
        out.sum().backward()
    np.testing.assert_array_equal(weights.value[0, 0], [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(out.value[0, 0], [[2.0, 3.0], [2.0, 3.0]])
    assert np.isfinite(q.grad).all()


def test_softmax_across_the_whole_range_is_finite():
    x = Tensor([[1.7e308, -1.7e308, 0.0]], requires_grad=True)
    with np.errstate(**RAISE):
        p = x.softmax(axis=-1)
        logp = x.log_softmax(axis=-1)
        (p.sum() + logp[0, 0]).backward()
    np.testing.assert_array_equal(p.value, [[1.0, 0.0, 0.0]])
    assert logp.value[0, 0] == 0.0 and logp.value[0, 1] == -math.inf
    assert np.isfinite(x.grad).all()


@pytest.mark.parametrize("method", ["softmax", "log_softmax"])
def test_a_plain_softmax_refuses_a_row_of_minus_inf(method):
    x = Tensor([[0.0, 1.0], [-math.inf, -math.inf]])
    with pytest.raises(ArgumentError, match=r"all -inf is 0/0; got 1 such row"):
        getattr(x, method)(axis=-1)
    assert getattr(x, method)(axis=0).shape == (2, 2)  # along the columns each has a finite entry
