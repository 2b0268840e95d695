"""The training command's settings: one frozen dataclass, read from JSON and/or flags.

Every setting is checked when the config is made, so a run refuses a bad value before it writes
anything: types, ranges (finite floats, β in [0, 1), grad_clip > 0, 0 < validation_fraction < 1,
0 ≤ seed < 2⁶⁴), the named choices, the induction half-lengths against the window and the
vocabulary, and the size of the largest arrays one step makes (:meth:`TrainConfig.check_size`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ArgumentError
from ..validate import MAX_ELEMENTS, positive_int

TASKS = ("induction", "book")
POSITIONS = ("rope", "alibi", "sinusoidal", "none")
NORMS = ("layer", "rms")
FFNS = ("gelu", "swiglu")
LARGEST_INT = 2**63 - 1  # every count must fit numpy's int64


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
    kv_heads: int = 0  # G key/value heads, dividing num_heads; 0: one per query head (G = H)
    window: int = 0  # sliding window w (a token sees itself and w − 1 before it); 0: full causal
    qk_norm: bool = False  # RMSNorm on each head's queries and keys before RoPE
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
            object.__setattr__(self, f.name, _typed(f.name, getattr(self, f.name)))
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
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, int) and f.name != "seed" and value > LARGEST_INT:
                raise ArgumentError(f"config {f.name} must be at most 2⁶³ − 1; got {value}.")
            if isinstance(value, float) and not math.isfinite(value):
                raise ArgumentError(f"config {f.name} must be finite; got {value}.")
        for name in ("kv_heads", "window"):
            if getattr(self, name) < 0:
                raise ArgumentError(
                    f"config {name} must be ≥ 0 (0 keeps the default attention); got "
                    f"{getattr(self, name)}."
                )
        if self.kv_heads and self.num_heads % self.kv_heads:
            raise ArgumentError(
                f"config kv_heads G must divide num_heads H = {self.num_heads} (each key/value "
                f"head serves H / G query heads); got kv_heads = {self.kv_heads}. Choose a "
                f"divisor of {self.num_heads}, or 0 for G = H."
            )
        if self.window > self.context:
            raise ArgumentError(
                f"config window must be at most context = {self.context} (a window that long is "
                f"full causal attention); got window = {self.window}. Use 0 for full attention."
            )
        if not 0 <= self.seed < 2**64:
            raise ArgumentError(
                f"config seed must lie in [0, 2⁶⁴) (a SplitMix64 state); got {self.seed}."
            )
        for name, choices in (("positions", POSITIONS), ("norm", NORMS), ("ffn", FFNS)):
            if getattr(self, name) not in choices:
                raise ArgumentError(
                    f"config {name} must be one of {list(choices)}; got {getattr(self, name)!r}."
                )
        for name in ("output", "book_dir"):
            text = getattr(self, name)
            if not text.strip() or "\0" in text:
                raise ArgumentError(
                    f"config {name} must be a folder path, not empty and without NUL bytes; got "
                    f"{text!r:.60}."
                )
        if self.warmup_steps < 0 or self.warmup_steps > self.steps:
            raise ArgumentError(
                f"config warmup_steps must lie in [0, steps = {self.steps}]; got "
                f"{self.warmup_steps}."
            )
        if not (0 <= self.min_lr <= self.lr and self.lr > 0):
            raise ArgumentError(
                f"config needs 0 ≤ min_lr ≤ lr with lr > 0; got min_lr {self.min_lr}, lr "
                f"{self.lr}."
            )
        for name in ("beta1", "beta2"):
            if not 0 <= getattr(self, name) < 1:
                raise ArgumentError(
                    f"config {name} must lie in [0, 1) (AdamW's moment decay); got "
                    f"{getattr(self, name)}."
                )
        if self.weight_decay < 0:
            raise ArgumentError(f"config weight_decay must be ≥ 0; got {self.weight_decay}.")
        if not self.grad_clip > 0:
            raise ArgumentError(
                f"config grad_clip must be > 0 (the largest global gradient norm kept); got "
                f"{self.grad_clip}. Use a large value such as 1e9 to clip almost never."
            )
        if not 0 < self.validation_fraction < 1:
            raise ArgumentError(
                f"config validation_fraction must lie in (0, 1); got {self.validation_fraction}."
            )
        if self.task == "induction":
            low, high = self.min_half_length, self.max_half_length
            if not (2 <= low <= high and 2 * high <= self.context + 1 and high <= self.vocab_size):
                raise ArgumentError(
                    f"config induction half-lengths need 2 ≤ min_half_length ≤ max_half_length, "
                    f"2·max_half_length ≤ context + 1 = {self.context + 1} and max_half_length ≤ "
                    f"vocab_size = {self.vocab_size}; got {low} and {high}."
                )
        self.check_size(self.vocab_size if self.task == "induction" else 1)

    def arrays(self, vocab_size: int) -> dict[str, tuple[int, ...]]:
        """The largest arrays one training step makes, by name: shape (float64 or int64)."""
        vocab_size = positive_int(vocab_size, "TrainConfig.arrays vocab_size")
        b, t, d = self.batch_size, self.context, self.model_width
        shapes = {
            "attention scores (batch_size, num_heads, context, context)": (
                b,
                self.num_heads,
                t,
                t,
            ),
            "feed-forward hidden (batch_size, context, hidden_width)": (b, t, self.hidden_width),
            "logits (batch_size, context, vocabulary)": (b, t, vocab_size),
            "embedding table (vocabulary, model_width)": (vocab_size, d),
            "feed-forward matrix (model_width, hidden_width)": (d, self.hidden_width),
        }
        if self.task == "induction":
            shapes["held-out batches (eval_batches, batch_size, context)"] = (
                self.eval_batches,
                b,
                t,
            )
            shapes["permutation keys (batch_size, vocab_size)"] = (b, vocab_size)
        return shapes

    def peak_bytes(self, vocab_size: int) -> int:
        """A generous estimate of one step's memory: parameters ×6, activations ×8, in bytes."""
        shapes = self.arrays(vocab_size)
        b, t, d, f = self.batch_size, self.context, self.model_width, self.hidden_width
        layers = self.num_layers
        parameters = layers * (4 * d * d + 3 * d * f + 4 * d) + vocab_size * d
        per_layer = 12 * b * t * d + 4 * b * t * f + 4 * math.prod(shapes[next(iter(shapes))])
        activations = layers * per_layer + 4 * b * t * vocab_size
        held_out = 2 * self.eval_batches * b * t if self.task == "induction" else 0
        return 8 * (6 * parameters + activations + held_out)

    def check_size(self, vocab_size: int, memory_bytes: int | None = None) -> None:
        """Refuse arrays over 2²⁸ values, or (given ``memory_bytes``) a step that cannot fit."""
        if memory_bytes is not None:
            memory_bytes = positive_int(memory_bytes, "TrainConfig.check_size memory_bytes")
        for label, shape in self.arrays(vocab_size).items():
            count = math.prod(shape)
            if count > MAX_ELEMENTS:
                dims = " × ".join(str(n) for n in shape)
                raise ArgumentError(
                    f"config sizes too large: one step would make {label} = {dims} = {count:,} "
                    f"values; the package refuses arrays over {MAX_ELEMENTS:,} values (2 GiB). "
                    "Use a smaller context, batch_size or width."
                )
        if memory_bytes is not None and self.peak_bytes(vocab_size) > memory_bytes:
            need, have = self.peak_bytes(vocab_size) / 2**30, memory_bytes / 2**30
            raise ArgumentError(
                f"config sizes too large: one step needs about {need:,.1f} GiB, more than this "
                f"machine's {have:,.1f} GiB of memory. Use a smaller context, batch_size, width "
                "or num_layers."
            )

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (attention options only when not at their default).

        kv_heads, window and qk_norm came later than the runs stored before them: absent means
        the default, so those runs' configs read back equal to what they recorded.
        """
        settings = dataclasses.asdict(self)
        for name, default in ATTENTION_DEFAULTS.items():
            if settings[name] == default:
                del settings[name]
        return settings

    def attention_record(self) -> dict[str, Any]:
        """The attention settings that differ from their defaults (what a checkpoint records)."""
        return {
            k: getattr(self, k) for k, v in ATTENTION_DEFAULTS.items() if getattr(self, k) != v
        }

    def check_attention_record(self, extra: Any, where: str) -> None:
        """Refuse a checkpoint whose recorded attention settings are not this config's."""
        recorded = extra.get("attention", {}) if isinstance(extra, dict) else {}
        if recorded != self.attention_record():
            raise ArgumentError(
                f"{where} was saved by a model with attention settings {recorded or 'default'}; "
                f"this config has {self.attention_record() or 'default'} (kv_heads, window, "
                "qk_norm). Load it with the settings it was trained with."
            )

    def attention_options(self) -> dict[str, Any]:
        """The Decoder's num_kv_heads, window and qk_norm (None for the 0 defaults)."""
        return {
            "num_kv_heads": self.kv_heads or None,
            "window": self.window or None,
            "qk_norm": self.qk_norm,
        }

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with some settings changed (checked again)."""
        unknown = sorted(set(changes) - set(SETTING_TYPES))
        if unknown:
            raise ArgumentError(
                f"unknown config settings {unknown}; known: {list(SETTING_TYPES)}."
            )
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> TrainConfig:
        """Settings from a JSON object; keys not given keep their defaults."""
        return cls().replace(**read_settings(path))


def _typed(name: str, value: Any) -> Any:
    """``value`` if it has the type of setting ``name`` (an int is a float, a bool is neither)."""
    kind = {"int": int, "float": float, "str": str, "bool": bool}[str(SETTING_TYPES[name])]
    if kind is bool:
        if not isinstance(value, bool):
            raise ArgumentError(f"config {name} must be true or false; got {value!r:.60}.")
        return value
    accepted = (int, float) if kind is float else kind
    if isinstance(value, bool) or not isinstance(value, accepted):
        raise ArgumentError(f"config {name} must be {kind.__name__}; got {value!r:.60}.")
    return float(value) if kind is float else value


def read_settings(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in a config file, each key a known setting of the right type.

    Refused: a file that cannot be read, is not UTF-8 JSON, holds NaN or Infinity, repeats a
    key, or is not an object; an unknown key; a value of the wrong type. How the settings fit
    together is checked when the TrainConfig is made (flags may complete them first).
    """
    if not isinstance(path, str | os.PathLike):
        raise ArgumentError(f"config path must be a str or a path; got {type(path).__name__}.")
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text, object_pairs_hook=_unique, parse_constant=_no_constant)
    except (OSError, ValueError, RecursionError) as error:  # ValueError: JSON, UTF-8, NUL
        raise ArgumentError(f"cannot read config {str(path)!r}: {error}") from error
    if not isinstance(data, dict):
        raise ArgumentError(f"config {str(path)!r} must hold a JSON object; got {data!r:.60}.")
    unknown = sorted(set(data) - set(SETTING_TYPES))
    if unknown:
        raise ArgumentError(
            f"config {str(path)!r}: unknown config settings {unknown}; known: "
            f"{list(SETTING_TYPES)}."
        )
    try:
        return {name: _typed(name, value) for name, value in data.items()}
    except ArgumentError as error:
        raise ArgumentError(f"config {str(path)!r}: {error}") from error


SETTING_TYPES = {f.name: f.type for f in dataclasses.fields(TrainConfig)}
ATTENTION_DEFAULTS = {"kv_heads": 0, "window": 0, "qk_norm": False}


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's dict, refusing a key given twice (json keeps the last one silently)."""
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"key {twice[0]!r} appears more than once")
    return dict(pairs)


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number; a setting must be finite")
