"""One training step of the Chapter 10 model: the engine against handwritten numpy and PyTorch.

A step is what the training command does once per batch (``training.loop.train``): forward,
cross-entropy, backward, global gradient-norm clipping, AdamW update. The models are the stored
run configs ``book/runs/book-prose/config.json`` (D = 64, two blocks, the book's characters) and
``book/runs/induction/config.json`` (D = 48, V = 64, padding targets ignored), built by
``training.loop.build_model`` / ``build_optimizer`` on one fixed batch that the task draws from
``SplitMix64(BATCH_SEED)``. ``build_model`` builds the training command's model, whose attention
is fused (``fused=True``: the core from the projections to the merged heads is one tape entry
per block, the composed chain's values and gradients bit for bit).

Contenders: (1) the book's engine; (2) the same step written out by hand in numpy
(``llm_from_scratch.numpy_block.DecoderStep``: the limit a numpy engine can reach, so the
target is engine ≤ 1.25× handwritten); (3) PyTorch eager, float64, one thread, re-implementing the
same decoder with ``torch.nn.functional`` (embedding lookup, pre-norm LayerNorm, causal attention
with interleaved RoPE, exact-erf GELU, final LayerNorm, logits against the tied embedding table)
and stepping with ``torch.optim.AdamW`` and ``torch.nn.utils.clip_grad_norm_``, starting from the
engine model's weights. torch is not a dependency: without it the torch contender is skipped
with a note.

Before anything is timed they must agree with the engine: the loss and every parameter's
gradient, then every parameter after one clipped AdamW step (handwritten to 1e-12, torch to
1e-10). Timing runs each contender in fresh processes (``python -m benchmarks.train_step
--worker CASE CONTENDER SAMPLES``), all with one BLAS / OpenMP thread (set in the child's
environment before numpy starts), the order of the contenders rotating round by round so drift
on a shared machine reaches all of them; each contender's time is the median of all its samples,
and the paired per-round ratios are reported as well. The engine's tape is counted too: entries
recorded per step and per block, and the time per entry the engine adds over handwritten numpy,
(engine − handwritten) / entries.

``python -m benchmarks.train_step`` (``--quick`` for fewer rounds, ``--case book-prose`` for one
case) prints the table and writes ``benchmarks/results/train_step.json``; ``--profile CASE``
prints a cProfile of engine steps instead.
"""

from __future__ import annotations

# One BLAS thread: set in benchmarks/__init__.py, before numpy loads.
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.autodiff.tape import walk_tape
from llm_from_scratch.nn import Decoder
from llm_from_scratch.numpy_block import DecoderStep
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training.clip import clip_grad_norm
from llm_from_scratch.training.config import TrainConfig
from llm_from_scratch.training.loop import build_model, build_optimizer
from llm_from_scratch.training.loss import cross_entropy
from llm_from_scratch.training.optim import AdamW
from llm_from_scratch.training.tasks import make_task

from .block import KEEP, keep_freed_memory, keep_freed_memory_available
from .machine import machine_line, run_fields
from .timing import fmt_time, interleaved_medians, store

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "book-prose": ROOT / "book" / "runs" / "book-prose" / "config.json",
    "induction": ROOT / "book" / "runs" / "induction" / "config.json",
}
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
BATCH_SEED = 2026  # the fixed batch: task.train_batch(SplitMix64(BATCH_SEED))
TARGET = 1.25  # the engine's step at most 1.25× the same step handwritten in numpy
AGREEMENT = 1e-10  # largest |engine − torch| accepted for the loss, gradients and the step
HAND_AGREEMENT = 1e-12  # largest |engine − handwritten| accepted
KEPT_ROUNDS = 3  # fresh-process rounds of engine and handwritten with freed memory kept
SAMPLE_SECONDS = 0.1  # each sample loops enough steps to last about this long
WARMUP_SECONDS = 1.0  # steps run first, untimed: the allocator and caches reach their steady state


@dataclass
class Problem:
    """One case: its config, the engine's model and optimizer, and the fixed batch."""

    config: TrainConfig
    model: Decoder
    optimizer: AdamW
    inputs: np.ndarray  # (B, T) token ids
    targets: np.ndarray  # (B, T) next-token ids (or ignore_index)
    ignore_index: int | None

    @property
    def parameters(self) -> list:
        return self.model.parameters()


def load_config(case: str) -> TrainConfig:
    """The stored run config of ``case``, with its book folder resolved from the repository."""
    config = TrainConfig.from_json(CASES[case])
    return config.replace(book_dir=str(ROOT / config.book_dir))


def make_problem(config: TrainConfig) -> Problem:
    """The config's model (seeded as the training command seeds it) and one fixed batch.

    Norm gains become 1 + U(−0.1, 0.1) and biases U(−0.1, 0.1) (from a separate SplitMix64), so
    that the gradient check sees every parameter in a generic state, not gains of exactly 1 and
    biases of exactly 0; the work per step is unchanged.
    """
    task = make_task(config)
    model = build_model(config, task.vocab_size, SplitMix64(config.seed))
    rng = SplitMix64(config.seed + 1)
    for name, p in model.named_parameters():
        if p.ndim == 1:
            centre = 1.0 if name.endswith(".gain") else 0.0
            p.value = centre + rng.uniform(-0.1, 0.1, p.shape)
    inputs, targets = task.train_batch(SplitMix64(BATCH_SEED))
    return Problem(
        config, model, build_optimizer(config, model), inputs, targets, task.ignore_index
    )


# --- (1) the engine ------------------------------------------------------------------------------


def engine_loss(problem: Problem) -> Tensor:
    """Forward and cross-entropy, gradients cleared first."""
    problem.optimizer.zero_grad()
    logits = problem.model(problem.inputs)  # (B, T, V)
    return cross_entropy(logits, problem.targets, ignore_index=problem.ignore_index)


def engine_gradients(problem: Problem) -> tuple[float, dict[str, np.ndarray]]:
    """(loss, {name: gradient}) after forward and backward, no update."""
    loss = engine_loss(problem)
    loss.backward()
    return loss.item(), {n: p.grad.copy() for n, p in problem.model.named_parameters()}


def engine_step(problem: Problem) -> float:
    """One training step: forward, loss, backward, clip, AdamW (as training.loop.train)."""
    loss = engine_loss(problem)
    loss.backward()
    clip_grad_norm(problem.parameters, problem.config.grad_clip)
    problem.optimizer.step()
    return loss.item()


def tape_entries(problem: Problem) -> dict[str, Any]:
    """Entries one step records: in all, per block, outside the blocks, and by op name."""
    nodes = [t for t in walk_tape(engine_loss(problem)) if t.op_name is not None]
    by_op: dict[str, int] = {}
    for t in nodes:
        by_op[t.op_name] = by_op.get(t.op_name, 0) + 1
    per_block = _block_entries(problem.model.blocks[0], problem)
    outside = len(nodes) - problem.config.num_layers * per_block
    fused = all(block.attention.fused for block in problem.model.blocks)
    return {
        "step": len(nodes),
        "per_block": per_block,
        "outside_blocks": outside,
        "by_op": by_op,
        "attention": "fused" if fused else "composed",
    }


def _block_entries(block: Any, problem: Problem) -> int:
    """Entries one block records on the tape for this batch's shape."""
    config = problem.config
    x = Tensor(np.zeros((*problem.inputs.shape, config.model_width)), requires_grad=True)
    output, _ = block(x, average_weights=False)
    return sum(1 for t in walk_tape(output) if t.op_name is not None)


# --- (2) the same step written out by hand in numpy ----------------------------------------------


def handwritten(problem: Problem) -> DecoderStep:
    """``DecoderStep`` on the engine model's weights with the engine optimizer's settings."""
    config, group = problem.config, problem.optimizer.param_groups[0]
    return DecoderStep(
        {n: p.value for n, p in problem.model.named_parameters()},
        num_layers=config.num_layers,
        num_heads=config.num_heads,
        lr=group["lr"],
        betas=group["betas"],
        weight_decay=group["weight_decay"],
        grad_clip=config.grad_clip,
        adam_eps=group["eps"],
        prefix=problem.model.name,
    )


def hand_agreement(config: TrainConfig) -> dict[str, float]:
    """Largest |engine − handwritten| differences: loss, gradients, parameters after one step."""
    problem = make_problem(config)
    reference = handwritten(problem)
    args = (problem.inputs, problem.targets, problem.ignore_index)
    loss, grads = engine_gradients(problem)
    hand_loss, hand_grads = reference.loss_and_gradients(*args)
    gradient_gap = {n: float(np.max(np.abs(grads[n] - hand_grads[n]))) for n in grads}
    worst = max(gradient_gap, key=gradient_gap.get)
    engine_step(problem)
    reference.step(*args)
    parameter_gap = max(
        float(np.max(np.abs(p.value - reference.p[n])))
        for n, p in problem.model.named_parameters()
    )
    return {
        "loss_difference": abs(loss - hand_loss),
        "max_gradient_difference": gradient_gap[worst],
        "worst_gradient": worst,
        "max_parameter_difference_after_step": parameter_gap,
    }


# --- (3) PyTorch eager, float64, one thread ------------------------------------------------------


class TorchStep:
    """The same decoder, loss, clipping and AdamW in PyTorch, from the engine model's weights."""

    def __init__(self, problem: Problem) -> None:
        import torch
        import torch.nn.functional as F  # noqa: N812

        torch.set_num_threads(1)
        self.torch, self.F = torch, F
        config, model = problem.config, problem.model
        self.config = config
        self.width, self.heads = config.model_width, config.num_heads
        self.head_width = self.width // self.heads
        self.prefix = model.name
        self.names = [n for n, _ in model.named_parameters()]
        self.params = {
            n: torch.tensor(p.value, dtype=torch.float64, requires_grad=True)
            for n, p in model.named_parameters()
        }
        self.inputs = torch.from_numpy(problem.inputs.astype(np.int64))
        self.targets = torch.from_numpy(problem.targets.astype(np.int64)).reshape(-1)
        self.ignore_index = -100 if problem.ignore_index is None else problem.ignore_index
        tokens = problem.inputs.shape[1]
        # RoPE, interleaved pairs (2j, 2j + 1) rotated by t·ω_j, ω_j = 10000^(−2j/d_h)
        frequencies = 10000.0 ** (-np.arange(0, self.head_width, 2) / self.head_width)
        angles = torch.from_numpy(np.arange(tokens)[:, None] * frequencies)  # (T, d_h/2)
        self.cos, self.sin = torch.cos(angles), torch.sin(angles)
        matrices = [self.params[n] for n in self.names if self.params[n].ndim >= 2]
        vectors = [self.params[n] for n in self.names if self.params[n].ndim < 2]
        self.optimizer = torch.optim.AdamW(
            [
                {"params": matrices, "weight_decay": config.weight_decay},
                {"params": vectors, "weight_decay": 0.0},
            ],
            lr=config.lr,
            betas=(config.beta1, config.beta2),
            eps=1e-8,
        )

    def _rope(self, z: Any) -> Any:
        """z [B, H, T, d_h] with each pair (2j, 2j + 1) of row t rotated by t·ω_j."""
        a, b = z[..., 0::2], z[..., 1::2]
        rotated = self.torch.stack([a * self.cos - b * self.sin, a * self.sin + b * self.cos], -1)
        return rotated.flatten(-2)

    def _norm(self, x: Any, name: str) -> Any:
        p = self.params
        return self.F.layer_norm(x, (self.width,), p[f"{name}.gain"], p[f"{name}.bias"], 1e-5)

    def loss(self) -> Any:
        """Cross-entropy of the decoder's next-token logits on the fixed batch."""
        F, p = self.F, self.params
        batch, tokens = self.inputs.shape
        table = p[f"{self.prefix}.embedding.weight"]  # (V, D), tied with the head
        x = F.embedding(self.inputs, table)  # (B, T, D)
        for i in range(self.config.num_layers):
            name = f"{self.prefix}.blocks.{i}"
            n = self._norm(x, f"{name}.attention_norm")

            def heads(role: str, n: Any = n, name: str = name) -> Any:
                z = n @ p[f"{name}.attention.{role}.weight"]  # (B, T, D), Y = X W
                return z.view(batch, tokens, self.heads, self.head_width).transpose(1, 2)

            q, k, v = self._rope(heads("query")), self._rope(heads("key")), heads("value")
            merged = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, d_h)
            merged = merged.transpose(1, 2).reshape(batch, tokens, self.width)
            x = x + merged @ p[f"{name}.attention.output.weight"]
            n = self._norm(x, f"{name}.ffn_norm")
            hidden = F.gelu(n @ p[f"{name}.ffn.up.weight"] + p[f"{name}.ffn.up.bias"])
            x = x + hidden @ p[f"{name}.ffn.down.weight"] + p[f"{name}.ffn.down.bias"]
        x = self._norm(x, f"{self.prefix}.final_norm")
        logits = x @ table.T  # (B, T, V)
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), self.targets, ignore_index=self.ignore_index
        )

    def gradients(self) -> tuple[float, dict[str, np.ndarray]]:
        """(loss, {name: gradient}) after forward and backward, no update."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        return loss.item(), {n: self.params[n].grad.numpy().copy() for n in self.names}

    def step(self) -> float:
        """One training step: forward, loss, backward, clip, AdamW."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        self.torch.nn.utils.clip_grad_norm_(self.params.values(), self.config.grad_clip)
        self.optimizer.step()
        return loss.item()

    def values(self) -> dict[str, np.ndarray]:
        return {n: t.detach().numpy().copy() for n, t in self.params.items()}


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def agreement(config: TrainConfig) -> dict[str, float]:
    """Largest |engine − torch| differences: loss, gradients, parameters after one step."""
    problem = make_problem(config)
    reference = TorchStep(problem)
    loss, grads = engine_gradients(problem)
    torch_loss, torch_grads = reference.gradients()
    gradient_gap = {n: float(np.max(np.abs(grads[n] - torch_grads[n]))) for n in grads}
    worst = max(gradient_gap, key=gradient_gap.get)
    engine_step(problem)
    reference.step()
    after = reference.values()
    parameter_gap = max(
        float(np.max(np.abs(p.value - after[n]))) for n, p in problem.model.named_parameters()
    )
    return {
        "loss": loss,
        "loss_difference": abs(loss - torch_loss),
        "max_gradient_difference": gradient_gap[worst],
        "worst_gradient": worst,
        "max_gradient": max(float(np.max(np.abs(g))) for g in grads.values()),
        "max_parameter_difference_after_step": parameter_gap,
    }


# --- timing in fresh processes -----------------------------------------------------------------


def contender(case: str, name: str) -> Callable[[], float]:
    """The zero-argument function that runs one training step of ``name`` on ``case``."""
    problem = make_problem(load_config(case))
    if name == "engine":
        return lambda: engine_step(problem)
    if name == "handwritten":
        step = handwritten(problem).step
        args = (problem.inputs, problem.targets, problem.ignore_index)
        return lambda: step(*args)
    return TorchStep(problem).step


def samples(fn: Callable[[], object], count: int) -> dict[str, list[float]]:
    """Per-step wall-clock and CPU seconds of ``count`` samples, after warm-up steps.

    Training runs thousands of steps, so the steady state is what counts: the first steps of a
    fresh process also pay for glibc's malloc learning the step's allocation sizes (its mmap and
    trim thresholds adapt to the blocks it has seen freed) and for cold caches. Steps run untimed
    for WARMUP_SECONDS (at least two) before the samples.
    The process's CPU time counts only the time it ran: on a machine that other work keeps busy
    it drifts far less than the wall clock (with one thread the two agree on an idle machine).
    """
    fn()
    warm, steps = time.perf_counter(), 0
    while steps < 2 or time.perf_counter() - warm < WARMUP_SECONDS:
        start = time.perf_counter()
        fn()
        steps += 1
    loops = max(1, math.ceil(SAMPLE_SECONDS / (time.perf_counter() - start)))
    wall, cpu = [], []
    for _ in range(count):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(loops):
            fn()
        wall.append((time.perf_counter() - start) / loops)
        cpu.append((time.process_time() - start_cpu) / loops)
    return {"wall": wall, "cpu": cpu}


def worker_environment() -> dict[str, str]:
    return {**os.environ, **dict.fromkeys(BLAS_VARIABLES, "1")}


def fresh_samples(case: str, name: str, count: int, keep: bool = False) -> dict[str, Any]:
    """Run ``--worker case name count`` in a new Python process with one BLAS thread.

    ``keep``: the worker first asks glibc's malloc to keep freed memory (``block.KEEP``), so a
    step reuses pages the process already touched instead of faulting fresh ones in.
    """
    flag = [KEEP] if keep else []
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.train_step", "--worker", case, name, str(count), *flag],
        cwd=ROOT,
        env=worker_environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def measure(case: str, rounds: int, count: int) -> dict[str, Any]:
    """The agreement check, then ``rounds`` of fresh engine and torch processes, alternating."""
    config = load_config(case)
    problem = make_problem(config)
    row: dict[str, Any] = {
        "case": case,
        "shape": (
            f"B={config.batch_size} T={config.context} D={config.model_width} "
            f"L={config.num_layers} H={config.num_heads} D_ff={config.hidden_width} "
            f"V={problem.model.vocab_size}"
        ),
        "parameters": problem.model.parameter_count,
        "counted_targets": int(
            problem.targets.size
            if problem.ignore_index is None
            else np.sum(problem.targets != problem.ignore_index)
        ),
    }
    row["hand_agreement"] = hand_agreement(config)
    hand_worst = _worst(row["hand_agreement"])
    if hand_worst > HAND_AGREEMENT:
        raise AssertionError(
            f"{case}: engine and handwritten numpy disagree by {hand_worst:.1e} (> "
            f"{HAND_AGREEMENT:g}): {row['hand_agreement']}; a timing of different computations "
            "means nothing."
        )
    row["tape"] = tape_entries(problem)
    names = ["engine", "handwritten"]
    if torch_available():
        row["agreement"] = agreement(config)
        worst = _worst(row["agreement"])
        if worst > AGREEMENT:
            raise AssertionError(
                f"{case}: engine and torch disagree by {worst:.1e} (> {AGREEMENT:g}): "
                f"{row['agreement']}; a timing of different computations means nothing."
            )
        names.append("torch")
    pooled = {(n, clock): [] for n in names for clock in ("wall", "cpu")}
    per_round: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        shift = r % len(names)  # the order rotates: each contender runs first in turn
        for name in names[shift:] + names[:shift]:
            result = fresh_samples(case, name, count)
            if any(result["blas"].get(v) != "1" for v in BLAS_VARIABLES):
                raise AssertionError(f"worker ran with BLAS settings {result['blas']}")
            for clock in ("wall", "cpu"):
                pooled[name, clock].extend(result[clock])
            per_round[name].append(statistics.median(result["wall"]))
    for name in names:
        row[f"{name}_s"] = statistics.median(pooled[name, "wall"])
        row[f"{name}_cpu_s"] = statistics.median(pooled[name, "cpu"])
        row[f"{name}_round_medians_s"] = per_round[name]
    for other, key in (("handwritten", "hand"), ("torch", "torch")):
        if other not in names:
            continue
        row[f"{key}_ratio"] = row["engine_s"] / row[f"{other}_s"]
        row[f"{key}_cpu_ratio"] = row["engine_cpu_s"] / row[f"{other}_cpu_s"]
        paired = [e / t for e, t in zip(per_round["engine"], per_round[other], strict=True)]
        row[f"{key}_paired_ratio_median"] = statistics.median(paired)
        row[f"{key}_paired_ratio_range"] = [min(paired), max(paired)]
    row["overhead_per_entry_s"] = (row["engine_s"] - row["handwritten_s"]) / row["tape"]["step"]
    if keep_freed_memory_available():  # the same step with the allocator out of the comparison
        kept: dict[str, list[float]] = {"engine": [], "handwritten": []}
        for r in range(KEPT_ROUNDS):
            for name in ("engine", "handwritten") if r % 2 == 0 else ("handwritten", "engine"):
                kept[name].extend(fresh_samples(case, name, count, keep=True)["wall"])
        row["engine_kept_s"] = statistics.median(kept["engine"])
        row["handwritten_kept_s"] = statistics.median(kept["handwritten"])
        row["hand_kept_ratio"] = row["engine_kept_s"] / row["handwritten_kept_s"]
    row["gelu"] = gelu_times(config)
    return row


def gelu_times(config: TrainConfig) -> dict[str, float] | None:
    """Exact GELU forward + backward on one block's [B·T, D_ff]: numpy (scipy's Φ) and torch.

    The step's one op whose numpy kernel is scalar: scipy's ndtr evaluates Φ one number at a
    time, torch's erf is vectorised. Both sides in one process, sampled in turn (one thread).
    """
    if not torch_available():
        return None
    import torch
    from scipy.special import ndtr

    torch.set_num_threads(1)
    rows = config.batch_size * config.context
    u = SplitMix64(5).normal((rows, config.hidden_width))
    seed = SplitMix64(6).normal(u.shape)
    inv_sqrt_2pi = 1.0 / math.sqrt(2.0 * math.pi)

    def numpy_gelu() -> np.ndarray:
        cdf = ndtr(u)
        out = u * cdf
        slope = np.exp(-0.5 * u * u) * inv_sqrt_2pi * u + cdf  # Φ(u) + u φ(u)
        return out, slope * seed

    ut, seed_t = torch.tensor(u, requires_grad=True), torch.from_numpy(seed)

    def torch_gelu() -> None:
        ut.grad = None
        torch.nn.functional.gelu(ut).backward(seed_t)

    numpy_s, torch_s = interleaved_medians([numpy_gelu, torch_gelu], repeats=9, target=0.05)
    return {"shape": [rows, config.hidden_width], "numpy_s": numpy_s, "torch_s": torch_s}


def _worst(agreement: dict[str, Any]) -> float:
    keys = ("loss_difference", "max_gradient_difference", "max_parameter_difference_after_step")
    return max(agreement[k] for k in keys)


def run(cases: list[str], rounds: int, count: int) -> dict[str, Any]:
    load_before = os.getloadavg()
    rows = [measure(case, rounds, count) for case in cases]
    report: dict[str, Any] = {
        "benchmark": "train_step",
        **run_fields(),
        "torch": None,
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs",
        "threads": "1 BLAS/OpenMP thread (environment), torch.set_num_threads(1)",
        "rounds": rounds,
        "samples_per_process": count,
        "target_ratio": TARGET,
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "rows": rows,
    }
    if torch_available():
        import torch

        report["torch"] = torch.__version__
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"Training step, engine vs handwritten numpy and PyTorch eager ({report['date']}, numpy "
        f"{report['numpy']}, torch {report['torch'] or 'not installed'}; {report['rounds']} "
        f"rounds × {report['samples_per_process']} samples per fresh process, medians)",
        machine_line(report),
        f"{'case':12} {'clock':5} {'engine':>10} {'handwritten':>11} {'torch':>10} "
        f"{'/hand':>6} {'paired':>6} {'target':>6}  {'/torch':>6} {'paired':>6}",
    ]
    target = report["target_ratio"]
    for r in report["rows"]:
        torch = "torch_s" in r
        verdict = "ok" if r["hand_ratio"] <= target else "missed"
        torch_time = fmt_time(r["torch_s"]) if torch else "—"
        torch_ratios = (
            f"{r['torch_ratio']:>5.2f}× {r['torch_paired_ratio_median']:>5.2f}×" if torch else "—"
        )
        lines.append(
            f"{r['case']:12} {'wall':5} {fmt_time(r['engine_s']):>10} "
            f"{fmt_time(r['handwritten_s']):>11} {torch_time:>10} {r['hand_ratio']:>5.2f}× "
            f"{r['hand_paired_ratio_median']:>5.2f}× {target:>5.2f}×  {torch_ratios} {verdict}"
        )
        torch_cpu = fmt_time(r["torch_cpu_s"]) if torch else "—"
        torch_cpu_ratio = f"{r['torch_cpu_ratio']:>5.2f}×" if torch else "—"
        lines.append(
            f"{'':12} {'cpu':5} {fmt_time(r['engine_cpu_s']):>10} "
            f"{fmt_time(r['handwritten_cpu_s']):>11} {torch_cpu:>10} {r['hand_cpu_ratio']:>5.2f}×"
            f" {'':6} {'':6}  {torch_cpu_ratio}"
        )
    lines.append(
        "step = forward, cross-entropy, backward, clip_grad_norm, AdamW; /hand = engine / "
        "handwritten numpy (the target), /torch = engine / torch; paired = median of per-round "
        "wall ratios; cpu = the process's CPU time"
    )
    for r in report["rows"]:
        tape = r["tape"]
        lines.append(f"{r['case']}: {r['shape']}, {r['parameters']:,} parameters")
        attention = tape.get("attention", "composed")
        fused = tape["by_op"].get("fused_attention", 0)
        lines.append(
            f"  tape: {tape['step']} entries per step ({tape['per_block']} per block, "
            f"{tape['outside_blocks']} outside the blocks); attention {attention}"
            f"{f' ({fused} fused_attention entries)' if fused else ''}; engine − handwritten = "
            f"{fmt_time(r['overhead_per_entry_s'])} per entry"
        )
        if "hand_kept_ratio" in r:
            lines.append(
                f"  with freed memory kept by malloc (no page faults for fresh temporaries): "
                f"engine {fmt_time(r['engine_kept_s'])}, handwritten "
                f"{fmt_time(r['handwritten_kept_s'])}, {r['hand_kept_ratio']:.2f}×"
            )
        h = r["hand_agreement"]
        lines.append(
            f"  |engine − handwritten|: loss {h['loss_difference']:.1e}, gradients "
            f"{h['max_gradient_difference']:.1e}, parameters after one step "
            f"{h['max_parameter_difference_after_step']:.1e}"
        )
        g = r.get("gelu")
        if g is not None and "torch_s" in r:
            blocks = int(r["shape"].split("L=")[1].split()[0])
            lines.append(
                f"  exact GELU fwd+bwd on [{g['shape'][0]}, {g['shape'][1]}]: numpy (scipy ndtr) "
                f"{fmt_time(g['numpy_s'])}, torch {fmt_time(g['torch_s'])}; × {blocks} blocks = "
                f"{fmt_time(blocks * (g['numpy_s'] - g['torch_s']))} of the "
                f"{fmt_time(r['engine_s'] - r['torch_s'])} engine − torch gap"
            )
        a = r.get("agreement")
        if a is None:
            lines.append("  torch not installed: the torch contender was skipped")
            continue
        lines.append(
            f"  |engine − torch|: loss {a['loss_difference']:.1e}, gradients "
            f"{a['max_gradient_difference']:.1e} (largest gradient {a['max_gradient']:.2f}), "
            f"parameters after one step {a['max_parameter_difference_after_step']:.1e}"
        )
    before, after = report["load_average_before"], report["load_average_after"]
    lines.append(f"load average (1, 5, 15 min): before {before}, after {after}")
    return "\n".join(lines)


def profile(case: str, steps: int = 20) -> None:
    """cProfile of ``steps`` engine steps (after a warm-up), sorted by own time."""
    import cProfile
    import pstats

    step = contender(case, "engine")
    step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        step()
    profiler.disable()
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(30)


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.train_step [--quick] [--case CASE] [--profile CASE]``."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--worker"]:
        case, name, count = args[1], args[2], int(args[3])
        if KEEP in args:
            keep_freed_memory()
        blas = {v: os.environ.get(v, "unset") for v in BLAS_VARIABLES}
        print(json.dumps({**samples(contender(case, name), count), "blas": blas}))
        return
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks train-step",
        description="Time one training step: the engine against handwritten numpy and torch.",
    )
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    parser.add_argument("--case", choices=list(CASES), help="one configuration only")
    parser.add_argument("--profile", choices=list(CASES), help="profile the engine's step")
    options = parser.parse_args(args)
    if options.profile is not None:
        profile(options.profile)
        return
    cases = [options.case] if options.case is not None else list(CASES)
    quick = options.quick
    if not torch_available():
        print(
            "torch is not installed: engine and handwritten only (pip install torch to compare)."
        )
    report = run(cases, rounds=3 if quick else 7, count=5)
    text = render(report)
    store(report, text, "train_step.json")


if __name__ == "__main__":
    main()
