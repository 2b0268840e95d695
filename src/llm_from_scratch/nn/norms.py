"""Normalization within each token: LayerNorm and RMSNorm, each one fused op on ordinary tokens.

Both read the last axis (the features of one token) and compute their statistics there, so no
token, position or batch example ever influences another. LayerNorm centres and divides by the
root of the *population* variance (divide by D, not D − 1); RMSNorm skips the centring and
divides by the root mean square. Each ends with a learned per-coordinate gain (LayerNorm also a
bias). :func:`standardize` is the statistics step alone, over any axes, so a chapter can contrast
per-token statistics with statistics pooled over a batch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autodiff import Tensor, ops
from ..errors import ArgumentError, ShapeError
from ..validate import as_float_array, as_integer, as_width, element_count
from .module import Module, Parameter, as_tensor, check_feature_axis, check_name

LAYERNORM_EPS = 1e-5  # LayerNorm's and standardize's default ε
RMSNORM_EPS = 1e-6  # RMSNorm's default ε


def default_epsilon(kind: str) -> str:
    """The default ε of the norm named ``kind``, written as its refusals suggest it ("1e-6")."""
    value = RMSNORM_EPS if kind == "RMSNorm" else LAYERNORM_EPS
    mantissa, exponent = f"{value:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def check_epsilon(eps: Any, kind: str) -> float:
    """Validate a normalization epsilon (a finite real ≥ 0) and return it as a float.

    ε = 0 is the textbook formula and is accepted; a token on which it is undefined (a constant
    token for LayerNorm, a zero token for RMSNorm: 0/0) is refused when the forward meets it.
    A refusal suggests the norm's own default ε.
    """
    suggested = default_epsilon(kind)
    if isinstance(eps, bool) or not isinstance(eps, int | float | np.integer | np.floating):
        raise ArgumentError(
            f"{kind} eps must be a real number such as {suggested} (the default); got {eps!r}."
        )
    if not math.isfinite(eps) or eps < 0:
        raise ArgumentError(
            f"{kind} eps must be finite and at least 0 (it is added to a mean square); "
            f"got {eps!r}. Use a small positive value such as {suggested} (the default)."
        )
    return float(eps)


def _check_width(width: Any, kind: str) -> int:
    width = as_width(width, f"{kind} width", unit="feature")
    element_count((width,), f"{kind}({width}) gain")
    return width


def _vector(value: Any, width: int | None, label: str, kind: str) -> np.ndarray:
    """A rank-1 float64 copy of ``value``, of length ``width`` when given."""
    array = as_float_array(value, f"{kind} {label}", finite=True, error=ShapeError)
    if array.ndim != 1 or array.shape[0] == 0:
        raise ShapeError(
            f"{kind} {label} must be a non-empty rank-1 vector, [width]; got shape {array.shape}."
        )
    if width is not None and array.shape[0] != width:
        raise ShapeError(
            f"{kind} {label} must have the same width as the gain, {width}; "
            f"got shape {array.shape}."
        )
    return array


# --- stable statistics over the whole float64 range ----------------------------------------------
#
# Squaring a token of magnitude 1e160 overflows, and squaring one of 1e-200 underflows. Both norms
# obey exact identities for any constant shift a (LayerNorm only) and scale s > 0 per token:
#
#     LN_ε(x) = LN_{ε/s²}((x − a) / s),        RMS_ε(x) = RMS_{ε/s²}(x / s).
#
# They hold for every x with (a, s) fixed, so differentiating the right side with a and s held
# constant gives the exact Jacobian of the left side. A token outside [2⁻²⁵⁶, 2²⁵⁶] is shifted by
# its midpoint (LayerNorm) and divided by a power of two near its peak (exact in binary), so its
# statistics are of order one; every other token keeps a = 0, s = 1 and its exact old arithmetic.

_HIGH = 2.0**256  # a token peak above this may overflow when squared and summed
_LOW = 2.0**-256  # below this, squares may underflow
_EPS_NEGLIGIBLE = 2.0**-400  # an ε at least this large swamps the statistics of a tiny token


def _axes(axis: int | tuple[int, ...]) -> int | tuple[int, ...]:
    return axis if isinstance(axis, int) else tuple(axis)


def _stable_plan(
    values: np.ndarray, axis: int | tuple[int, ...], eps: float, centre: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per-token (shift a, power-of-two scale s, ε/s²), or None when no token needs them."""
    if values.size == 0:
        return None
    peak = max(float(values.max()), -float(values.min()))
    if peak <= _HIGH and (eps >= _EPS_NEGLIGIBLE or peak >= _LOW or peak == 0.0):
        return None  # the usual case: nothing to rescale, the old arithmetic bit for bit
    with np.errstate(over="ignore", under="ignore"):
        high = np.max(values, axis=axis, keepdims=True)
        low = np.min(values, axis=axis, keepdims=True)
        magnitude = np.maximum(high, -low)  # (..., 1) per-token peak
        shift = high / 2 + low / 2 if centre else np.zeros_like(high)
        moved = np.max(np.abs(values - shift), axis=axis, keepdims=True)
        exponent = np.frexp(moved)[1] - 1  # moved / 2^exponent ∈ [1, 2)
        scale = np.ldexp(1.0, exponent)
        scaled_eps = eps / scale / scale
        huge = magnitude > _HIGH
        tiny = (magnitude < _LOW) & (moved > 0) & np.isfinite(scaled_eps)
    use = huge | tiny
    if not use.any():
        return None
    shift = np.where(use, shift, 0.0)
    scale = np.where(use & (moved > 0), scale, 1.0)
    scaled_eps = np.where(use & (moved > 0), scaled_eps, eps)
    return shift, scale, scaled_eps


def _refuse_undefined(values: np.ndarray, axis: Any, eps: float, kind: str, centre: bool) -> None:
    """With ε = 0, a constant token (LayerNorm) or zero token (RMSNorm) is 0/0: refuse it."""
    if eps != 0.0 or values.size == 0:
        return
    high = np.max(values, axis=axis)
    low = np.min(values, axis=axis)
    bad = (high == low) if centre else (high == 0) & (low == 0)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        what = "constant, so its variance is 0" if centre else "zero, so its mean square is 0"
        raise ArgumentError(
            f"{kind} with eps=0 is undefined on a token that is {what} and the result is 0/0; "
            f"the token at index {where} is {float(high[where])!r} throughout. Use a positive "
            f"eps such as {default_epsilon(kind)} (the default)."
        )


def _prepared(x: Tensor, axis: Any, eps: float, kind: str, centre: bool) -> tuple[Tensor, Any]:
    """(x, ε) or, for tokens outside the safe range, ((x − a) / s, ε / s²) per token."""
    _refuse_undefined(x.value, axis, eps, kind, centre)
    plan = _stable_plan(x.value, axis, eps, centre)
    if plan is None:
        return x, eps
    shift, scale, scaled_eps = plan
    moved = x - shift if centre else x
    return moved / scale, scaled_eps  # (..., D), (..., 1) constants: no gradient, exact Jacobian


def standardize(x: Any, axis: int | tuple[int, ...] = -1, eps: float = LAYERNORM_EPS) -> Tensor:
    """(x − mean) / √(var + ε) with mean and population variance taken over ``axis``."""
    x = as_tensor(x, "standardize input")
    eps = check_epsilon(eps, "standardize")
    return _standardized(x, _check_axis(axis, x.ndim), eps, "standardize")


def _standardized(x: Tensor, axis: int | tuple[int, ...], eps: float, kind: str) -> Tensor:
    """The chain (x − μ) / √(σ² + ε) on checked arguments, rescaled where needed."""
    x, eps_used = _prepared(x, axis, eps, kind, centre=True)
    centred = x - x.mean(axis=axis, keepdims=True)
    variance = (centred * centred).mean(axis=axis, keepdims=True)  # divide by the count
    return centred / (variance + eps_used).sqrt()


def _check_axis(axis: Any, ndim: int) -> int | tuple[int, ...]:
    """An axis or a tuple of distinct axes of an ndim-dimensional input, as given."""
    axes = (axis,) if not isinstance(axis, tuple | list) else tuple(axis)
    for a in axes:
        as_integer(a, "standardize axis")
    normal = [int(a) + ndim if int(a) < 0 else int(a) for a in axes]
    if not axes or any(not 0 <= a < ndim for a in normal) or len(set(normal)) != len(normal):
        raise ArgumentError(
            f"standardize axis must name distinct axes of an input of rank {ndim}; got {axis!r}."
        )
    return int(axis) if not isinstance(axis, tuple | list) else tuple(int(a) for a in axes)


class _TokenNorm(Module):
    """Shared checks for norms that read the last axis of width ``width``."""

    width: int
    eps: float

    def check_input(self, x: Tensor) -> None:
        """Raise unless x has rank ≥ 1 and its last axis is ``width``."""
        if x.ndim and x.shape[-1] == self.width:
            return  # the common case, decided before any message is built
        kind = type(self).__name__
        check_feature_axis(
            x,
            self.width,
            f"{kind}({self.width})",
            f"{kind}({self.width}) normalizes the feature axis of each token; got a rank-0 "
            f"value. Pass a vector of shape ({self.width},) or a batch (..., {self.width}).",
        )


class LayerNorm(_TokenNorm):
    """LN(x) = γ ⊙ (x − μ) / √(σ² + ε) + β per token; μ, σ² over the D features, σ² = Σ/D."""

    def __init__(self, width: int, eps: float = LAYERNORM_EPS, *, name: str = "norm") -> None:
        width = _check_width(width, "LayerNorm")
        eps = check_epsilon(eps, "LayerNorm")
        check_name(name, "LayerNorm")
        self._build(np.ones(width), np.zeros(width), eps, name)

    @classmethod
    def from_parameters(
        cls, gain: Any, bias: Any, *, eps: float = LAYERNORM_EPS, name: str = "norm"
    ) -> LayerNorm:
        """A LayerNorm holding exactly this gain γ and bias β (both [width])."""
        g = _vector(gain, None, "gain", "LayerNorm")
        b = _vector(bias, g.shape[0], "bias", "LayerNorm")
        eps = check_epsilon(eps, "LayerNorm")
        return cls._assemble(g, b, eps, check_name(name, "LayerNorm"))

    def _build(self, gain: np.ndarray, bias: np.ndarray, eps: float, name: str) -> None:
        Module.__init__(self, name)
        self.width = int(gain.shape[0])
        self.eps = eps
        self.gain = Parameter(gain, f"{name}.gain")
        self.bias = Parameter(bias, f"{name}.bias")

    def __repr__(self) -> str:
        return f"LayerNorm({self.width}, eps={self.eps:g}, name={self.name!r})"

    def forward(self, x: Any) -> Tensor:
        """Standardize each token's features, then scale by γ and shift by β."""
        x = as_tensor(x, "LayerNorm input")
        self.check_input(x)  # (..., D)
        _refuse_undefined(x.value, -1, self.eps, "LayerNorm", centre=True)
        if _stable_plan(x.value, -1, self.eps, centre=True) is None:
            # One recorded op: the chain (x − μ) / √(σ² + ε) ⊙ γ + β, value for value, whose
            # gradient is derived in closed form (tests/autodiff/test_composite_ops.py).
            return ops.layer_norm(x, self.gain, self.bias, eps=self.eps)  # (..., D)
        # Tokens outside [2⁻²⁵⁶, 2²⁵⁶]: the rescaled chain, LN_ε(x) = LN_{ε/s²}((x − a) / s).
        return _standardized(x, -1, self.eps, "LayerNorm") * self.gain + self.bias  # (..., D)


class RMSNorm(_TokenNorm):
    """RMSNorm(x) = γ ⊙ x / √(mean_j x_j² + ε) per token: no centring, no bias."""

    def __init__(self, width: int, eps: float = RMSNORM_EPS, *, name: str = "norm") -> None:
        width = _check_width(width, "RMSNorm")
        eps = check_epsilon(eps, "RMSNorm")
        check_name(name, "RMSNorm")
        self._build(np.ones(width), eps, name)

    @classmethod
    def from_parameters(
        cls, gain: Any, *, eps: float = RMSNORM_EPS, name: str = "norm"
    ) -> RMSNorm:
        """An RMSNorm holding exactly this gain γ ([width])."""
        g = _vector(gain, None, "gain", "RMSNorm")
        eps = check_epsilon(eps, "RMSNorm")
        return cls._assemble(g, eps, check_name(name, "RMSNorm"))

    def _build(self, gain: np.ndarray, eps: float, name: str) -> None:
        Module.__init__(self, name)
        self.width = int(gain.shape[0])
        self.eps = eps
        self.gain = Parameter(gain, f"{name}.gain")

    def __repr__(self) -> str:
        return f"RMSNorm({self.width}, eps={self.eps:g}, name={self.name!r})"

    def forward(self, x: Any) -> Tensor:
        """Divide each token by its root mean square, then scale by γ."""
        x = as_tensor(x, "RMSNorm input")
        self.check_input(x)  # (..., D)
        _refuse_undefined(x.value, -1, self.eps, "RMSNorm", centre=False)
        plan = _stable_plan(x.value, -1, self.eps, centre=False)
        if plan is None:
            # One recorded op: the chain x / √(mean(x ⊙ x) + ε) ⊙ γ, value for value, whose
            # gradient is derived in closed form (tests/autodiff/test_composite_ops.py).
            return ops.rms_norm(x, self.gain, eps=self.eps)  # (..., D)
        _, scale, scaled_eps = plan  # tokens outside [2⁻²⁵⁶, 2²⁵⁶]: RMS_ε(x) = RMS_{ε/s²}(x/s)
        u = x / scale  # (..., D), each token's peak in [1, 2)
        root = ((u * u).mean(axis=-1, keepdims=True) + scaled_eps).sqrt()  # (..., 1)
        return u / root * self.gain  # (..., D)
