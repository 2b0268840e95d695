"""Normalization within each token: LayerNorm (composed from autodiff ops) and RMSNorm (one op).

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
from ..errors import (
    ArgumentError,
    EpsilonError,
    NormParameterShapeError,
    NormWidthError,
)
from .module import Module, Parameter, check_feature_axis, check_name


def check_epsilon(eps: Any, kind: str) -> float:
    """Validate a normalization epsilon (a finite real ≥ 0) and return it as a float."""
    if isinstance(eps, bool) or not isinstance(eps, int | float | np.integer | np.floating):
        raise EpsilonError(f"{kind} eps must be a real number such as 1e-5; got {eps!r}.")
    if not math.isfinite(eps) or eps < 0:
        raise EpsilonError(
            f"{kind} eps must be finite and at least 0 (it is added to a mean square); "
            f"got {eps!r}. Use a small positive value such as 1e-5."
        )
    return float(eps)


def _check_width(width: Any, kind: str) -> int:
    if isinstance(width, bool) or not isinstance(width, int | np.integer):
        raise ArgumentError(f"{kind} width must be an integer; got {width!r}.")
    if width <= 0:
        raise NormWidthError(f"{kind} width must be at least 1 feature; got {width}.")
    return int(width)


def _vector(value: Any, width: int | None, label: str, kind: str) -> np.ndarray:
    """A rank-1 float64 copy of ``value``, of length ``width`` when given."""
    array = np.array(value.value if isinstance(value, Tensor) else value, dtype=np.float64)
    if array.ndim != 1 or array.shape[0] == 0:
        raise NormParameterShapeError(
            f"{kind} {label} must be a non-empty rank-1 vector, [width]; got shape {array.shape}."
        )
    if width is not None and array.shape[0] != width:
        raise NormParameterShapeError(
            f"{kind} {label} must have the same width as the gain, {width}; "
            f"got shape {array.shape}."
        )
    return array


def standardize(x: Any, axis: int | tuple[int, ...] = -1, eps: float = 1e-5) -> Tensor:
    """(x − mean) / √(var + ε) with mean and population variance taken over ``axis``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    eps = check_epsilon(eps, "standardize")
    centred = x - x.mean(axis=axis, keepdims=True)
    variance = (centred * centred).mean(axis=axis, keepdims=True)  # divide by the count
    return centred / (variance + eps).sqrt()


class _TokenNorm(Module):
    """Shared checks for norms that read the last axis of width ``width``."""

    width: int
    eps: float

    def check_input(self, x: Tensor) -> None:
        """Raise unless x has rank ≥ 1 and its last axis is ``width``."""
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

    def __init__(self, width: int, eps: float = 1e-5, *, name: str = "norm") -> None:
        width = _check_width(width, "LayerNorm")
        eps = check_epsilon(eps, "LayerNorm")
        check_name(name, "LayerNorm")
        self._build(np.ones(width), np.zeros(width), eps, name)

    @classmethod
    def from_parameters(
        cls, gain: Any, bias: Any, *, eps: float = 1e-5, name: str = "norm"
    ) -> LayerNorm:
        """A LayerNorm holding exactly this gain γ and bias β (both [width])."""
        g = _vector(gain, None, "gain", "LayerNorm")
        b = _vector(bias, g.shape[0], "bias", "LayerNorm")
        eps = check_epsilon(eps, "LayerNorm")
        layer = cls.__new__(cls)
        layer._build(g, b, eps, check_name(name, "LayerNorm"))
        return layer

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
        x = x if isinstance(x, Tensor) else Tensor(x)
        self.check_input(x)  # (..., D)
        return standardize(x, axis=-1, eps=self.eps) * self.gain + self.bias  # (..., D)


class RMSNorm(_TokenNorm):
    """RMSNorm(x) = γ ⊙ x / √(mean_j x_j² + ε) per token: no centring, no bias."""

    def __init__(self, width: int, eps: float = 1e-6, *, name: str = "norm") -> None:
        width = _check_width(width, "RMSNorm")
        eps = check_epsilon(eps, "RMSNorm")
        check_name(name, "RMSNorm")
        self._build(np.ones(width), eps, name)

    @classmethod
    def from_parameters(cls, gain: Any, *, eps: float = 1e-6, name: str = "norm") -> RMSNorm:
        """An RMSNorm holding exactly this gain γ ([width])."""
        g = _vector(gain, None, "gain", "RMSNorm")
        eps = check_epsilon(eps, "RMSNorm")
        layer = cls.__new__(cls)
        layer._build(g, eps, check_name(name, "RMSNorm"))
        return layer

    def _build(self, gain: np.ndarray, eps: float, name: str) -> None:
        Module.__init__(self, name)
        self.width = int(gain.shape[0])
        self.eps = eps
        self.gain = Parameter(gain, f"{name}.gain")

    def __repr__(self) -> str:
        return f"RMSNorm({self.width}, eps={self.eps:g}, name={self.name!r})"

    def forward(self, x: Any) -> Tensor:
        """Divide each token by its root mean square, then scale by γ."""
        x = x if isinstance(x, Tensor) else Tensor(x)
        self.check_input(x)  # (..., D)
        # One recorded op: the chain x / √(mean(x ⊙ x) + ε) ⊙ γ, value for value, whose
        # gradient is derived in closed form (tests/autodiff/test_composite_ops.py).
        return ops.rms_norm(x, self.gain, eps=self.eps)  # (..., D)
