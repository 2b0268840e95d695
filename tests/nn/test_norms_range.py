"""LayerNorm, RMSNorm and standardize over the whole float64 range, with warnings as errors.

References are the closed forms evaluated in numpy's long double (x86-64: 64-bit mantissa,
exponent range to 1e4932, so 1e160² neither overflows nor loses digits), independent of the
package's per-token rescaling.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck
from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.nn import LayerNorm, RMSNorm, standardize
from llm_from_scratch.random import SplitMix64

LONG = np.longdouble
pytestmark = pytest.mark.skipif(
    np.finfo(LONG).maxexp <= 1024, reason="long double is float64 on this platform"
)

BASE = SplitMix64(41).uniform(-2.0, 2.0, (3, 5))  # (3, 5): three tokens of width five
UPSTREAM = SplitMix64(42).uniform(-1.0, 1.0, (3, 5))
GAIN = SplitMix64(43).uniform(0.5, 1.5, (5,))
BIAS = SplitMix64(44).uniform(-1.0, 1.0, (5,))


def ln_reference(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(LN(x) ⊙ γ + β, gᵀJ) in long double: J_ij = γ_i[(δ_ij − 1/D)/r − c_i c_j/(D r³)]."""
    x, g = x.astype(LONG), (UPSTREAM * GAIN).astype(LONG)
    width = x.shape[-1]
    c = x - x.mean(axis=-1, keepdims=True)
    r = np.sqrt((c * c).mean(axis=-1, keepdims=True) + LONG(eps))
    out = c / r * GAIN.astype(LONG) + BIAS.astype(LONG)
    grad = (g - g.mean(axis=-1, keepdims=True)) / r
    grad -= c * (g * c).sum(axis=-1, keepdims=True) / (width * r**3)
    return out, grad


def rms_reference(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(γ ⊙ x / r, gᵀJ) in long double: J_ij = γ_i[δ_ij / r − x_i x_j / (D r³)]."""
    x, g = x.astype(LONG), (UPSTREAM * GAIN).astype(LONG)
    width = x.shape[-1]
    r = np.sqrt((x * x).mean(axis=-1, keepdims=True) + LONG(eps))
    grad = g / r - x * (g * x).sum(axis=-1, keepdims=True) / (width * r**3)
    return x / r * GAIN.astype(LONG), grad


def run(norm: LayerNorm | RMSNorm, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = Tensor(x, requires_grad=True)
    y = norm(t)
    (y * Tensor(UPSTREAM[: x.shape[0]])).sum().backward()
    return y.value, t.grad


def close(actual: np.ndarray, reference: np.ndarray, rtol: float = 1e-13) -> None:
    reference = reference.astype(np.float64)
    bound = rtol * np.abs(reference).max(axis=-1, keepdims=True) + 1e-300  # (..., 1) per token
    error = np.abs(actual - reference)
    assert (error <= bound).all(), f"max error {error.max():.3g}, bound {bound.min():.3g}"


MAGNITUDES = [1e160, -1e160, 1e300, 1.5e308 / 2.5, 1e-200, 1e-300]


@pytest.mark.parametrize("magnitude", [*MAGNITUDES, 1e-310])  # 1e-310: subnormal entries
@pytest.mark.parametrize("eps", [1e-5])
def test_layernorm_with_eps_across_the_range(magnitude: float, eps: float) -> None:
    x = BASE * magnitude
    value, grad = run(LayerNorm.from_parameters(GAIN, BIAS, eps=eps), x)
    out, reference_grad = ln_reference(x, eps)
    close(value, out)
    close(grad, reference_grad)


@pytest.mark.parametrize("magnitude", MAGNITUDES)  # with ε = 0 the Jacobian is ~1/|x|: finite
@pytest.mark.parametrize("eps", [0.0])
def test_layernorm_value_and_gradient_across_the_range(magnitude: float, eps: float) -> None:
    x = BASE * magnitude
    norm = LayerNorm.from_parameters(GAIN, BIAS, eps=eps)
    value, grad = run(norm, x)
    out, reference_grad = ln_reference(x, eps)
    close(value, out)
    close(grad, reference_grad)


@pytest.mark.parametrize("magnitude", MAGNITUDES)
@pytest.mark.parametrize("eps", [1e-6, 0.0])
def test_rmsnorm_value_and_gradient_across_the_range(magnitude: float, eps: float) -> None:
    x = BASE * magnitude
    value, grad = run(RMSNorm.from_parameters(GAIN, eps=eps), x)
    out, reference_grad = rms_reference(x, eps)
    close(value, out)
    close(grad, reference_grad)


def test_huge_eps_on_huge_tokens_is_kept_exactly() -> None:
    # ε comparable to σ²: the rescaled ε/s² must carry it, not drop it.
    x = BASE * 1e150
    eps = float(np.var(BASE[0]) * 1e300)
    value, grad = run(LayerNorm.from_parameters(GAIN, BIAS, eps=eps), x)
    out, reference_grad = ln_reference(x, eps)
    close(value, out)
    close(grad, reference_grad)
    value, grad = run(RMSNorm.from_parameters(GAIN, eps=eps), x)
    out, reference_grad = rms_reference(x, eps)
    close(value, out)
    close(grad, reference_grad)


def test_constant_huge_token_gives_the_bias_and_the_closed_form_gradient() -> None:
    # LN_ε of a constant token is β; its Jacobian is γ (I − 11ᵀ/D) / √ε, finite.
    x = np.full((1, 5), 1e300)
    value, grad = run(LayerNorm.from_parameters(GAIN, BIAS, eps=1e-4), x)
    np.testing.assert_array_equal(value, BIAS[None, :])
    g = UPSTREAM[:1] * GAIN
    np.testing.assert_allclose(grad, (g - g.mean()) / np.sqrt(1e-4), rtol=1e-13)


def test_a_moderate_token_beside_a_huge_one_keeps_its_arithmetic_bit_for_bit() -> None:
    mixed = BASE.copy()
    mixed[1] *= 1e200
    for norm in (LayerNorm.from_parameters(GAIN, BIAS), RMSNorm.from_parameters(GAIN)):
        alone = norm(BASE[[0, 2]]).value
        together = norm(mixed).value
        np.testing.assert_array_equal(together[[0, 2]], alone)


@pytest.mark.parametrize("scale", [1e160, 1e-200])
def test_rescaled_paths_pass_gradcheck(scale: float) -> None:
    # f(x) = N(scale · x): the norm sees extreme tokens, the check moderate inputs (∂f/∂x is O(1)).
    x = BASE[:2]
    for kind in ("layer", "rms"):
        eps = 0.0 if scale < 1 else 1e-5

        def fn(x_: Tensor, g_: Tensor, kind: str = kind, eps: float = eps) -> Tensor:
            norm = LayerNorm(5, eps=eps) if kind == "layer" else RMSNorm(5, eps=eps)
            norm.gain = g_
            return norm.forward(x_ * scale)

        result = gradcheck(fn, [x, GAIN], atol=1e-6, name=f"{kind} at scale {scale:g}")
        assert result.passed, result.message


def test_standardize_over_batch_axes_at_huge_magnitude() -> None:
    x = BASE * 1e200
    y = standardize(x, axis=(0, 1), eps=1e-5).value
    ref = x.astype(LONG)
    c = ref - ref.mean()
    close(y.reshape(1, -1), (c / np.sqrt((c * c).mean() + LONG(1e-5))).reshape(1, -1))


@pytest.mark.parametrize(
    ("norm", "token", "fragment"),
    [
        (LayerNorm(3, eps=0.0), [2.5, 2.5, 2.5], "constant, so its variance is 0"),
        (LayerNorm(3, eps=0.0), [1e300, 1e300, 1e300], "constant, so its variance is 0"),
        (RMSNorm(3, eps=0.0), [0.0, 0.0, 0.0], "zero, so its mean square is 0"),
    ],
)
def test_eps_zero_refuses_the_undefined_token(norm, token, fragment) -> None:
    x = np.array([[1.0, 2.0, 4.0], token])
    with pytest.raises(ArgumentError) as info:
        norm(x)
    message = str(info.value)
    suggested = {"LayerNorm": "1e-5", "RMSNorm": "1e-6"}[type(norm).__name__]  # the defaults
    assert f"such as {suggested} (the default)" in message
    assert fragment in message and "index (1,)" in message
    assert "0/0" in message


def test_eps_zero_refusal_in_standardize() -> None:
    with pytest.raises(ArgumentError, match=r"^standardize with eps=0 is undefined"):
        standardize(np.ones((2, 3)), axis=-1, eps=0.0)
