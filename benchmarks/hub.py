"""A GPT-2-small-shaped random model (124M parameters): the book's cached decode against
transformers eager, one thread, float64 on both sides; load time and peak memory.

``python -m benchmarks hub`` (``--quick`` for fewer tokens) builds a seeded random
``GPT2LMHeadModel`` of GPT-2 small's shape with transformers, saves it with ``save_pretrained``
to a temporary folder, then runs each side in a fresh process so its peak resident memory is its
own: the book's side times ``load_pretrained`` and the cached decode, transformers' side its
``from_pretrained`` and decode with its cache. Both decode the same greedy tokens (checked).
Writes ``benchmarks/results/hub.json``. The weights are random: the speed is a shape's speed.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# One BLAS thread: set in benchmarks/__init__.py, before numpy loads.
import numpy as np

from .machine import machine_line, run_fields
from .timing import store

PROMPT = 16
TARGET = 1.5  # book time per token / transformers time per token


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _prompt() -> list[int]:
    from llm_from_scratch.random import SplitMix64

    return (SplitMix64(2026).u64_array(PROMPT) % np.uint64(50257)).astype(np.int64).tolist()


def book_side(folder: str, steps: int) -> dict:
    """load_pretrained, then prefill and ``steps`` cached greedy steps, each timed."""
    from llm_from_scratch.autodiff import no_grad
    from llm_from_scratch.generation import KVCache, decode_step, prefill
    from llm_from_scratch.hub import load_pretrained

    start = time.perf_counter()
    model = load_pretrained(folder)
    load = time.perf_counter() - start
    prompt = _prompt()
    cache = KVCache(model, 1, PROMPT + steps + 1)
    times, tokens = [], []
    with no_grad():
        logits = prefill(model, cache, np.array([prompt])).value[:, -1]
        for step in range(steps):
            token = int(np.argmax(logits[0]))
            tokens.append(token)
            start = time.perf_counter()
            logits = decode_step(model, cache, [token], [PROMPT + step]).value
            times.append(time.perf_counter() - start)
    return {"load_s": load, "step_s": times, "tokens": tokens, "peak_MiB": _peak_mib()}


def torch_side(folder: str, steps: int) -> dict:
    """from_pretrained (float64, eager), then the same greedy steps with its DynamicCache."""
    import torch
    import transformers

    torch.set_num_threads(1)
    transformers.utils.logging.disable_progress_bar()
    start = time.perf_counter()
    model = transformers.GPT2LMHeadModel.from_pretrained(
        folder, dtype=torch.float64, attn_implementation="eager"
    ).eval()
    load = time.perf_counter() - start
    times, tokens = [], []
    with torch.no_grad():
        out = model(torch.tensor([_prompt()]), use_cache=True)
        cache, logits = out.past_key_values, out.logits[:, -1]
        for _ in range(steps):
            token = int(torch.argmax(logits[0]))
            tokens.append(token)
            start = time.perf_counter()
            out = model(torch.tensor([[token]]), past_key_values=cache, use_cache=True)
            times.append(time.perf_counter() - start)
            cache, logits = out.past_key_values, out.logits[:, -1]
    return {"load_s": load, "step_s": times, "tokens": tokens, "peak_MiB": _peak_mib()}


def build_folder(folder: Path) -> int:
    """A seeded random GPT-2 small (transformers' default GPT2Config), saved in float64."""
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    torch.manual_seed(0)
    config = transformers.GPT2Config()
    model = transformers.GPT2LMHeadModel(config).double().eval()
    model.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())


def _side(name: str, folder: Path, steps: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.hub", "--side", name, str(folder), str(steps)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def render(report: dict) -> str:
    b, t = report["book"], report["torch"]
    ratio = b["per_token_s"] / t["per_token_s"]
    verdict = "ok" if ratio <= TARGET else "missed"
    return "\n".join(
        [
            f"GPT-2 small shape, random weights ({report['parameters']:,} parameters), float64, "
            f"1 thread ({report['date']})",
            machine_line(report),
            f"cached decode per token (median of {report['steps']} steps after a "
            f"{PROMPT}-token prompt): book {b['per_token_s'] * 1e3:.1f} ms, transformers eager "
            f"{t['per_token_s'] * 1e3:.1f} ms: {ratio:.2f}× (target ≤ {TARGET}×) {verdict}",
            f"load: book load_pretrained {b['load_s']:.2f} s, transformers from_pretrained "
            f"{t['load_s']:.2f} s",
            f"peak resident memory (process): book {b['peak_MiB']:.0f} MiB, transformers "
            f"{t['peak_MiB']:.0f} MiB",
            f"same greedy tokens: {report['same_tokens']}",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if "--side" in args:
        i = args.index("--side")
        side, folder, steps = args[i + 1], args[i + 2], int(args[i + 3])
        result = (book_side if side == "book" else torch_side)(folder, steps)
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks hub",
        description="Load and decode a GPT-2-small-shaped checkpoint: the book against torch.",
    )
    parser.add_argument("--quick", action="store_true", help="8 decoding steps instead of 32")
    steps = 8 if parser.parse_args(args).quick else 32
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "gpt2-small-random"
        parameters = build_folder(folder)
        book = _side("book", folder, steps)
        reference = _side("torch", folder, steps)
    report = {
        **run_fields(),
        "parameters": parameters,
        "steps": steps,
        "same_tokens": book["tokens"] == reference["tokens"],
    }
    for name, side in (("book", book), ("torch", reference)):
        report[name] = {
            "per_token_s": statistics.median(side["step_s"]),
            "load_s": side["load_s"],
            "peak_MiB": side["peak_MiB"],
        }
    store(report, render(report), "hub.json")


if __name__ == "__main__":
    main()
