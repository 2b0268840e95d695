"""The training loop behind ``python -m llm_from_scratch.train``.

Each step s: η ← warmup_cosine_lr(s); draw a batch; logits = model(inputs); loss =
cross_entropy; backward; clip the global gradient norm; AdamW step. The output folder holds
``config.json``, ``log.json`` (the loss of every step, evaluations, dated timing segments) and
``checkpoint.npz`` (written every ``checkpoint_every`` steps, at the end, and on Ctrl-C), plus
``model.npz`` at the end: the same without the optimizer state, a third of the size. A book run
also writes ``corpus.json``, the exact training and validation text, at the start; resuming reads
it instead of the chapters and refuses a corpus whose fingerprint differs from the log's.

Ctrl-C: a KeyboardInterrupt that arrives while the optimizer is updating the parameters is held
until the update is complete; one that arrives anywhere else abandons the step in progress. Either
way the checkpoint holds the state after the last completed step, with the generator rewound to
where that step left it, so ``resume=True`` continues exactly as if nothing had happened.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ArgumentError
from ..nn.decoder import Decoder
from ..random import SplitMix64, as_generator
from ..validate import as_flag, non_negative_int, positive_int, received
from . import loss as loss_module  # loss_module.cross_entropy: looked up per call (one seam)
from .atomic import write_json_atomic
from .checkpoint import load_checkpoint, save_checkpoint
from .clip import clip_grad_norm
from .config import TrainConfig
from .corpus import load_corpus
from .optim import AdamW
from .schedule import warmup_cosine_lr
from .tasks import CORPUS_FILE, make_task

LOG_FORMAT = "llm_from_scratch.train-log/1"


def _config(config: Any, owner: str) -> TrainConfig:
    if not isinstance(config, TrainConfig):
        raise ArgumentError(f"{owner} needs a TrainConfig; got {received(config)}.")
    return config


def build_model(
    config: TrainConfig, vocab_size: int, rng: SplitMix64, *, fused: bool = True
) -> Decoder:
    """The decoder the config describes, initialised from ``rng``, fused.

    ``fused=True`` records each block's attention core as one tape entry and each biased
    projection (x W + b) as one ``affine`` entry; the values and gradients are the composed
    chain's bit for bit, so stored runs replay unchanged. A model
    built for reading (``load_run``) passes False: it runs the taught chain, whose ops the bug
    zoo's mutants replace by name.
    """
    fused = as_flag(fused, "build_model fused")
    _config(config, "build_model")
    vocab_size = positive_int(vocab_size, "build_model vocab_size")
    rng = as_generator(rng, "build_model")
    return Decoder(
        vocab_size,
        config.model_width,
        config.num_layers,
        config.num_heads,
        config.hidden_width,
        positions=None if config.positions == "none" else config.positions,
        norm=config.norm,
        ffn=config.ffn,
        fused=fused,
        rng=rng,
        **config.attention_options(),
    )


def build_optimizer(config: TrainConfig, model: Decoder) -> AdamW:
    """AdamW with weight decay on matrices only (biases and norm gains are not decayed)."""
    _config(config, "build_optimizer")
    if not isinstance(model, Decoder):
        raise ArgumentError(f"build_optimizer needs a Decoder; got {received(model)}.")
    matrices = [p for p in model.parameters() if p.ndim >= 2]
    vectors = [p for p in model.parameters() if p.ndim < 2]
    return AdamW(
        [
            {"params": matrices, "weight_decay": config.weight_decay},
            {"params": vectors, "weight_decay": 0.0},
        ],
        lr=config.lr,
        betas=(config.beta1, config.beta2),
    )


def learning_rate(config: TrainConfig, step: int) -> float:
    """The config's schedule at ``step``."""
    _config(config, "learning_rate")
    return warmup_cosine_lr(
        step,
        peak_lr=config.lr,
        warmup_steps=config.warmup_steps,
        total_steps=config.steps,
        min_lr=config.min_lr,
    )


class _InterruptGuard:
    """SIGINT raises KeyboardInterrupt, except inside ``atomic()``, where it waits for the end."""

    def __init__(self) -> None:
        self.deferring = False
        self.pending = False

    def _handler(self, signum: int, frame: Any) -> None:
        if self.deferring:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach only the main thread: nothing to guard
            return
        previous = signal.signal(signal.SIGINT, self._handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    @contextmanager
    def atomic(self) -> Iterator[None]:
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


@dataclass(frozen=True)
class RunResult:
    """What a call of :func:`train` did: losses per step, evaluations, where it stopped."""

    output: Path
    losses: list[float]
    evals: list[dict[str, Any]]
    steps_done: int
    interrupted: bool
    seconds: float
    tokens_per_second: float


StepHook = Callable[[int, float], None]


def _progress(total: int, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm  # imported here: only the command needs it

    return tqdm(total=total, initial=initial, disable=not enabled, unit="step", dynamic_ncols=True)


def train(
    config: TrainConfig,
    *,
    resume: bool = False,
    progress: bool = True,
    on_step: StepHook | None = None,
    stop_at: int | None = None,
) -> RunResult:
    """Run (or resume) the config's training, up to step ``stop_at`` (default: all steps)."""
    _config(config, "train")
    resume = as_flag(resume, "train resume")
    progress = as_flag(progress, "train progress")
    if on_step is not None and not callable(on_step):
        raise ArgumentError(
            f"train on_step must be None or a callable (step, loss); got {received(on_step)}."
        )
    last = config.steps if stop_at is None else non_negative_int(stop_at, "stop_at")
    if last > config.steps:
        raise ArgumentError(f"stop_at must be an integer in [0, {config.steps}]; got {stop_at!r}.")
    output = Path(config.output)
    checkpoint_path, log_path = output / "checkpoint.npz", output / "log.json"
    stored_corpus = output / CORPUS_FILE
    split = load_corpus(stored_corpus) if resume and stored_corpus.is_file() else None
    task = make_task(config, split)
    rng = SplitMix64(config.seed)
    model = build_model(config, task.vocab_size, rng)
    optimizer = build_optimizer(config, model)
    log: dict[str, Any] = {
        "format": LOG_FORMAT,
        "config": config.to_dict(),
        "task": task.describe(),
        "model": {"parameters": model.parameter_count, "repr": repr(model)},
        "steps": [],
        "evals": [],
        "segments": [],
    }
    start = 0
    if resume:
        if not checkpoint_path.is_file() or not log_path.is_file():
            raise ArgumentError(f"resume=True needs {checkpoint_path} and {log_path}; not found.")
        stored = json.loads(log_path.read_text(encoding="utf-8"))
        if stored.get("config") != config.to_dict():
            raise ArgumentError(
                f"resume: {log_path} was written by another config; resume with the same one."
            )
        now, then = task.describe(), stored.get("task", {})
        if now.get("corpus_sha256") != then.get("corpus_sha256"):  # None = None for induction
            ours, theirs = str(now.get("corpus_sha256"))[:12], str(then.get("corpus_sha256"))[:12]
            raise ArgumentError(
                f"resume: the corpus differs from the one {log_path} records (SHA-256 {ours}…, "
                f"log {theirs}…); without {CORPUS_FILE} in the folder the chapters are read as "
                "they are now. Start a fresh run."
            )
        info = load_checkpoint(checkpoint_path, model, optimizer, rng=rng)
        config.check_attention_record(info.extra, str(checkpoint_path))
        start = info.step
        log = stored
        log["steps"] = [r for r in log["steps"] if r["step"] < start]
        log["evals"] = [r for r in log["evals"] if r["step"] <= start]
    else:
        output.mkdir(parents=True, exist_ok=True)
        write_json_atomic(output / "config.json", config.to_dict())
        task.store(output)
    # checkpoints record non-default attention settings (default runs write what they always did)
    attention_extra = (
        {"attention": config.attention_record()} if config.attention_record() else None
    )
    params = model.parameters()
    tokens_per_step = config.batch_size * task.tokens_per_row
    segment = {
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs",
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
        "first_step": start,
    }
    guard = _InterruptGuard()
    completed, resume_state, interrupted = start, rng.state, False
    began = time.perf_counter()
    bar = _progress(config.steps, start, progress)

    def save() -> None:
        save_checkpoint(
            checkpoint_path, model, optimizer, step=completed, rng=rng, extra=attention_extra
        )

    def evaluate(step: int) -> None:
        log["evals"].append({"step": step, **task.evaluate(model)})
        write_json_atomic(log_path, log)  # the log so far, readable while the run goes on

    try:
        with guard.installed():
            due = start == 0 or start % config.eval_every == 0 or start == config.steps
            if due and all(e["step"] != start for e in log["evals"]):
                evaluate(start)  # the first evaluation, or one a Ctrl-C cut short
            for step in range(start, last):
                lr = learning_rate(config, step)
                for group in optimizer.param_groups:
                    group["lr"] = lr
                optimizer.zero_grad()
                inputs, targets = task.train_batch(rng)
                loss = loss_module.cross_entropy(
                    model(inputs), targets, ignore_index=task.ignore_index
                )
                loss.backward()
                norm = clip_grad_norm(params, config.grad_clip)
                with guard.atomic():
                    optimizer.step()
                    optimizer.zero_grad()
                    value = loss.item()
                    log["steps"].append({"step": step, "loss": value, "lr": lr, "grad_norm": norm})
                    completed, resume_state = step + 1, rng.state
                elapsed = time.perf_counter() - began
                rate = (completed - start) * tokens_per_step / max(elapsed, 1e-9)
                bar.set_postfix(loss=f"{value:.4f}", tok_s=f"{rate:,.0f}", refresh=False)
                bar.update(1)
                if on_step is not None:
                    on_step(step, value)
                if completed % config.eval_every == 0 or completed == config.steps:
                    evaluate(completed)
                if completed % config.checkpoint_every == 0 and completed < config.steps:
                    save()
    except KeyboardInterrupt:
        interrupted = True
        rng.state = resume_state  # the abandoned step's batch is drawn again on resume
        optimizer.zero_grad()
    finally:
        bar.close()
    seconds = time.perf_counter() - began
    rate = (completed - start) * tokens_per_step / max(seconds, 1e-9)
    save()
    save_checkpoint(  # small: no optimizer
        output / "model.npz", model, step=completed, rng=rng, extra=attention_extra
    )
    segment.update(
        {
            "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "last_step": completed,
            "seconds": round(seconds, 2),
            "tokens_per_second": round(rate, 1),
            "interrupted": interrupted,
        }
    )
    log["segments"].append(segment)
    if log["evals"]:
        log["final"] = {**log["evals"][-1], "baseline": log["task"]["baseline"]["value"]}
    write_json_atomic(log_path, log)
    return RunResult(
        output,
        [r["loss"] for r in log["steps"]],
        list(log["evals"]),
        completed,
        interrupted,
        seconds,
        rate,
    )
