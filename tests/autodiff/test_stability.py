"""Saturating functions stay finite and exact at ±1e4, with numpy's warnings turned into errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor

EXTREMES = np.array([-1e4, -1.0, 0.0, 1.0, 1e4])


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def gelu_exact(z):
    return 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0)))


@pytest.mark.parametrize(
    ("method", "expected", "slope_at_large"),
    [
        ("sigmoid", [0.0, sigmoid(-1.0), 0.5, sigmoid(1.0), 1.0], 0.0),
        ("silu", [-0.0, -sigmoid(-1.0), 0.0, sigmoid(1.0), 1e4], 1.0),
        ("gelu", [-0.0, gelu_exact(-1.0), 0.0, gelu_exact(1.0), 1e4], 1.0),
    ],
)
def test_pointwise_values_and_gradients_at_extremes(method, expected, slope_at_large):
    x = Tensor(EXTREMES, requires_grad=True)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        y = getattr(x, method)()
        y.backward(np.ones_like(EXTREMES))
    np.testing.assert_allclose(y.value, expected, rtol=1e-15, atol=1e-300)
    assert np.all(np.isfinite(x.grad))
    assert x.grad[0] == pytest.approx(0.0, abs=1e-300)
    assert x.grad[-1] == pytest.approx(slope_at_large)


@pytest.mark.parametrize("method", ["softmax", "log_softmax"])
def test_softmax_family_at_extremes(method):
    x = Tensor([[1e4, -1e4, 0.0], [1e4, 1e4, -1e4]], requires_grad=True)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        y = getattr(x, method)(axis=-1)
        y.backward(np.ones((2, 3)))
    expected = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    if method == "softmax":
        np.testing.assert_allclose(y.value, expected, atol=1e-300)
    else:
        np.testing.assert_allclose(y.value[0], [0.0, -2e4, -1e4], rtol=1e-15)
        np.testing.assert_allclose(y.value[1], [-math.log(2), -math.log(2), -2e4 - math.log(2)])
    assert np.all(np.isfinite(x.grad))


def test_softmax_rows_sum_to_one_and_ignore_shifts():
    from llm_from_scratch.random import SplitMix64

    z = SplitMix64(5).uniform(-3, 3, (4, 6))
    p = Tensor(z).softmax(-1).value
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(Tensor(z + 123.0).softmax(-1).value, p, rtol=1e-13)
