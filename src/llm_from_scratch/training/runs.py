"""Stored runs (``book/runs/<name>/``): read back the config, the log and the trained model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ArgumentError
from ..nn.decoder import Decoder
from ..random import SplitMix64
from .checkpoint import load_checkpoint
from .config import TrainConfig
from .loop import build_model
from .tokenizers import CharTokenizer


@dataclass(frozen=True)
class StoredRun:
    """One run folder: its config, its log, the model from ``model.npz`` and its tokenizer."""

    config: TrainConfig
    log: dict[str, Any]
    model: Decoder
    tokenizer: CharTokenizer | None  # the book task's characters; None for induction
    step: int


def load_run(folder: str | Path) -> StoredRun:
    """config.json + log.json + model.npz → a StoredRun (the model at its last saved step)."""
    root = Path(folder)
    for name in ("config.json", "log.json", "model.npz"):
        if not (root / name).is_file():
            raise ArgumentError(f"a stored run needs {name}; {str(root)!r} has none.")
    config = TrainConfig.from_json(root / "config.json")
    log = json.loads((root / "log.json").read_text(encoding="utf-8"))
    model = build_model(config, int(log["task"]["vocab_size"]), SplitMix64(config.seed))
    step = load_checkpoint(root / "model.npz", model).step
    characters = log["task"].get("characters")
    tokenizer = CharTokenizer(list(characters)) if characters else None
    return StoredRun(config, log, model, tokenizer, step)
