"""Global gradient-norm clipping, as ``torch.nn.utils.clip_grad_norm_``.

The norm is exact over the whole float64 range, as the norms of :mod:`llm_from_scratch.nn.norms`
are: gradients whose largest entry lies in [2⁻²⁵⁶, 2²⁵⁶] (every ordinary case) take the plain
√(Σ g²), bit for bit; outside it every entry is first divided by the power of two s nearest the
largest, so ‖g‖ = s·√(Σ (g/s)²) neither overflows (|g| = 1e200) nor underflows (|g| = 1e-200).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import ArgumentError
from ..nn.module import Parameter
from ..validate import as_float_array, as_real, received

_LOW, _HIGH = 2.0**-256, 2.0**256  # peaks inside: squares and their sum stay normal and finite


def _parameters(parameters: Any) -> list[Parameter]:
    if isinstance(parameters, Parameter):
        return [parameters]
    if isinstance(parameters, str | bytes | Mapping) or not isinstance(parameters, Iterable):
        raise ArgumentError(
            f"clip_grad_norm takes a Parameter or an iterable of Parameters; got "
            f"{received(parameters)}."
        )
    params = list(parameters)
    for p in params:
        if not isinstance(p, Parameter):
            raise ArgumentError(f"clip_grad_norm takes Parameters; got {received(p)}.")
    return params


def _gradient(p: Parameter) -> np.ndarray:
    g = p.grad
    if type(g) is np.ndarray and g.dtype == np.float64:
        return g
    return as_float_array(g, f"clip_grad_norm: the gradient of {p.name!r}")


def global_norm(grads: list[np.ndarray]) -> float:
    """‖g‖ = √(Σ_p Σ g_p²), scaled by a power of two when the largest |g| is outside 2^±256."""
    with np.errstate(over="ignore", invalid="ignore"):
        peak = max((float(np.max(np.abs(g), initial=0.0)) for g in grads), default=0.0)
    if not math.isfinite(peak) or _LOW <= peak <= _HIGH or peak == 0.0:
        with np.errstate(over="ignore", invalid="ignore"):  # NaN or inf is refused by the caller
            return math.sqrt(sum(float(np.vdot(g, g)) for g in grads))
    scale = math.ldexp(1.0, math.frexp(peak)[1] - 1)  # peak / scale ∈ [1, 2)
    total = math.sqrt(sum(float(np.vdot(g / scale, g / scale)) for g in grads))
    return total * scale  # inf (refused by the caller) only when ‖g‖ itself exceeds 1.8e308


def clip_grad_norm(parameters: Iterable[Parameter], max_norm: float, eps: float = 1e-6) -> float:
    """Returns ‖g‖ = √(Σ_p Σ g_p²); if ‖g‖ > max_norm, every g_p ← g_p · max_norm / (‖g‖ + ε)."""
    max_norm = as_real(max_norm, "clip_grad_norm max_norm", positive=True)
    eps = as_real(
        eps,
        "clip_grad_norm eps",
        minimum=0.0,
        fix="eps is a small non-negative number added to the norm (default 1e-6).",
    )
    params = _parameters(parameters)
    grads = [(p, _gradient(p)) for p in params if p.grad is not None]
    total = global_norm([g for _, g in grads])
    if not math.isfinite(total):
        raise ArgumentError(
            f"clip_grad_norm: the global gradient norm is {total} (NaN or inf: a gradient holds "
            "NaN or ±inf, or the norm exceeds float64's 1.8e308), so no scale can fix it; no "
            "gradient was changed. Lower the learning rate."
        )
    denominator = total + eps
    if denominator == 0.0:  # no gradient at all and ε = 0: nothing to clip
        return total
    if math.isinf(denominator):  # both near 1.8e308: halve both, the ratio is the same
        denominator = total * 0.5 + eps * 0.5
        coefficient = (max_norm * 0.5) / denominator
    else:
        coefficient = max_norm / denominator
    if coefficient < 1.0:
        for p, g in grads:
            p.grad = g * coefficient
    return total
