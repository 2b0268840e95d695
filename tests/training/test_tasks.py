"""The book task's validation measure covers every adjacent pair once, in bits per character."""

from __future__ import annotations

import math

import numpy as np
import pytest

import llm_from_scratch.training.loss as loss_module
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import TrainConfig, build_model, cross_entropy
from llm_from_scratch.training.tasks import BookTask


def _book(tmp_path) -> BookTask:
    for name, body in (("a.md", "the cat sat on the mat. " * 5), ("b.md", "a dog, a log. " * 7)):
        (tmp_path / name).write_text(body + "\n", encoding="utf-8")
    config = TrainConfig(
        task="book",
        book_dir=str(tmp_path),
        context=8,
        batch_size=3,
        model_width=8,
        num_heads=2,
        hidden_width=16,
        num_layers=1,
        validation_fraction=0.3,
    )
    return BookTask(config)


def test_uniform_model_scores_log2_v_bits(tmp_path) -> None:
    task = _book(tmp_path)
    model = build_model(task.config, task.vocab_size, SplitMix64(0))
    model.embedding.weight.value = np.zeros_like(model.embedding.weight.value)  # logits all 0
    bits = task.evaluate(model)["validation_bits_per_char"]
    assert bits == pytest.approx(math.log2(task.vocab_size), rel=1e-12)


def test_every_validation_pair_is_scored_once(tmp_path, monkeypatch) -> None:
    task = _book(tmp_path)
    model = build_model(task.config, task.vocab_size, SplitMix64(0))
    seen: list[np.ndarray] = []

    def recording(logits, targets, ignore_index=None):
        seen.append(np.asarray(targets).reshape(-1))
        return cross_entropy(logits, targets, ignore_index)

    monkeypatch.setattr(loss_module, "cross_entropy", recording)  # the seam tasks.py calls
    task.evaluate(model)
    ids = task.validation_ids
    assert len(ids) > 3 * task.config.context  # several batches and a shorter last window
    np.testing.assert_array_equal(np.concatenate(seen), ids[1:])
