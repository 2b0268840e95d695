"""The training command's settings: one frozen dataclass, read from JSON and/or flags."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ArgumentError

TASKS = ("induction", "book")


@dataclass(frozen=True)
class TrainConfig:
    """Task, model sizes, optimisation and bookkeeping for one run of the training command."""

    task: str = "induction"  # "induction" (synthetic, repeated random tokens) or "book" (prose)
    # data
    context: int = 64  # window length T
    vocab_size: int = 64  # induction only; the book's vocabulary is its characters
    min_half_length: int = 8  # induction: L distinct tokens then the same L again, L drawn
    max_half_length: int = 32  # uniformly in [min, max] for each row (2·max ≤ T + 1)
    validation_fraction: float = 0.1  # book: each chapter's tail held out
    book_dir: str = "book"  # book: where the *.md chapters are
    # model (nn.decoder.Decoder)
    model_width: int = 64
    num_layers: int = 2
    num_heads: int = 4
    hidden_width: int = 256
    positions: str = "rope"
    norm: str = "layer"
    ffn: str = "gelu"
    # optimisation (AdamW, warm-up then cosine decay, global norm clipping)
    steps: int = 1000
    batch_size: int = 16
    lr: float = 3e-3
    min_lr: float = 3e-4
    warmup_steps: int = 100
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0
    seed: int = 0
    # bookkeeping
    eval_every: int = 100  # steps between evaluations (and at the last step)
    eval_batches: int = 8  # induction: fixed held-out batches per evaluation
    checkpoint_every: int = 500  # steps between checkpoints (and at the end, and on Ctrl-C)
    output: str = "runs/latest"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ArgumentError(f"task must be one of {list(TASKS)}; got {self.task!r}.")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kind = {"int": int, "float": float, "str": str}[str(f.type)]
            ok = isinstance(value, kind) and not isinstance(value, bool)
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, f.name, float(value))
                ok = True
            if not ok:
                raise ArgumentError(f"config {f.name} must be {kind.__name__}; got {value!r}.")
        positive = (
            "vocab_size",
            "min_half_length",
            "max_half_length",
            "context",
            "model_width",
            "num_layers",
            "num_heads",
            "hidden_width",
            "steps",
            "batch_size",
            "eval_every",
            "eval_batches",
            "checkpoint_every",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ArgumentError(f"config {name} must be ≥ 1; got {getattr(self, name)}.")
        if self.warmup_steps < 0 or self.warmup_steps > self.steps:
            raise ArgumentError(
                f"config warmup_steps must lie in [0, steps = {self.steps}]; got "
                f"{self.warmup_steps}."
            )
        if not 0 <= self.min_lr <= self.lr:
            raise ArgumentError(f"config needs 0 ≤ min_lr ≤ lr; got {self.min_lr}, {self.lr}.")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with some settings changed (checked again)."""
        unknown = sorted(set(changes) - set(self.to_dict()))
        if unknown:
            raise ArgumentError(
                f"unknown config settings {unknown}; known: {list(self.to_dict())}."
            )
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_json(cls, path: str | Path) -> TrainConfig:
        """Settings from a JSON object; keys not given keep their defaults."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise ArgumentError(f"cannot read config {str(path)!r}: {error}") from error
        if not isinstance(data, dict):
            raise ArgumentError(f"config {str(path)!r} must hold a JSON object; got {data!r:.60}.")
        return cls().replace(**data)
