"""Median timings: warm up, pick a loop count near a target duration, report the median."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeats: int = 9, target: float = 0.05) -> float:
    """Median over ``repeats`` runs of the per-call time of ``fn`` (after one warm-up)."""
    fn()
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        if time.perf_counter() - start >= target / 4 or loops >= 1 << 20:
            break
        loops *= 2
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - start) / loops)
    return statistics.median(samples)


def fmt_time(seconds: float) -> str:
    """Seconds in the unit that keeps three significant figures readable."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"
