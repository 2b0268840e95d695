"""The handwritten numpy training step equals the engine's: loss, every gradient, the step.

``llm_from_scratch.numpy_block.DecoderStep`` is the limit the engine's training step is timed
against (``python -m benchmarks train-step``); a timing of two different computations would mean
nothing, so here the two must agree to 1e-12 on the Chapter 10 decoder (LayerNorm, RoPE, GELU,
tied head), with and without ignored targets, with clipping acting and not, over three steps
(AdamW's moments and bias correction carry over).
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.numpy_block import DecoderStep
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training.clip import clip_grad_norm
from llm_from_scratch.training.config import TrainConfig
from llm_from_scratch.training.loop import build_model, build_optimizer
from llm_from_scratch.training.loss import cross_entropy

TOLERANCE = 1e-12


def _config(grad_clip: float) -> TrainConfig:
    return TrainConfig(
        task="induction",
        context=12,
        vocab_size=11,
        min_half_length=2,
        max_half_length=5,
        model_width=16,
        num_layers=2,
        num_heads=2,
        hidden_width=24,
        batch_size=3,
        eval_batches=1,
        lr=0.01,
        weight_decay=0.1,
        grad_clip=grad_clip,
    )


def _problem(grad_clip: float, ignore: bool):
    config = _config(grad_clip)
    vocab = 11
    model = build_model(config, vocab, SplitMix64(3))
    rng = SplitMix64(4)
    for name, p in model.named_parameters():  # generic gains and biases, not exactly 1 and 0
        if p.ndim == 1:
            p.value = (1.0 if name.endswith(".gain") else 0.0) + rng.uniform(-0.3, 0.3, p.shape)
    inputs = (rng.uniform(0.0, vocab, (3, 12))).astype(np.int64)
    targets = (rng.uniform(0.0, vocab, (3, 12))).astype(np.int64)
    ignore_index = None
    if ignore:
        ignore_index = -100
        targets[:, :5] = ignore_index  # the first five positions of every row are not counted
    optimizer = build_optimizer(config, model)
    reference = DecoderStep(
        {n: p.value for n, p in model.named_parameters()},
        num_layers=config.num_layers,
        num_heads=config.num_heads,
        lr=config.lr,
        betas=(config.beta1, config.beta2),
        weight_decay=config.weight_decay,
        grad_clip=config.grad_clip,
    )
    return config, model, optimizer, reference, inputs, targets, ignore_index


def _engine_loss(model, optimizer, inputs, targets, ignore_index):
    optimizer.zero_grad()
    return cross_entropy(model(inputs), targets, ignore_index=ignore_index)


@pytest.mark.parametrize("ignore", [False, True], ids=["every target", "ignored targets"])
@pytest.mark.parametrize("grad_clip", [1e-3, 1e3], ids=["clipping", "no clipping"])
def test_handwritten_step_equals_the_engine(grad_clip: float, ignore: bool) -> None:
    problem = _problem(grad_clip, ignore)
    config, model, optimizer, reference, inputs, targets, ignore_index = problem
    for _ in range(3):
        loss = _engine_loss(model, optimizer, inputs, targets, ignore_index)
        loss.backward()
        hand_loss, hand_grads = reference.loss_and_gradients(inputs, targets, ignore_index)
        assert abs(loss.item() - hand_loss) <= TOLERANCE
        for name, p in model.named_parameters():
            assert np.max(np.abs(p.grad - hand_grads[name])) <= TOLERANCE, name
        norm = clip_grad_norm(model.parameters(), config.grad_clip)
        assert abs(reference.clip(hand_grads) - norm) <= TOLERANCE
        assert (norm > grad_clip) == (grad_clip < 1.0)  # the clipping case clips, the other not
        optimizer.step()
        reference.update(hand_grads)
        for name, p in model.named_parameters():
            assert np.max(np.abs(p.value - reference.p[name])) <= TOLERANCE, name
    assert reference.t == 3


def test_handwritten_gradients_match_central_differences() -> None:
    """Independent of the engine: a few entries of each gradient against (L(θ+h) − L(θ−h))/2h."""
    *_, reference, inputs, targets, ignore_index = _problem(1.0, True)
    _, grads = reference.loss_and_gradients(inputs, targets, ignore_index)
    rng = SplitMix64(9)
    h = 1e-6
    for name in reference.names:
        flat = reference.p[name].reshape(-1)
        for i in np.unique((rng.uniform(0.0, 1.0, 2) * flat.size).astype(int)):
            original = flat[i]
            flat[i] = original + h
            up = reference.loss_and_gradients(inputs, targets, ignore_index)[0]
            flat[i] = original - h
            down = reference.loss_and_gradients(inputs, targets, ignore_index)[0]
            flat[i] = original
            assert abs((up - down) / (2 * h) - grads[name].reshape(-1)[i]) < 1e-7, name


def test_handwritten_step_refuses_parameters_of_another_model() -> None:
    *_, reference, _, _, _ = _problem(1.0, False)
    params = dict(reference.p)
    params.pop("decoder.final_norm.bias")
    with pytest.raises(ArgumentError, match="missing"):
        DecoderStep(
            params,
            num_layers=2,
            num_heads=2,
            lr=0.01,
            betas=(0.9, 0.99),
            weight_decay=0.1,
            grad_clip=1.0,
        )
    with pytest.raises(ArgumentError, match="even width"):
        DecoderStep(
            dict(reference.p),
            num_layers=2,
            num_heads=16,
            lr=0.01,
            betas=(0.9, 0.99),
            weight_decay=0.1,
            grad_clip=1.0,
        )
