"""Stored runs (``book/runs/<name>/``): read back the config, the log, the trained model and,
for a book run, the exact text it was trained and validated on (``corpus.json``)."""

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
from .corpus import TextSplit, load_corpus
from .loop import build_model
from .tasks import CORPUS_FILE
from .tokenizers import CharTokenizer


@dataclass(frozen=True)
class StoredRun:
    """One run folder: config, log, the model from ``model.npz``, tokenizer and stored corpus."""

    config: TrainConfig
    log: dict[str, Any]
    model: Decoder
    tokenizer: CharTokenizer | None  # the book task's characters; None for induction
    step: int
    corpus: TextSplit | None = None  # the book task's train and validation text; None otherwise


def load_run(folder: str | Path) -> StoredRun:
    """config.json + log.json + model.npz (+ corpus.json) → a StoredRun (model at its last step).

    A ``corpus.json`` is checked against the log: its SHA-256 must be the ``corpus_sha256`` the
    run logged, so the text returned is the text the logged numbers were measured on.
    """
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
    corpus = None
    if (root / CORPUS_FILE).is_file():
        corpus = load_corpus(root / CORPUS_FILE)
        logged = log["task"].get("corpus_sha256")
        if corpus.sha256 != logged:
            raise ArgumentError(
                f"{str(root / CORPUS_FILE)!r} holds text with SHA-256 {corpus.sha256[:12]}…, but "
                f"the log records {str(logged)[:12]}…: the corpus is not the one this run used."
            )
    return StoredRun(config, log, model, tokenizer, step, corpus)
