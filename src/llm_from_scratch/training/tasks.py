"""The two tasks the training command knows: what a batch is, and how a model is judged.

``induction``: batches from :func:`induction_batch`; judged by the loss on the repeated half of
fixed held-out batches (their own generator, so evaluating never moves the training stream),
against the baseline ln V. ``book``: random windows of the training prose; judged by validation
bits per character over every adjacent pair of the validation text, against the smoothed bigram
baseline on the same split and the same pairs. A book run stores the split it read as
``corpus.json`` in its folder (:meth:`BookTask.store`), and a resumed run reads that file instead
of the chapters, which may have changed since.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..errors import ArgumentError
from ..nn.decoder import Decoder
from ..random import SplitMix64
from . import loss as loss_module  # loss_module.cross_entropy: looked up per call (one seam)
from .config import TrainConfig
from .corpus import TextSplit, bigram_bits_per_char, book_prose_split, save_corpus
from .data import IGNORE_INDEX, induction_batch, random_windows
from .tokenizers import CharTokenizer

EVAL_SEED_OFFSET = 0x5EED  # held-out induction batches come from SplitMix64(seed + this)
CORPUS_FILE = "corpus.json"  # in a book run's folder: the exact train and validation text


class InductionTask:
    """L random tokens then the same L again; loss counted on the repeated half."""

    name = "induction"
    ignore_index: int | None = IGNORE_INDEX

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.vocab_size = config.vocab_size
        self.tokens_per_row = config.context
        held_out = SplitMix64(config.seed + EVAL_SEED_OFFSET)
        self.eval_set = [self.train_batch(held_out) for _ in range(config.eval_batches)]

    def describe(self) -> dict[str, Any]:
        """What the log records about the task: its vocabulary and its baseline."""
        return {
            "vocab_size": self.vocab_size,
            "tokens_per_row": self.tokens_per_row,
            "baseline": {
                "name": "uniform ln V (nats per token)",
                "value": math.log(self.vocab_size),
            },
        }

    def train_batch(self, rng: SplitMix64) -> tuple[np.ndarray, np.ndarray]:
        """One batch (inputs, targets) [B, T]."""
        c = self.config
        lengths = (c.min_half_length, c.max_half_length)
        return induction_batch(c.batch_size, c.context, c.vocab_size, rng, half_lengths=lengths)

    def evaluate(self, model: Decoder) -> dict[str, float]:
        """Loss per counted token on the repeated half of the held-out batches, in nats."""
        with no_grad():
            losses = [
                loss_module.cross_entropy(model(x), y, ignore_index=IGNORE_INDEX).item()
                for x, y in self.eval_set
            ]
        counts = [int(np.sum(y != IGNORE_INDEX)) for _, y in self.eval_set]
        return {"repeated_half_loss": float(np.dot(losses, counts) / np.sum(counts))}

    def store(self, folder: Path) -> None:
        """Nothing to store (the batches follow from the seed); drop an earlier run's corpus."""
        (Path(folder) / CORPUS_FILE).unlink(missing_ok=True)


class BookTask:
    """Character-level prose of the book's chapters, with a held-out tail of each chapter."""

    name = "book"
    ignore_index: int | None = None

    def __init__(self, config: TrainConfig, split: TextSplit | None = None) -> None:
        """The chapters in ``config.book_dir`` as they are now, or a stored ``split``."""
        self.config = config
        if split is None:
            paths = sorted(Path(config.book_dir).glob("*.md"))
            if not paths:
                raise ArgumentError(f"task 'book' found no *.md files in {config.book_dir!r}.")
            split = book_prose_split(paths, config.validation_fraction)
        self.split = split
        text = self.split.train + self.split.validation
        self.tokenizer = CharTokenizer.from_text(text)  # vocabulary: every character of the prose
        self.vocab_size = self.tokenizer.vocab_size
        self.train_ids = self.tokenizer.encode(self.split.train)
        self.validation_ids = self.tokenizer.encode(self.split.validation)
        self.tokens_per_row = config.context
        self.bigram_bits = bigram_bits_per_char(
            self.train_ids, self.validation_ids, self.vocab_size
        )
        self.corpus_sha256 = self.split.sha256

    def describe(self) -> dict[str, Any]:
        """What the log records: corpus size and hash, vocabulary, the bigram baseline."""
        return {
            "vocab_size": self.vocab_size,
            "characters": "".join(self.tokenizer.characters),
            "sources": list(self.split.sources),
            "train_chars": len(self.split.train),
            "validation_chars": len(self.split.validation),
            "corpus_sha256": self.corpus_sha256,
            "baseline": {
                "name": "add-0.1 bigram, validation bits per character",
                "value": self.bigram_bits,
            },
        }

    def train_batch(self, rng: SplitMix64) -> tuple[np.ndarray, np.ndarray]:
        """Random windows of the training prose (inputs, targets) [B, T]."""
        return random_windows(self.train_ids, self.config.batch_size, self.config.context, rng)

    def evaluate(self, model: Decoder) -> dict[str, float]:
        """Validation bits per character: every pair (xᵢ, xᵢ₊₁), windows of T tiling the text."""
        ids, context, size = self.validation_ids, self.config.context, self.config.batch_size
        rows = [ids[s : s + context + 1] for s in range(0, ids.size - 1, context)]
        full = [r for r in rows if r.size == context + 1]
        groups = [full[i : i + size] for i in range(0, len(full), size)]
        groups += [[r] for r in rows if r.size != context + 1]  # the shorter last window
        total, count = 0.0, 0
        with no_grad():
            for group in groups:
                batch = np.stack(group)  # (b, t + 1)
                n = batch[:, 1:].size
                total += n * loss_module.cross_entropy(model(batch[:, :-1]), batch[:, 1:]).item()
                count += n
        return {"validation_bits_per_char": total / count / math.log(2.0)}

    def store(self, folder: Path) -> None:
        """Write the split to ``folder/corpus.json``, so the run can be measured again later."""
        save_corpus(Path(folder) / CORPUS_FILE, self.split)


def make_task(config: TrainConfig, split: TextSplit | None = None) -> InductionTask | BookTask:
    """The task object ``config.task`` names (the book task on ``split`` if given)."""
    if config.task == "induction":
        if split is not None:
            raise ArgumentError("the induction task reads no corpus; got a stored split.")
        return InductionTask(config)
    return BookTask(config, split)
