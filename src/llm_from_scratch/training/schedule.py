"""The learning rate as a pure function of the step: linear warm-up, then cosine decay."""

from __future__ import annotations

import math

from ..errors import ArgumentError


def warmup_cosine_lr(
    step: int, *, peak_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0
) -> float:
    """η(s) = η_max (s+1)/W for s < W, else η_min + ½(η_max − η_min)(1 + cos π·(s−W)/(S−W))."""
    for label, value in (("step", step), ("warmup_steps", warmup_steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentError(f"{label} must be an integer ≥ 0; got {value!r}.")
    if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
        raise ArgumentError(f"total_steps must be a positive integer; got {total_steps!r}.")
    if warmup_steps > total_steps:
        raise ArgumentError(
            f"warmup_steps ({warmup_steps}) cannot exceed total_steps ({total_steps})."
        )
    for label, value in (("peak_lr", peak_lr), ("min_lr", min_lr)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ArgumentError(f"{label} must be a real number; got {value!r}.")
        if not math.isfinite(value) or value < 0:
            raise ArgumentError(f"{label} must be finite and ≥ 0; got {value!r}.")
    if min_lr > peak_lr:
        raise ArgumentError(f"min_lr ({min_lr}) cannot exceed peak_lr ({peak_lr}).")
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    if step >= total_steps:
        return float(min_lr)
    decay_steps = total_steps - warmup_steps
    progress = (step - warmup_steps) / decay_steps  # in [0, 1)
    return min_lr + 0.5 * (peak_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
