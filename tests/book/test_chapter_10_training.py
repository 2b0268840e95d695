"""Chapter 10's checks that left the page: train() is the loop the page writes, and the stored
book model scores on its stored validation text what its log says.

The chapter defines one training step (set η, forward, loss, backward, clip, update) and then
calls the package's ``train``; the first test runs that step by hand with the same seed and
schedule and compares the first losses. The second rescores the stored book-prose model one
window at a time, unlike the training command's batches, on the text the run stored.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from llm_from_scratch.autodiff import no_grad
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import (
    IGNORE_INDEX,
    TrainConfig,
    build_model,
    build_optimizer,
    clip_grad_norm,
    cross_entropy,
    learning_rate,
    load_run,
    train,
)
from llm_from_scratch.training.tasks import InductionTask

RUNS = Path(__file__).resolve().parents[2] / "book" / "runs"
CHECK_STEPS = 4


def _chapter_config() -> TrainConfig:
    """A small copying run of the chapter's kind (fewer steps, the same schedule shape)."""
    return TrainConfig(
        task="induction",
        vocab_size=16,
        context=24,
        min_half_length=4,
        max_half_length=12,
        model_width=16,
        num_layers=1,
        num_heads=2,
        hidden_width=32,
        steps=CHECK_STEPS,
        batch_size=4,
        lr=1e-2,
        min_lr=1e-3,
        warmup_steps=2,
        weight_decay=0.1,
        grad_clip=1.0,
        seed=2026,
        eval_every=CHECK_STEPS,
        eval_batches=1,
        checkpoint_every=CHECK_STEPS,
    )


def test_train_runs_the_step_the_chapter_writes(tmp_path) -> None:
    config = _chapter_config()
    result = train(config.replace(output=str(tmp_path)), progress=False)
    rng = SplitMix64(config.seed)
    model = build_model(config, config.vocab_size, rng)
    optimizer = build_optimizer(config, model)
    task = InductionTask(config)
    by_hand = []
    for s in range(CHECK_STEPS):
        inputs, targets = task.train_batch(rng)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(config, s)
        optimizer.zero_grad()
        loss = cross_entropy(model(inputs), targets, ignore_index=IGNORE_INDEX)
        loss.backward()
        clip_grad_norm(model.parameters(), config.grad_clip)
        optimizer.step()
        by_hand.append(loss.item())
    np.testing.assert_allclose(result.losses, by_hand, rtol=1e-12, atol=0)


def test_the_stored_book_model_scores_its_logged_validation_bits() -> None:
    book = load_run(RUNS / "book-prose")
    ids = book.tokenizer.encode(book.corpus.validation)
    context = book.config.context
    nats, count = 0.0, 0
    with no_grad():
        for start in range(0, ids.size - 1, context):
            window = ids[start : start + context + 1]
            if window.size < 2:
                continue
            n = window.size - 1
            nats += n * cross_entropy(book.model(window[None, :-1]), window[None, 1:]).item()
            count += n
    bits = nats / count / math.log(2)
    logged = book.log["final"]["validation_bits_per_char"]
    assert abs(bits - logged) < 1e-9
