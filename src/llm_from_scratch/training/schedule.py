"""The learning rate as a pure function of the step: linear warm-up, then cosine decay."""

from __future__ import annotations

import math

from ..errors import ArgumentError
from ..validate import as_real, non_negative_int, positive_int


def warmup_cosine_lr(
    step: int, *, peak_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0
) -> float:
    """η(s) = η_max (s+1)/W for s < W, else η_min + ½(η_max − η_min)(1 + cos π·(s−W)/(S−W))."""
    step = non_negative_int(step, "step")
    warmup_steps = non_negative_int(warmup_steps, "warmup_steps")
    total_steps = positive_int(total_steps, "total_steps")
    if warmup_steps > total_steps:
        raise ArgumentError(
            f"warmup_steps ({warmup_steps}) cannot exceed total_steps ({total_steps})."
        )
    peak_lr = as_real(peak_lr, "peak_lr", minimum=0)
    min_lr = as_real(min_lr, "min_lr", minimum=0)
    if min_lr > peak_lr:
        raise ArgumentError(f"min_lr ({min_lr}) cannot exceed peak_lr ({peak_lr}).")
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    if step >= total_steps:
        return float(min_lr)
    decay_steps = total_steps - warmup_steps
    progress = (step - warmup_steps) / decay_steps  # in [0, 1)
    return min_lr + 0.5 * (peak_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
