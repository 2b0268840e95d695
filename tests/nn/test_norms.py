"""LayerNorm, RMSNorm and standardize: seed facts T6, gradient checks, properties, errors."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, gradcheck
from llm_from_scratch.errors import (
    ArgumentError,
    ParameterError,
    RankError,
    ShapeError,
    WidthError,
)
from llm_from_scratch.nn import LayerNorm, RMSNorm, standardize
from llm_from_scratch.random import SplitMix64

TOL = 5e-7


def draw(seed: int, shape: tuple[int, ...], low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return SplitMix64(seed).uniform(low, high, shape)


# --- T6: the seed's worked values ---------------------------------------------------------------


def test_layernorm_uses_population_variance_of_2_4_and_1_3() -> None:
    """Seed fact T6: LayerNorm of (2, 4), (1, 3) uses population variance 1: (−1, 1)/√(1 + ε)."""
    x = np.array([[2.0, 4.0], [1.0, 3.0]])
    # The seed: mean 3 (and 2), population variance 1, output (−1, 1) / √(1 + ε).
    assert x.mean(axis=-1).tolist() == [3.0, 2.0]
    assert ((x - x.mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1).tolist() == [1.0, 1.0]
    exact = LayerNorm(2, eps=0.0)(x).value
    np.testing.assert_allclose(exact, [[-1.0, 1.0], [-1.0, 1.0]], atol=TOL, rtol=0)
    default = LayerNorm(2)(x).value
    np.testing.assert_allclose(default, [[-1.0, 1.0], [-1.0, 1.0]], atol=1e-5, rtol=0)
    np.testing.assert_allclose(default, np.array([[-1.0, 1.0]] * 2) / math.sqrt(1 + 1e-5))


def test_rmsnorm_of_3_4() -> None:
    """Seed fact T6: RMSNorm of (3, 4) divides by the root mean square √12.5."""
    x = np.array([3.0, 4.0])
    assert (x * x).mean() == 12.5
    assert math.sqrt(12.5) == pytest.approx(3.535534, abs=TOL)
    y = RMSNorm(2, eps=0.0)(x).value
    np.testing.assert_allclose(y, [0.848528, 1.131371], atol=TOL, rtol=0)
    # The default ε = 1e-6 moves the result below the seed's six decimals only.
    y_default = RMSNorm(2)(x).value
    np.testing.assert_allclose(y_default, x / math.sqrt(12.5 + 1e-6), rtol=1e-15)
    assert np.all(y_default < y)
    np.testing.assert_allclose(y_default, [0.848528, 1.131371], atol=TOL, rtol=0)


def test_post_norm_centres_residual_sum_1_3() -> None:
    """Seed fact T6: post-norm LayerNorm of the residual sum (1, 3) centres it to (−1, 1)."""
    centred = standardize(np.array([1.0, 3.0]), eps=0.0).value
    np.testing.assert_allclose(centred, [-1.0, 1.0], atol=TOL, rtol=0)


def test_defaults_and_named_parameters() -> None:
    ln = LayerNorm(3)
    assert ln.eps == 1e-5
    assert [n for n, _ in ln.named_parameters()] == ["norm.gain", "norm.bias"]
    np.testing.assert_array_equal(ln.gain.value, np.ones(3))
    np.testing.assert_array_equal(ln.bias.value, np.zeros(3))
    assert ln.parameter_count == 6
    rms = RMSNorm(3, name="final_norm")
    assert rms.eps == 1e-6
    assert [n for n, _ in rms.named_parameters()] == ["final_norm.gain"]
    np.testing.assert_array_equal(rms.gain.value, np.ones(3))
    assert repr(ln) == "LayerNorm(3, eps=1e-05, name='norm')"
    assert repr(rms) == "RMSNorm(3, eps=1e-06, name='final_norm')"


def test_from_parameters_holds_exact_values_and_copies() -> None:
    gain, bias = np.array([2.0, -1.0]), np.array([0.5, 0.25])
    ln = LayerNorm.from_parameters(gain, bias, eps=0.0)
    gain[0] = 99.0
    np.testing.assert_array_equal(ln.gain.value, [2.0, -1.0])
    y = ln(np.array([2.0, 4.0])).value
    np.testing.assert_allclose(y, [2.0 * -1.0 + 0.5, -1.0 * 1.0 + 0.25], atol=1e-15)
    rms = RMSNorm.from_parameters(Tensor([1.0, 2.0]), eps=0.0)
    np.testing.assert_allclose(
        rms(np.array([3.0, 4.0])).value, [0.848528, 2 * 1.131371], atol=2e-6
    )


# --- the reference: textbook LayerNorm with POPULATION variance --------------------------------


def textbook_layernorm(
    x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float
) -> np.ndarray:
    """Ba et al.'s formula written directly: σ² = mean (x − μ)², divided by D."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).sum(axis=-1, keepdims=True) / x.shape[-1]
    return gain * (x - mu) / np.sqrt(var + eps) + bias


def unbiased_std_layernorm(
    x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float
) -> np.ndarray:
    """The annotated transformer's variant: unbiased std (divide by D − 1), ε added to std."""
    mu = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True, ddof=1)
    return gain * (x - mu) / (std + eps) + bias


@pytest.mark.parametrize("width", [2, 3, 8])
def test_layernorm_matches_textbook_population_formula(width: int) -> None:
    x = draw(1, (2, 3, width), -3.0, 3.0)
    gain, bias = draw(2, (width,), 0.5, 1.5), draw(3, (width,))
    ln = LayerNorm.from_parameters(gain, bias, eps=1e-5)
    expected = textbook_layernorm(x, gain, bias, 1e-5)
    np.testing.assert_allclose(ln(x).value, expected, rtol=1e-12, atol=1e-12)
    # The same check would catch the unbiased-std bug: that variant is not the textbook value.
    buggy = unbiased_std_layernorm(x, gain, bias, 1e-5)
    assert np.max(np.abs(buggy - expected)) > 1e-3


def test_unbiased_std_differs_on_the_seed_fixture() -> None:
    x = np.array([2.0, 4.0])
    one, zero = np.ones(2), np.zeros(2)
    np.testing.assert_allclose(textbook_layernorm(x, one, zero, 0.0), [-1.0, 1.0], atol=TOL)
    # Unbiased std of (2, 4) is √2, so the bug gives ±1/√2 instead of ±1.
    bug = unbiased_std_layernorm(x, one, zero, 0.0)
    np.testing.assert_allclose(bug, [-1 / math.sqrt(2), 1 / math.sqrt(2)], atol=TOL)
    assert np.max(np.abs(LayerNorm(2, eps=0.0)(x).value - bug)) > 0.25


# --- gradient checks: full Jacobians, float64 --------------------------------------------------


def test_layernorm_gradcheck_input_gain_bias() -> None:
    x, gain, bias = draw(4, (2, 3, 4)), draw(5, (4,), 0.5, 1.5), draw(6, (4,))

    def fn(x_: Tensor, g_: Tensor, b_: Tensor) -> Tensor:
        ln = LayerNorm(4)
        ln.gain, ln.bias = g_, b_  # plain tensors: the check differentiates through them
        return ln.forward(x_)

    result = gradcheck(fn, [x, gain, bias], atol=2e-6, name="LayerNorm")
    assert result.passed, result.message


def test_rmsnorm_gradcheck_input_gain() -> None:
    x, gain = draw(7, (2, 3, 4)), draw(8, (4,), 0.5, 1.5)

    def fn(x_: Tensor, g_: Tensor) -> Tensor:
        rms = RMSNorm(4)
        rms.gain = g_
        return rms.forward(x_)

    result = gradcheck(fn, [x, gain], atol=2e-6, name="RMSNorm")
    assert result.passed, result.message


def test_module_parameters_receive_gradients() -> None:
    x = draw(9, (3, 4))
    ln = LayerNorm.from_parameters(draw(10, (4,), 0.5, 1.5), draw(11, (4,)))
    upstream = draw(12, (3, 4))
    ln(x).backward(upstream)
    np.testing.assert_allclose(ln.bias.grad, upstream.sum(axis=0), rtol=1e-12)
    normalized = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln.gain.grad, (upstream * normalized).sum(axis=0), rtol=1e-10)


def test_standardize_gradcheck_over_batch_axes() -> None:
    x = draw(13, (3, 2, 2))
    result = gradcheck(lambda t: standardize(t, axis=(0, 1)), [x], atol=2e-6)
    assert result.passed, result.message


# --- properties ---------------------------------------------------------------------------------

widths = st.integers(min_value=2, max_value=6)
tokens = st.integers(min_value=1, max_value=4)


@given(width=widths, count=tokens, seed=st.integers(0, 10**6))
def test_layernorm_ignores_per_token_shift_and_positive_scale(
    width: int, count: int, seed: int
) -> None:
    x = draw(seed, (count, width), -3.0, 3.0)
    shift = draw(seed + 1, (count, 1), -5.0, 5.0)
    scale = draw(seed + 2, (count, 1), 0.5, 4.0)
    ln = LayerNorm(width, eps=0.0)
    np.testing.assert_allclose(ln(x * scale + shift).value, ln(x).value, atol=1e-9)


@given(width=widths, count=tokens, seed=st.integers(0, 10**6))
def test_rmsnorm_ignores_positive_scale_but_not_shift(width: int, count: int, seed: int) -> None:
    x = draw(seed, (count, width), 0.5, 3.0)  # away from zero: shifting changes direction
    scale = draw(seed + 2, (count, 1), 0.5, 4.0)
    rms = RMSNorm(width, eps=0.0)
    np.testing.assert_allclose(rms(x * scale).value, rms(x).value, atol=1e-12)
    shifted = rms(x + 1.0).value
    assert not np.allclose(shifted, rms(x).value)  # RMSNorm does not centre


def test_negative_scale_flips_both() -> None:
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(LayerNorm(3, eps=0.0)(-x).value, -LayerNorm(3, eps=0.0)(x).value)
    np.testing.assert_allclose(RMSNorm(3, eps=0.0)(-x).value, -RMSNorm(3, eps=0.0)(x).value)


@given(seed=st.integers(0, 10**6))
def test_both_norms_act_per_token(seed: int) -> None:
    x = draw(seed, (2, 3, 4), -2.0, 2.0)
    changed = x.copy()
    changed[1, 2] = draw(seed + 1, (4,), -9.0, 9.0)  # one token of one example
    for norm in (LayerNorm(4), RMSNorm(4)):
        before, after = norm(x).value, norm(changed).value
        keep = np.ones((2, 3), dtype=bool)
        keep[1, 2] = False
        np.testing.assert_array_equal(after[keep], before[keep])


def test_batch_statistics_do_mix_tokens() -> None:
    x = draw(14, (3, 4))
    changed = x.copy()
    changed[2] += 5.0
    pooled_before, pooled_after = standardize(x, axis=0).value, standardize(changed, axis=0).value
    assert not np.allclose(pooled_before[0], pooled_after[0])  # token 0 moved: pooled statistics


def test_layernorm_output_has_zero_mean_and_unit_population_variance() -> None:
    y = LayerNorm(5, eps=0.0)(draw(15, (4, 5), -3.0, 3.0)).value
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, atol=1e-12)


def test_rmsnorm_output_has_unit_root_mean_square() -> None:
    y = RMSNorm(5, eps=0.0)(draw(16, (4, 5), -3.0, 3.0)).value
    np.testing.assert_allclose(np.sqrt((y * y).mean(axis=-1)), 1.0, atol=1e-12)


def test_shapes_pass_through() -> None:
    for shape in [(4,), (2, 4), (2, 3, 4), (0, 4)]:
        assert LayerNorm(4)(np.ones(shape)).shape == shape
        assert RMSNorm(4)(np.ones(shape)).shape == shape


def test_state_dict_round_trip() -> None:
    ln = LayerNorm(2)
    ln.load_state_dict({"norm.gain": [2.0, 3.0], "norm.bias": [1.0, -1.0]})
    np.testing.assert_array_equal(ln.gain.value, [2.0, 3.0])
    with pytest.raises(ParameterError):
        ln.load_state_dict({"norm.gain": [1.0, 1.0]})


# --- errors: type and message -------------------------------------------------------------------


@pytest.mark.parametrize("cls", [LayerNorm, RMSNorm])
def test_width_errors(cls: type) -> None:
    kind = cls.__name__
    with pytest.raises(WidthError, match=rf"^{kind} width must be at least 1 feature; got 0\."):
        cls(0)
    with pytest.raises(
        ArgumentError, match=rf"^{kind} width must be a positive integer; got 2\.5\."
    ):
        cls(2.5)


@pytest.mark.parametrize("cls", [LayerNorm, RMSNorm])
@pytest.mark.parametrize("eps", [-1e-5, float("nan"), float("inf"), "small", True])
def test_epsilon_errors(cls: type, eps: object) -> None:
    with pytest.raises(ArgumentError, match=rf"^{cls.__name__} eps must be"):
        cls(2, eps=eps)


def test_epsilon_message_names_the_fix() -> None:
    with pytest.raises(ArgumentError) as info:
        LayerNorm(2, eps=-1.0)
    assert str(info.value) == (
        "LayerNorm eps must be finite and at least 0 (it is added to a mean square); got -1.0. "
        "Use a small positive value such as 1e-5 (the default)."
    )


@pytest.mark.parametrize("cls", [LayerNorm, RMSNorm])
@pytest.mark.parametrize("eps", [-1.0, "small"])
def test_epsilon_refusal_suggests_the_class_default(cls: type, eps: object) -> None:
    default = inspect.signature(cls).parameters["eps"].default
    text = {1e-5: "1e-5", 1e-6: "1e-6"}[default]
    with pytest.raises(ArgumentError) as info:
        cls(2, eps=eps)
    assert f"such as {text} (the default)" in str(info.value)
    with pytest.raises(ArgumentError) as info:
        cls.from_parameters(*([np.ones(2)] * (2 if cls is LayerNorm else 1)), eps=eps)
    assert f"such as {text} (the default)" in str(info.value)


@pytest.mark.parametrize("cls", [LayerNorm, RMSNorm])
def test_input_errors(cls: type) -> None:
    norm = cls(3)
    kind = cls.__name__
    with pytest.raises(WidthError) as info:
        norm(np.ones((2, 4)))
    assert str(info.value) == f"{kind}(3) expects input whose last axis is 3; got shape (2, 4)."
    with pytest.raises(RankError) as info:
        norm(1.0)
    assert str(info.value) == (
        f"{kind}(3) normalizes the feature axis of each token; got a rank-0 value. "
        "Pass a vector of shape (3,) or a batch (..., 3)."
    )


def test_parameter_shape_errors() -> None:
    with pytest.raises(ShapeError) as info:
        LayerNorm.from_parameters(np.ones((2, 2)), np.zeros(2))
    assert str(info.value) == (
        "LayerNorm gain must be a non-empty rank-1 vector, [width]; got shape (2, 2)."
    )
    with pytest.raises(ShapeError) as info:
        LayerNorm.from_parameters(np.ones(2), np.zeros(3))
    assert str(info.value) == (
        "LayerNorm bias must have the same width as the gain, 2; got shape (3,)."
    )
    with pytest.raises(ShapeError, match=r"^RMSNorm gain must be a non-empty"):
        RMSNorm.from_parameters(np.ones(0))


def test_name_is_checked() -> None:
    with pytest.raises(ArgumentError, match="LayerNorm name must be a non-empty dotted string"):
        LayerNorm(2, name="")
