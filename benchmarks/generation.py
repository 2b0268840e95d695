"""Generating 256 tokens from the Chapter 10 model, with and without the KV cache.

``python -m benchmarks.generation`` (``--quick`` for fewer repeats) loads the stored book-prose
run (``book/runs/book-prose/``, via ``training.runs.load_run``) when its ``model.npz`` exists,
and otherwise builds the same configuration with random weights (the work per token is the
same; the text is not). It checks that both ways generate the same tokens, times whole
generations (median of the repeats, the two contenders alternating), times every cached step
to show the per-token time against the position, and writes
``benchmarks/results/generation.json``. Speed is measured here, never by timed tests.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

# One BLAS thread: set in benchmarks/__init__.py, before numpy loads.
import numpy as np

from llm_from_scratch.autodiff import no_grad
from llm_from_scratch.generation import KVCache, decode_step, generate, prefill
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training.config import TrainConfig
from llm_from_scratch.training.loop import build_model

from .machine import machine_line, run_fields
from .timing import store

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "book" / "runs" / "book-prose"
NEW_TOKENS = 256
PROMPT_LENGTH = 16
TARGET_SPEEDUP = 5.0
BINS = 8  # per-token times reported in 8 bins of 32 positions


def load_model() -> tuple[Decoder, str]:
    """The stored book-prose model, or its configuration with random weights."""
    if (RUN / "model.npz").is_file():
        from llm_from_scratch.training.runs import load_run

        run = load_run(RUN)
        return run.model, f"stored run {RUN.relative_to(ROOT)} (step {run.step})"
    config = TrainConfig.from_json(RUN / "config.json")
    vocab = 96  # about the book's character count; the stored run reports its own
    model = build_model(config, vocab, SplitMix64(config.seed))
    return model, f"random weights, config of {RUN.relative_to(ROOT)} (V = {vocab})"


def prompt(model: Decoder) -> list[list[int]]:
    rng = SplitMix64(2026)
    ids = rng.u64_array(PROMPT_LENGTH) % np.uint64(model.vocab_size)
    return [ids.astype(np.int64).tolist()]


def run_generation(model: Decoder, use_cache: bool) -> list[int]:
    out = generate(
        model,
        prompt(model),
        max_new_tokens=NEW_TOKENS,
        rng=SplitMix64(0),
        temperature=0.8,
        use_cache=use_cache,
    )
    return out.new_tokens[0].tolist()


def per_step_seconds(model: Decoder, use_cache: bool) -> list[float]:
    """Seconds of each of the 256 steps (greedy token fed back), cached or recomputed."""
    ids = np.array(prompt(model))
    times = []
    with no_grad():
        if use_cache:
            cache = KVCache(model, 1, PROMPT_LENGTH + NEW_TOKENS)
            start = time.perf_counter()
            logits = prefill(model, cache, ids).value[:, -1]
            times.append(time.perf_counter() - start)
            for step in range(1, NEW_TOKENS):
                token = np.argmax(logits, axis=-1)
                start = time.perf_counter()
                logits = decode_step(model, cache, token, [PROMPT_LENGTH + step - 1]).value
                times.append(time.perf_counter() - start)
        else:
            for _ in range(NEW_TOKENS):
                start = time.perf_counter()
                logits = model(ids).value[:, -1]
                times.append(time.perf_counter() - start)
                ids = np.concatenate([ids, np.argmax(logits, axis=-1)[:, None]], axis=1)
    return times


def binned(times: list[float]) -> list[float]:
    """Median seconds per token in BINS equal runs of positions."""
    width = len(times) // BINS
    return [statistics.median(times[i * width : (i + 1) * width]) for i in range(BINS)]


def measure(repeats: int) -> dict:
    load_before = os.getloadavg()[0]  # a busy machine slows both contenders, unevenly
    model, source = load_model()
    cached_tokens = run_generation(model, True)
    uncached_tokens = run_generation(model, False)
    totals: dict[str, list[float]] = {"cached": [], "uncached": []}
    for _ in range(repeats):  # alternate the contenders: drift spreads over both
        for label, flag in (("cached", True), ("uncached", False)):
            start = time.perf_counter()
            run_generation(model, flag)
            totals[label].append(time.perf_counter() - start)
    steps = {label: [] for label in totals}
    for _ in range(repeats):
        for label, flag in (("cached", True), ("uncached", False)):
            steps[label].append(per_step_seconds(model, flag))
    per_position = {
        label: [statistics.median(s[i] for s in runs) for i in range(NEW_TOKENS)]
        for label, runs in steps.items()
    }
    cached_s = statistics.median(totals["cached"])
    uncached_s = statistics.median(totals["uncached"])
    decode_bins = binned(per_position["cached"][1:] + per_position["cached"][-1:])
    return {
        **run_fields(),
        "repeats": repeats,
        "load_average": [load_before, os.getloadavg()[0]],  # 1-minute, before and after
        "model": source,
        "model_shape": {
            "vocab_size": model.vocab_size,
            "model_width": model.model_width,
            "num_layers": len(model.blocks),
            "num_heads": model.blocks[0].num_heads,
        },
        "prompt_length": PROMPT_LENGTH,
        "new_tokens": NEW_TOKENS,
        "same_tokens": cached_tokens == uncached_tokens,
        "cached_s": cached_s,
        "uncached_s": uncached_s,
        "speedup": uncached_s / cached_s,
        "target_speedup": TARGET_SPEEDUP,
        "bin_positions": [
            [
                PROMPT_LENGTH + i * (NEW_TOKENS // BINS),
                PROMPT_LENGTH + (i + 1) * (NEW_TOKENS // BINS),
            ]
            for i in range(BINS)
        ],
        "cached_step_s_by_bin": decode_bins,
        "uncached_step_s_by_bin": binned(per_position["uncached"]),
        "cached_last_over_first_bin": decode_bins[-1] / decode_bins[0],
        "cached_step_s": per_position["cached"],
        "uncached_step_s": per_position["uncached"],
    }


def render(report: dict) -> str:
    lines = [
        f"Generation benchmark ({report['date']}, Python {report['python']}, numpy "
        f"{report['numpy']}, median of {report['repeats']}, load average "
        f"{report['load_average'][0]:.1f} → {report['load_average'][1]:.1f})",
        machine_line(report),
        f"model: {report['model']}",
        f"{report['new_tokens']} new tokens after a {report['prompt_length']}-token prompt, "
        f"same tokens both ways: {report['same_tokens']}",
        f"uncached {report['uncached_s']:.3f} s, cached {report['cached_s']:.3f} s: "
        f"speed-up {report['speedup']:.1f}× (target ≥ {report['target_speedup']:.0f}×, "
        f"{'ok' if report['speedup'] >= report['target_speedup'] else 'missed'})",
        "per-token time by position (ms): positions, cached, uncached",
    ]
    for (lo, hi), c, u in zip(
        report["bin_positions"],
        report["cached_step_s_by_bin"],
        report["uncached_step_s_by_bin"],
        strict=True,
    ):
        lines.append(f"  {lo:4d}–{hi - 1:<4d} {c * 1e3:8.3f} {u * 1e3:8.3f}")
    lines.append(
        f"cached per-token time, last bin / first bin: {report['cached_last_over_first_bin']:.2f}"
    )
    return "\n".join(lines)


def main() -> None:
    repeats = 3 if "--quick" in sys.argv else 7
    report = measure(repeats)
    text = render(report)
    store(report, text, "generation.json")


if __name__ == "__main__":
    main()
