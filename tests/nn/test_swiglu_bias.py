"""Optional biases: SwiGLU/GLU with bias=True, and the dense FFN's GELU tanh (GPT-2's MLP)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, WidthError
from llm_from_scratch.nn import GLU, FeedForward, SwiGLU
from llm_from_scratch.random import SplitMix64


def silu(z):
    return z / (1.0 + np.exp(-z))


def test_default_swiglu_stays_bias_free_and_draws_the_same_weights():
    plain = SwiGLU(3, 5, 3, rng=SplitMix64(4))
    biased = SwiGLU(3, 5, 3, bias=True, rng=SplitMix64(4))
    assert all(child.bias is None for child in plain.children())
    assert [n for n, _ in biased.named_parameters()] == [
        "ffn.gate.weight",
        "ffn.gate.bias",
        "ffn.up.weight",
        "ffn.up.bias",
        "ffn.down.weight",
        "ffn.down.bias",
    ]
    for projection in ("gate", "up", "down"):  # biases start at zero, weights drawn alike
        np.testing.assert_array_equal(
            getattr(biased, projection).weight.value, getattr(plain, projection).weight.value
        )
        np.testing.assert_array_equal(getattr(biased, projection).bias.value, 0.0)
    assert repr(biased) == "SwiGLU(3 -> 5 -> 3, affine, name='ffn')"


def test_biased_swiglu_equals_the_closed_form():
    rng = SplitMix64(5)
    x = rng.normal((2, 4, 3))
    wg, wu, wd = rng.normal((3, 5)), rng.normal((3, 5)), rng.normal((5, 2))
    bg, bu, bd = rng.normal((5,)), rng.normal((5,)), rng.normal((2,))
    layer = SwiGLU.from_parameters(wg, wu, wd, gate_bias=bg, up_bias=bu, down_bias=bd)
    expected = (silu(x @ wg + bg) * (x @ wu + bu)) @ wd + bd
    np.testing.assert_allclose(layer(x).value, expected, rtol=1e-12, atol=1e-14)
    glu = GLU.from_parameters(wg, wu, wd, up_bias=bu)
    sig = 1.0 / (1.0 + np.exp(-(x @ wg)))
    np.testing.assert_allclose(glu(x).value, (sig * (x @ wu + bu)) @ wd, rtol=1e-12, atol=1e-14)
    assert repr(glu) == "GLU(3 -> 5 -> 2, biases on up, name='ffn')"


def test_biased_swiglu_gradcheck_in_every_parameter_and_the_input():
    rng = SplitMix64(6)
    layer = SwiGLU(3, 4, 3, bias=True, rng=rng)
    for p in layer.parameters():  # move the zero biases off zero
        p.value = p.value + rng.normal(p.shape) * 0.3
    x = rng.normal((2, 3))
    seed = rng.normal((2, 3))
    result = gradcheck_parameters(lambda: (layer(x) * seed).sum(), layer.parameters())
    assert result.passed, result.message
    inputs = gradcheck(lambda t: layer(t), [x])
    assert inputs.passed, inputs.message


def test_bad_bias_flag_and_bias_shape_are_refused_and_rng_untouched():
    rng = SplitMix64(7)
    with pytest.raises(ArgumentError, match="SwiGLU bias must be True or False"):
        SwiGLU(3, 4, 3, bias=1, rng=rng)
    assert rng.state == SplitMix64(7).state
    with pytest.raises(WidthError, match="SwiGLU down projection: Linear bias width"):
        SwiGLU.from_parameters(
            np.ones((3, 4)), np.ones((3, 4)), np.ones((4, 3)), down_bias=np.ones(4)
        )


C = math.sqrt(2.0 / math.pi)


def test_gpt2_mlp_is_gelu_tanh_with_biases():
    """GPT-2's MLP c_proj(gelu_new(c_fc(x))).

    gelu_new(z) = ½z(1 + tanh u), u = √(2/π)(z + 0.044715z³).
    """
    rng = SplitMix64(8)
    x = rng.normal((2, 3, 4))
    w1, b1, w2, b2 = rng.normal((4, 16)), rng.normal((16,)), rng.normal((16, 4)), rng.normal((4,))
    z = x @ w1 + b1
    expected = (0.5 * z * (1.0 + np.tanh(C * (z + 0.044715 * z**3)))) @ w2 + b2
    ffn = FeedForward.from_parameters(w1, b1, w2, b2, activation="gelu_tanh")
    np.testing.assert_allclose(ffn(x).value, expected, rtol=1e-12, atol=1e-13)
    assert repr(ffn) == "FeedForward(4 -> 16 -> 4, gelu_tanh, affine, name='ffn')"
    exact = FeedForward.from_parameters(w1, b1, w2, b2, activation="gelu")(x).value
    gap = np.abs(ffn(x).value - exact).max()  # |Δφ| ≤ 4.8e-4 per unit, times Σ|W₂| per output
    assert 0 < gap <= 4.8e-4 * np.abs(w2).sum(axis=0).max()


def test_gelu_tanh_ffn_built_bias_free_has_two_weights():
    ffn = FeedForward(4, 8, activation="gelu_tanh", bias=False, rng=SplitMix64(9))
    assert [n for n, _ in ffn.named_parameters()] == ["ffn.up.weight", "ffn.down.weight"]
    x = Tensor(SplitMix64(10).normal((3, 4)))
    result = gradcheck_parameters(lambda: ffn(x).sum(), ffn.parameters())
    assert result.passed, result.message
