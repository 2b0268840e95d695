"""Global gradient-norm clipping, as ``torch.nn.utils.clip_grad_norm_``."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..errors import ArgumentError
from ..nn.module import Parameter
from ..validate import as_real


def clip_grad_norm(parameters: Iterable[Parameter], max_norm: float, eps: float = 1e-6) -> float:
    """Returns ‖g‖ = √(Σ_p Σ g_p²); if ‖g‖ > max_norm, every g_p ← g_p · max_norm / (‖g‖ + ε)."""
    max_norm = as_real(max_norm, "clip_grad_norm max_norm", positive=True)
    params = [parameters] if isinstance(parameters, Parameter) else list(parameters)
    for p in params:
        if not isinstance(p, Parameter):
            raise ArgumentError(f"clip_grad_norm takes Parameters; got {type(p).__name__}.")
    grads = [p for p in params if p.grad is not None]
    total = math.sqrt(sum(float(np.vdot(p.grad, p.grad)) for p in grads))
    if not math.isfinite(total):
        raise ArgumentError(
            "clip_grad_norm: the global gradient norm is NaN or inf, so no scale can fix it; "
            "no gradient was changed. Lower the learning rate."
        )
    coefficient = max_norm / (total + eps)
    if coefficient < 1.0:
        for p in grads:
            p.grad = p.grad * coefficient
    return total
