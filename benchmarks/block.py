"""One pre-norm block (RMSNorm, causal MHA with RoPE, SwiGLU), forward + backward, three ways.

1. the book's engine (``TransformerBlock(norm="rms", positions="rope", ffn="swiglu")``), and
   the same block with ``fused=True`` (``engine-fused``: attention's core from the projections
   to the merged heads recorded as one tape entry instead of eight, and the SwiGLU network as
   one instead of five, the same values and gradients bit for bit);
2. a handwritten numpy forward and backward of the same block (``llm_from_scratch.numpy_block``,
   the practical limit here), whose gradients are checked against the engine's;
3. HIPS autograd differentiating the same numpy forward, when it is installed;
4. PyTorch eager (float64, one thread) on the same block, when it is installed (it is not in
   requirements.txt: a reference point, not a dependency).

Each contender's time is the CPU time of its process (one thread), which on a machine shared
with other work drifts far less than the wall clock. The loss is sum(output ⊙ seed) for a
fixed seed tensor; gradients are taken for every parameter
and for the input. Each contender is timed in a fresh Python process (``python -m
benchmarks.block SIZE CONTENDER REPEATS`` prints one median), so none of them runs with the
memory allocator in the state another left behind: glibc's malloc adapts its thresholds to the
allocations it has seen, and the first contender's large arrays would otherwise change how often
the second one takes page faults (by up to a third of the medium block's time).
"""

from __future__ import annotations

import ctypes
import json
import math
import platform
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

from llm_from_scratch.autodiff import Tensor, recorded_ops
from llm_from_scratch.nn import TransformerBlock
from llm_from_scratch.numpy_block import EPS, NAMES, forward, handwritten, rope_tables
from llm_from_scratch.random import SplitMix64

from .timing import isolated_seconds, median_seconds


@dataclass(frozen=True)
class Size:
    label: str
    batch: int
    tokens: int
    width: int
    heads: int
    hidden: int


ROUNDS = 3  # alternating fresh-process rounds of engine and handwritten per size
SMALL = Size("small", 2, 16, 32, 4, 86)
MEDIUM = Size("medium", 8, 128, 256, 8, 683)


def make_problem(size: Size, seed: int = 0, fused: bool = False):
    """Parameters (engine order), input and loss seed, all from SplitMix64 (``fused``: the
    attention core as one entry; the same parameters either way)."""
    rng = SplitMix64(seed)
    block = TransformerBlock(
        size.width,
        size.heads,
        size.hidden,
        norm="rms",
        positions="rope",
        ffn="swiglu",
        fused=fused,
        rng=rng,
    )
    shapes = [p.shape for p in block.parameters()]
    params = [
        1.0 + rng.uniform(-0.1, 0.1, shapes[0]),
        *(block.parameters()[i].value for i in range(1, 5)),
        1.0 + rng.uniform(-0.1, 0.1, shapes[5]),
        *(block.parameters()[i].value for i in range(6, 9)),
    ]
    block.load_state_dict(dict(zip(block.state_dict(), params, strict=True)))
    x = rng.uniform(-1.0, 1.0, (size.batch, size.tokens, size.width))
    seed_tensor = rng.uniform(-1.0, 1.0, x.shape)
    return block, dict(zip(NAMES, params, strict=True)), x, seed_tensor


def engine_step(block, x_tensor, seed):
    block.zero_grad()
    x_tensor.grad = None
    output, _ = block(x_tensor, average_weights=False)  # per-head weights: no extra summary op
    output.backward(seed)


def autograd_step_factory(p, x, seed, heads):
    try:
        import autograd.numpy as anp
        from autograd import grad
    except ImportError:
        return None
    names = list(NAMES)

    def loss(values, xx):
        params = dict(zip(names, values, strict=True))
        out, _ = forward(anp, params, xx, heads)
        return anp.sum(out * seed)

    gradient = grad(loss, (0, 1))
    values = [p[n] for n in names]
    return lambda: gradient(values, x)


def torch_block(p, x, seed, heads):
    """PyTorch eager (float64, one thread) on the same block: (step, gradients), or None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    batch, tokens, width = x.shape
    dh = width // heads
    cos, sin = (torch.from_numpy(t) for t in rope_tables(tokens, dh))
    blocked = torch.triu(torch.ones(tokens, tokens, dtype=torch.bool), 1)
    params = {n: torch.tensor(p[n], requires_grad=True) for n in NAMES}
    x_t = torch.tensor(x, requires_grad=True)
    seed_t = torch.from_numpy(seed)

    def rms(z, g):
        return z * torch.rsqrt((z * z).mean(-1, keepdim=True) + EPS) * g

    def split(z):
        return z.reshape(batch, tokens, heads, dh).transpose(1, 2)

    def rope(z):
        a, b = z[..., 0::2], z[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).reshape(z.shape)

    def step():
        for t in (*params.values(), x_t):
            t.grad = None
        n1 = rms(x_t, params["g1"])
        q, k = rope(split(n1 @ params["wq"])), rope(split(n1 @ params["wk"]))
        v = split(n1 @ params["wv"])
        scores = (q @ k.transpose(-1, -2) / math.sqrt(dh)).masked_fill(blocked, -math.inf)
        merged = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, tokens, width)
        x1 = x_t + merged @ params["wo"]
        n2 = rms(x1, params["g2"])
        h = torch.nn.functional.silu(n2 @ params["wg"]) * (n2 @ params["wu"])
        out = x1 + h @ params["wd"]
        out.backward(seed_t)

    def gradients():
        step()
        return {n: params[n].grad.numpy() for n in NAMES}, x_t.grad.numpy()

    return step, gradients


def max_gradient_difference(block, p, x, seed, heads) -> float:
    tensor = Tensor(x, requires_grad=True)
    engine_step(block, tensor, seed)
    grads, dx = handwritten(p, x, seed, heads)
    engine = dict(zip(NAMES, (q.grad for q in block.parameters()), strict=True))
    worst = max(float(np.max(np.abs(engine[n] - grads[n]))) for n in NAMES)
    return max(worst, float(np.max(np.abs(tensor.grad - dx))))


def tape_entries(block, x) -> int:
    """Entries one forward pass of the block records on the tape (each visited once backward)."""
    output, _ = block(Tensor(x, requires_grad=True), average_weights=False)
    return sum(recorded_ops(output).values())


def peak_memory(fn) -> int:
    """Peak bytes traced while ``fn`` runs once (after a warm-up run)."""
    fn()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def contender(size: Size, name: str):
    """The zero-argument function that runs one fwd+bwd for ``name``, or None if unavailable."""
    block, p, x, seed = make_problem(size, fused=name == "engine-fused")
    if name in ("engine", "engine-fused"):
        tensor = Tensor(x, requires_grad=True)
        return lambda: engine_step(block, tensor, seed)
    if name == "handwritten":
        return lambda: handwritten(p, x, seed, size.heads)
    if name == "torch":
        pair = torch_block(p, x, seed, size.heads)
        return None if pair is None else pair[0]
    return autograd_step_factory(p, x, seed, size.heads)


def measure(size: Size, repeats: int) -> dict:
    """Timings (each contender in its own process), peak memory and the gradient check."""
    block, p, x, seed = make_problem(size)
    fused_block = make_problem(size, fused=True)[0]
    row = {
        "size": size.label,
        "shape": f"B={size.batch} T={size.tokens} D={size.width} H={size.heads} "
        f"D_ff={size.hidden}",
        "max_gradient_difference": max_gradient_difference(block, p, x, seed, size.heads),
        "fused_max_gradient_difference": max_gradient_difference(
            fused_block, p, x, seed, size.heads
        ),
    }
    pair = torch_block(p, x, seed, size.heads)
    if pair is not None:
        grads, dx = pair[1]()
        reference, reference_dx = handwritten(p, x, seed, size.heads)
        worst = max(float(np.max(np.abs(grads[n] - reference[n]))) for n in NAMES)
        row["torch_max_gradient_difference"] = max(worst, float(np.max(np.abs(dx - reference_dx))))
    # engine, fused engine and handwritten in alternating fresh processes, ROUNDS each: drift
    # on a shared machine reaches all three; each time is the median of its rounds, and the
    # paired ratios are kept
    order = ("engine", "engine-fused", "handwritten")
    times: dict[str, list[float]] = {name: [] for name in order}
    for r in range(ROUNDS):
        for name in order if r % 2 == 0 else order[::-1]:
            times[name].append(isolated_seconds("benchmarks.block", [size.label, name], repeats))
    for name, values in times.items():
        row[f"{name.replace('-', '_')}_s"] = statistics.median(values)
    for label, name in (
        ("paired_ratio_median", "engine"),
        ("paired_ratio_fused_median", "engine-fused"),
    ):
        row[label] = statistics.median(
            e / h for e, h in zip(times[name], times["handwritten"], strict=True)
        )
    for name in ("autograd", "torch"):
        row[f"{name}_s"] = isolated_seconds("benchmarks.block", [size.label, name], repeats)
    row["tape_entries"] = tape_entries(block, x)
    row["tape_entries_fused"] = tape_entries(fused_block, x)
    # what the engine adds per entry: each is recorded once forward and visited once backward
    row["overhead_per_entry_s"] = (row["engine_s"] - row["handwritten_s"]) / row["tape_entries"]
    row["overhead_per_entry_fused_s"] = (row["engine_fused_s"] - row["handwritten_s"]) / row[
        "tape_entries_fused"
    ]
    if size is MEDIUM and keep_freed_memory_available():
        for name in ("engine", "handwritten"):
            row[f"{name}_kept_s"] = isolated_seconds(
                "benchmarks.block", [size.label, name, KEEP], repeats
            )
    if size is MEDIUM:
        for name in ("engine", "engine-fused", "handwritten"):
            row[f"{name.replace('-', '_')}_peak_bytes"] = peak_memory(contender(size, name))
    return row


KEEP = "--keep-freed-memory"


def keep_freed_memory_available() -> bool:
    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


def keep_freed_memory() -> None:
    """Ask glibc's malloc to keep freed blocks up to 256 MiB for reuse (no mmap, no trim).

    Then a fresh temporary reuses memory the process already touched instead of page-faulting
    new pages in: it removes the allocator from the comparison and leaves arithmetic.
    """
    libc = ctypes.CDLL("libc.so.6")
    m_trim_threshold, m_mmap_threshold = -1, -3  # from <malloc.h>
    libc.mallopt(m_mmap_threshold, 256 << 20)
    libc.mallopt(m_trim_threshold, 1 << 30)


def main() -> None:
    """``python -m benchmarks.block SIZE CONTENDER [--keep-freed-memory] REPEATS``: one median."""
    args = sys.argv[1:]
    if KEEP in args:
        args.remove(KEEP)
        keep_freed_memory()
    label, name, repeats = args[0], args[1], int(args[2])
    fn = contender({"small": SMALL, "medium": MEDIUM}[label], name)
    # CPU time of the process: on a shared machine the wall clock also counts other work
    seconds = None if fn is None else median_seconds(fn, repeats=repeats, clock=time.process_time)
    print(json.dumps(seconds))


if __name__ == "__main__":
    main()
