"""cross_entropy against hand-computed values, the closed-form gradient and central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck
from llm_from_scratch.errors import ArgumentError, ShapeError, TokenError
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import cross_entropy


def test_two_rows_by_hand() -> None:
    # Row 1: logits (0, ln 3) → p = (1/4, 3/4); target 1 → −ln(3/4). Row 2: uniform over 2 → ln 2.
    logits = np.array([[0.0, math.log(3.0)], [5.0, 5.0]])
    loss = cross_entropy(Tensor(logits), np.array([1, 0]))
    assert loss.item() == pytest.approx((-math.log(0.75) + math.log(2.0)) / 2, rel=1e-14)


def test_gradient_is_softmax_minus_one_hot_over_count() -> None:
    rng = SplitMix64(3)
    logits = Tensor(rng.uniform(-2, 2, (2, 3, 5)), requires_grad=True)
    targets = np.array([[0, 4, -100], [2, -100, 1]])
    cross_entropy(logits, targets, ignore_index=-100).backward()
    z = logits.value
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    expected = np.zeros_like(z)
    for b, t in np.ndindex(2, 3):
        if targets[b, t] != -100:
            expected[b, t] = p[b, t] - np.eye(5)[targets[b, t]]
    np.testing.assert_allclose(logits.grad, expected / 4, rtol=1e-12, atol=1e-15)


def test_ignored_targets_leave_numerator_and_denominator() -> None:
    z = np.array([[1.0, 2.0, 3.0], [9.0, -9.0, 0.0], [0.5, 0.5, 0.0]])
    counted = cross_entropy(Tensor(z[[0, 2]]), np.array([2, 1])).item()
    masked = cross_entropy(Tensor(z), np.array([2, 7, 1]), ignore_index=7).item()
    lse = [math.log(sum(math.exp(v) for v in row)) for row in z]
    by_hand = ((lse[0] - 3.0) + (lse[2] - 0.5)) / 2
    assert masked == pytest.approx(by_hand, rel=1e-14)
    assert counted == pytest.approx(by_hand, rel=1e-14)


def test_central_differences() -> None:
    rng = SplitMix64(11)
    z = rng.uniform(-1, 1, (3, 4))
    targets = np.array([3, -1, 0])
    result = gradcheck(lambda x: cross_entropy(x, targets, ignore_index=-1), [z], atol=1e-8)
    assert result.passed, result.message


@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e3, 1e150, 1e300])
def test_stable_for_any_magnitude(scale: float) -> None:
    # Logits (s, 0, −s), target 0: loss = log(1 + e^{−s} + e^{−2s}), about e^{−s} for large s.
    logits = Tensor(np.array([[scale, 0.0, -scale]]), requires_grad=True)
    loss = cross_entropy(logits, np.array([0]))
    assert loss.item() == pytest.approx(math.log1p(math.exp(-scale) + math.exp(-2 * scale)))
    loss.backward()
    assert np.all(np.isfinite(logits.grad))
    # Target 2 at huge scale: loss ≈ 2s, finite.
    far = cross_entropy(Tensor(np.array([[scale, 0.0, -scale]])), np.array([2])).item()
    assert far == pytest.approx(2 * scale + math.log1p(math.exp(-scale) + math.exp(-2 * scale)))


def test_loss_at_initialisation_is_about_ln_v() -> None:
    vocab, width = 95, 64
    model = Decoder(vocab, width, 2, 4, 4 * width, rng=SplitMix64(0))
    ids = (np.arange(4 * 32).reshape(4, 32) * 7) % vocab
    targets = np.roll(ids, -1, axis=1)
    # Exact: a zero vocabulary matrix makes every logit 0, so p = 1/V and the loss is ln V.
    with_zero = Decoder(vocab, width, 1, 4, 4 * width, rng=SplitMix64(0), tie_embeddings=False)
    with_zero.head_weight.value = np.zeros((vocab, width))
    assert cross_entropy(with_zero(ids), targets).item() == pytest.approx(math.log(vocab), 1e-12)
    # Random init: logits = x·w, x LayerNorm-ed (Σx² = D), w ~ U(−a, a) with a² = 6/(V + D), so
    # Var(logit) ≈ D·a²/3 and the loss ≈ ln V + Var/2 to second order.
    variance = width * (6.0 / (vocab + width)) / 3.0
    loss = cross_entropy(model(ids), targets).item()
    assert abs(loss - (math.log(vocab) + variance / 2)) < 0.25
    assert abs(loss - math.log(vocab)) < 0.8


def test_refusals() -> None:
    z = Tensor(np.zeros((2, 3)))
    with pytest.raises(ShapeError, match="one target per logit row"):
        cross_entropy(z, np.array([0, 1, 2]))
    with pytest.raises(TokenError, match="integers"):
        cross_entropy(z, np.array([0.0, 1.0]))
    with pytest.raises(TokenError, match=r"\[0, 3\)"):
        cross_entropy(z, np.array([0, 3]))
    with pytest.raises(ArgumentError, match="no target"):
        cross_entropy(z, np.array([-1, -1]), ignore_index=-1)
    with pytest.raises(ArgumentError, match="finite logits"):
        cross_entropy(Tensor(np.array([[0.0, np.nan, 1.0]])), np.array([0]))
    with pytest.raises(ShapeError, match="V ≥ 1"):
        cross_entropy(Tensor(np.zeros((2, 0))), np.array([0, 0]))
