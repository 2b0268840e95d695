"""GELU's tanh approximation (GPT-2's gelu_new, torch's approximate="tanh") as an op.

Truth: the closed form ½ x (1 + tanh(√(2/π)(x + 0.044715 x³))) written here with math.tanh,
its derivative by hand, central differences, the limits at ±∞, and the gap to exact GELU x Φ(x)
(scipy's ndtr) bounded on a grid and, in the tails, by Mills' ratio.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr

from llm_from_scratch.autodiff import OPS, Tensor, gradcheck, ops

RAISE = {"over": "raise", "invalid": "raise", "divide": "raise"}
C = math.sqrt(2.0 / math.pi)


def closed_form(x: float) -> float:
    return 0.5 * x * (1.0 + math.tanh(C * (x + 0.044715 * x**3)))


def sigmoid_form(x: float) -> float:
    """The same function as x σ(2u): ½ (1 + tanh u) = 1 / (1 + e^(−2u)), exact in the left tail."""
    return x / (1.0 + math.exp(-2.0 * C * (x + 0.044715 * x**3)))


def closed_slope(x: float) -> float:
    """½(1 + tanh u) + ½ x (1 − tanh² u) u′, with ½(1 + tanh u) = 1/(1 + E), E = e^(−2u)."""
    e = math.exp(-2.0 * C * (x + 0.044715 * x**3))
    half_one_plus_t = 1.0 / (1.0 + e)
    half_one_minus_t = e / (1.0 + e)
    one_minus_t2 = 4.0 * half_one_plus_t * half_one_minus_t  # (1 + t)(1 − t)
    return half_one_plus_t + 0.5 * x * one_minus_t2 * C * (1.0 + 3.0 * 0.044715 * x * x)


def forward_and_slope(points) -> tuple[np.ndarray, np.ndarray]:
    x = Tensor(np.asarray(points, dtype=float), requires_grad=True)
    with np.errstate(**RAISE):
        y = x.gelu_tanh()
        y.backward(np.ones(x.shape))
    return y.value, x.grad


def test_registered_as_an_op_and_a_tensor_method():
    assert "gelu_tanh" in OPS
    out = ops.gelu_tanh(Tensor([1.0], requires_grad=True))
    assert out.op_name == "gelu_tanh"


@pytest.mark.parametrize("x", [-7.0, -3.0, -1.0, -0.25, 0.0, 0.3, 1.0, 2.5, 6.0])
def test_value_and_slope_equal_the_closed_form(x):
    value, slope = forward_and_slope([x])
    assert value[0] == pytest.approx(sigmoid_form(x), rel=1e-13, abs=1e-300)
    if x >= -2.0:  # left of that, 1 + tanh u loses digits to cancellation
        assert value[0] == pytest.approx(closed_form(x), rel=1e-13, abs=1e-300)
    assert slope[0] == pytest.approx(closed_slope(x), rel=1e-12, abs=1e-300)


def test_known_values():
    """GELU_tanh(0) = 0 with slope ½; GELU_tanh(1) = ½(1 + tanh(√(2/π) · 1.044715))."""
    value, slope = forward_and_slope([0.0, 1.0])
    assert value[0] == 0.0 and slope[0] == 0.5
    assert value[1] == pytest.approx(0.5 * (1.0 + math.tanh(0.7978845608028654 * 1.044715)))


def test_matches_central_differences():
    rng = np.random.default_rng(3)
    x = rng.uniform(-4.0, 4.0, size=(3, 5))
    result = gradcheck(lambda a: a.gelu_tanh(), [x], step=1e-6, atol=1e-7, name="gelu_tanh")
    assert result.passed, result.message


def test_limits_at_and_near_infinity():
    value, slope = forward_and_slope([-math.inf, -1e308, -60.0, 60.0, 1e308, math.inf])
    np.testing.assert_array_equal(value, [0.0, 0.0, 0.0, 60.0, 1e308, math.inf])
    np.testing.assert_array_equal(slope, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0])


def test_left_tail_has_no_cancellation():
    """At x = −10 the closed form's 1 + tanh u cancels to 0; x σ(2u) keeps the value."""
    u = C * (-10.0 + 0.044715 * -1000.0)
    expected = -10.0 / (1.0 + math.exp(-2.0 * u))  # x σ(2u), σ(2u) = ½ (1 + tanh u)
    value, _ = forward_and_slope([-10.0])
    assert expected != 0.0 and closed_form(-10.0) == 0.0
    assert value[0] == pytest.approx(expected, rel=1e-13)


def test_gap_to_exact_gelu_is_below_half_a_thousandth():
    """max |x Φ(x) − GELU_tanh(x)| ≈ 4.73e-4 at |x| ≈ 2.70 on a 1e-5 grid over [−6, 6].

    Both functions have slopes of size at most 1.25 (GELU′ = Φ + x φ ≤ 1 + φ(1); the tanh
    form's, by its closed form, is checked on the grid below), so between grid points the gap
    moves by at most 2.5 · 0.5e-5 = 1.25e-5. Beyond |x| = 6 the
    gap is at most φ(x) + |x| e^(−2u(|x|)) (Mills' ratio 1 − Φ(x) ≤ φ(x)/x and 1 − σ(t) ≤ e^(−t)),
    below 1e-8; the gap is even (GELU(−x) = GELU(x) − x for both forms).
    """
    x = np.linspace(-6.0, 6.0, 1_200_001)
    with np.errstate(**RAISE):
        approx = Tensor(x).gelu_tanh().value
    gap = np.abs(x * ndtr(x) - approx)
    assert 4.7e-4 < gap.max() < 4.8e-4
    assert abs(abs(x[gap.argmax()]) - 2.70) < 0.01
    assert gap.max() + 1.25e-5 < 5e-4
    slopes = np.array([closed_slope(v) for v in x[::100]])
    assert slopes.max() < 1.25 and slopes.min() > -1.25
    tail = np.linspace(6.0, 40.0, 3401)
    mills = np.exp(-0.5 * tail**2) / math.sqrt(2 * math.pi) + tail * np.exp(
        -2.0 * C * (tail + 0.044715 * tail**3)
    )
    assert mills.max() < 1e-8
    for side in (tail, -tail):
        gap_tail = np.abs(side * ndtr(side) - Tensor(side).gelu_tanh().value)
        assert np.all(gap_tail <= mills + 4.0 * np.spacing(tail))  # x Φ(x) rounds to ulps of x


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=6))
def test_finite_inputs_anywhere_in_the_range_give_finite_values_and_slopes_in_bounds(values):
    value, slope = forward_and_slope(values)  # numpy warnings raised as errors inside
    x = np.asarray(values)
    assert np.isfinite(value).all() and np.isfinite(slope).all()
    assert np.all(slope >= -0.2) and np.all(slope <= 1.2)  # GELU_tanh′ lies in (−0.17, 1.13)
    assert np.all(value >= -0.2)  # the minimum is about −0.170, near x = −0.75
    assert np.all((np.minimum(x, 0.0) <= value) & (value <= np.maximum(x, 0.0)))  # x σ(2u)
