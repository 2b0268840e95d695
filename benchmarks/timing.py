"""Median timings: warm up, pick a loop count near a target duration, report the median."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def store(report: dict, text: str, filename: str) -> None:
    """Print the rendered text and write the report, with it, to benchmarks/results/filename.

    Written beside it first and then renamed over it: a crash mid-write leaves the stored run.
    """
    print(text)
    RESULTS.mkdir(exist_ok=True)
    report["table"] = text
    partial = RESULTS / f"{filename}.partial"
    partial.write_text(json.dumps(report, indent=2) + "\n")
    os.replace(partial, RESULTS / filename)


def _loops_for(
    fn: Callable[[], object], target: float, clock: Callable[[], float] = time.perf_counter
) -> int:
    """A loop count (a power of two) that makes one sample last about ``target / 4``."""
    fn()
    loops = 1
    while True:
        start = clock()
        for _ in range(loops):
            fn()
        if clock() - start >= target / 4 or loops >= 1 << 20:
            return loops
        loops *= 2


def _sample(
    fn: Callable[[], object], loops: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    start = clock()
    for _ in range(loops):
        fn()
    return (clock() - start) / loops


def median_seconds(
    fn: Callable[[], object],
    repeats: int = 9,
    target: float = 0.05,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Median over ``repeats`` runs of the per-call time of ``fn`` (after one warm-up).

    ``clock=time.process_time`` counts only the time the process ran: on a machine other work
    keeps busy it drifts far less than the wall clock (one thread: equal on an idle machine).
    """
    loops = _loops_for(fn, target, clock)
    return statistics.median(_sample(fn, loops, clock) for _ in range(repeats))


def interleaved_samples(
    fns: list[Callable[[], object]], repeats: int = 15, target: float = 0.02
) -> list[list[float]]:
    """Per-call times of each function, one sample per round, the rounds taken in turn (a, b, …,
    a, b, …): samples with the same index come from the same round.

    Sampling the contenders alternately spreads the machine's drift over all of them, which
    matters for microsecond-sized calls on a shared machine.
    """
    loops = [_loops_for(fn, target) for fn in fns]
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, count, bucket in zip(fns, loops, samples, strict=True):
            bucket.append(_sample(fn, count))
    return samples


def interleaved_medians(
    fns: list[Callable[[], object]], repeats: int = 15, target: float = 0.02
) -> list[float]:
    """Median per-call time of each function, their samples taken in turn (a, b, …, a, b, …)."""
    return [statistics.median(bucket) for bucket in interleaved_samples(fns, repeats, target)]


def fmt_time(seconds: float) -> str:
    """Seconds in the unit that keeps three significant figures readable."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


def isolated_seconds(module: str, args: list[str], repeats: int) -> float | None:
    """Run ``python -m module *args repeats`` in a fresh process; it prints one median (JSON)."""
    root = Path(__file__).resolve().parent.parent
    completed = subprocess.run(
        [sys.executable, "-m", module, *args, str(repeats)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])
