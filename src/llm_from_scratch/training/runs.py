"""Stored runs (``book/runs/<name>/``): read back the config, the log, the trained model and,
for a book run, the exact text it was trained and validated on (``corpus.json``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ArgumentError
from ..nn.decoder import Decoder
from ..random import SplitMix64
from ..validate import positive_int
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
    if not isinstance(folder, str | os.PathLike) or "\0" in os.fspath(folder):
        raise ArgumentError(f"load_run needs a folder path; got {folder!r:.60}.")
    root = Path(folder)
    for name in ("config.json", "log.json", "model.npz"):
        if not (root / name).is_file():
            raise ArgumentError(f"a stored run needs {name}; {str(root)!r} has none.")
    config = TrainConfig.from_json(root / "config.json")
    try:
        log = json.loads((root / "log.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        raise ArgumentError(f"cannot read {str(root / 'log.json')!r}: {error}") from error
    task = log.get("task") if isinstance(log, dict) else None
    if not isinstance(task, dict):
        raise ArgumentError(f"{str(root / 'log.json')!r} is not a training log (no 'task').")
    vocab_size = positive_int(task.get("vocab_size"), f"{str(root / 'log.json')!r} vocab_size")
    characters = task.get("characters")
    if characters is not None and not (
        isinstance(characters, str) and len(characters) == vocab_size
    ):
        raise ArgumentError(
            f"{str(root / 'log.json')!r}: 'characters' must be a string of vocab_size = "
            f"{vocab_size} characters; got {characters!r:.40}."
        )
    model = build_model(config, vocab_size, SplitMix64(config.seed), fused=False)
    info = load_checkpoint(root / "model.npz", model)
    config.check_attention_record(info.extra, str(root / "model.npz"))
    step = info.step
    tokenizer = CharTokenizer(list(characters)) if characters else None
    corpus = None
    if (root / CORPUS_FILE).is_file():
        corpus = load_corpus(root / CORPUS_FILE)
        logged = task.get("corpus_sha256")
        if corpus.sha256 != logged:
            raise ArgumentError(
                f"{str(root / CORPUS_FILE)!r} holds text with SHA-256 {corpus.sha256[:12]}…, but "
                f"the log records {str(logged)[:12]}…: the corpus is not the one this run used."
            )
    return StoredRun(config, log, model, tokenizer, step, corpus)
