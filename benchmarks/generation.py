"""Generating 256 tokens from the Chapter 10 model, with and without the KV cache.

``python -m benchmarks.generation`` (``--quick`` for fewer repeats) loads the stored book-prose
run (``book/runs/book-prose/``, via ``training.runs.load_run``) when its ``model.npz`` exists,
and otherwise builds the same configuration with random weights (the work per token is the
same; the text is not). It checks that both ways generate the same tokens, times whole
generations (median of the repeats, the two contenders alternating), times every cached step
to show the per-token time against the position, and writes
``benchmarks/results/generation.json``. Speed is measured here, never by timed tests.

Two more rows, with the stored run's shape and random weights (the work per token is what is
measured): grouped-query attention, the cached decode of 256 tokens at G = H and at G = 1
(multi-query), reporting the speed-up and both caches' bytes; and a windowed decoder (w = 32,
G = 1) generating 1,024 tokens from its rolling cache, reporting per-token time last bin / first
bin (target ≤ 1.2: the cache holds w positions, so a step's work does not grow).
"""

from __future__ import annotations

import argparse
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
WINDOW = 32  # the windowed row's sliding window w
WINDOW_TOKENS = 1024  # tokens the windowed row generates
TARGET_FLAT = 1.2  # windowed per-token time, last bin / first bin, at most


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


def shaped_model(**attention: int) -> Decoder:
    """The stored run's configuration with random weights and these attention options."""
    config = TrainConfig.from_json(RUN / "config.json")
    return Decoder(
        96,
        config.model_width,
        config.num_layers,
        config.num_heads,
        config.hidden_width,
        positions=config.positions,
        norm=config.norm,
        ffn=config.ffn,
        rng=SplitMix64(config.seed),
        **attention,
    )


def cached_decode_seconds(model: Decoder, tokens: int) -> tuple[list[float], KVCache]:
    """Seconds of each cached greedy step after the prompt, and the cache it filled."""
    ids = np.array(prompt(model))
    times = []
    with no_grad():
        cache = KVCache(model, 1, PROMPT_LENGTH + tokens)
        logits = prefill(model, cache, ids).value[:, -1]
        for step in range(tokens):
            token = np.argmax(logits, axis=-1)
            start = time.perf_counter()
            logits = decode_step(model, cache, token, [PROMPT_LENGTH + step]).value
            times.append(time.perf_counter() - start)
    return times, cache


def grouped_rows(repeats: int) -> dict:
    """Cached decode of NEW_TOKENS tokens at G = H and G = 1: totals, speed-up, cache bytes."""
    heads = shaped_model().blocks[0].num_heads
    models = {f"G = {heads}": shaped_model(), "G = 1": shaped_model(num_kv_heads=1)}
    totals: dict[str, list[float]] = {label: [] for label in models}
    nbytes = {}
    for _ in range(repeats):  # alternate the contenders
        for label, model in models.items():
            times, cache = cached_decode_seconds(model, NEW_TOKENS)
            totals[label].append(sum(times))
            nbytes[label] = cache.nbytes
    medians = {label: statistics.median(t) for label, t in totals.items()}
    full, single = medians[f"G = {heads}"], medians["G = 1"]
    return {
        "grouped_decode_s": medians,
        "grouped_cache_bytes": nbytes,
        "grouped_speedup": full / single,
    }


def windowed_rows(repeats: int) -> dict:
    """Per-token time of a windowed decoder at 1,024 positions, in BINS bins, drift-proof.

    The 1,024 tokens are generated as BINS runs of 128, each in its own cache first advanced
    (untimed) to the run's start; the runs then step in turn, one token each, so a machine that
    slows down part-way slows every bin alike instead of the later ones.
    """
    model = shaped_model(num_kv_heads=1, window=WINDOW)
    width = WINDOW_TOKENS // BINS
    times: list[list[float]] = [[] for _ in range(BINS)]
    with no_grad():
        for _ in range(repeats):
            caches, logits = [], []
            for b in range(BINS):
                cache = KVCache(model, 1, PROMPT_LENGTH + WINDOW_TOKENS)
                last = prefill(model, cache, np.array(prompt(model))).value[:, -1]
                for step in range(b * width):  # advance to the bin's first position
                    token = np.argmax(last, axis=-1)
                    last = decode_step(model, cache, token, [PROMPT_LENGTH + step]).value
                caches.append(cache)
                logits.append(last)
            for step in range(width):  # the bins take turns: drift spreads over all of them
                for b, cache in enumerate(caches):
                    token = np.argmax(logits[b], axis=-1)
                    position = PROMPT_LENGTH + b * width + step
                    start = time.perf_counter()
                    logits[b] = decode_step(model, cache, token, [position]).value
                    times[b].append(time.perf_counter() - start)
    bins = [statistics.median(t) for t in times]
    full = KVCache(shaped_model(num_kv_heads=1), 1, PROMPT_LENGTH + WINDOW_TOKENS).nbytes
    return {
        "window": WINDOW,
        "window_tokens": WINDOW_TOKENS,
        "window_step_s_by_bin": bins,
        "window_last_over_first_bin": bins[-1] / bins[0],
        "window_target": TARGET_FLAT,
        "window_cache_bytes": caches[0].nbytes,
        "full_cache_bytes_same_length": full,
    }


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
        **grouped_rows(repeats),
        **windowed_rows(max(1, repeats // 2)),
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
    lines.append(
        f"grouped-query attention, cached decode of {report['new_tokens']} tokens (random "
        "weights, the run's shape):"
    )
    for label, seconds in report["grouped_decode_s"].items():
        lines.append(
            f"  {label:<6} {seconds:.3f} s, cache {report['grouped_cache_bytes'][label]:,} bytes"
        )
    lines.append(f"  speed-up of G = 1 over G = H: {report['grouped_speedup']:.2f}×")
    ratio, target = report["window_last_over_first_bin"], report["window_target"]
    lines.append(
        f"sliding window w = {report['window']} (G = 1), {report['window_tokens']} cached "
        f"tokens: per-token time by bin (ms) "
        + " ".join(f"{t * 1e3:.3f}" for t in report["window_step_s_by_bin"])
    )
    lines.append(
        f"  last bin / first bin {ratio:.2f} (target ≤ {target}, "
        f"{'ok' if ratio <= target else 'missed'}); rolling cache "
        f"{report['window_cache_bytes']:,} bytes, a full cache of the same length "
        f"{report['full_cache_bytes_same_length']:,}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks generation",
        description="Time cached decoding against decoding with no cache.",
    )
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    repeats = 3 if options.quick else 7
    report = measure(repeats)
    text = render(report)
    store(report, text, "generation.json")


if __name__ == "__main__":
    main()
