"""fused_attention equals the composed chain it stands for: values, gradients, gradcheck.

The chain is the taught one: ``attention_weights`` (scores, causal block, softmax), the product
with the values, ``merge_heads``. The fused op must give the same output and the same gradients
for q, k and v, and its gradients must match central differences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, ops, recorded_ops
from llm_from_scratch.errors import ShapeError
from llm_from_scratch.random import SplitMix64

B, H, T, D = 2, 3, 5, 4
CAUSAL = np.triu(np.ones((T, T), dtype=bool), 1)


def _inputs(seed: int = 11):
    rng = SplitMix64(seed)
    return [Tensor(rng.uniform(-1, 1, (B, H, T, D)), requires_grad=True) for _ in range(3)]


def _numpy_attention(q, k, v, blocked):
    """Independent numpy: softmax(q kᵀ / √d, blocked → −∞) v, heads merged."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(D)
    if blocked is not None:
        scores = np.where(blocked, -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    heads = (e / e.sum(axis=-1, keepdims=True)) @ v
    return heads.transpose(0, 2, 1, 3).reshape(B, T, H * D)


@pytest.mark.parametrize("blocked", [CAUSAL, None], ids=["causal", "open"])
def test_values_and_gradients_equal_the_composed_chain(blocked) -> None:
    seed = SplitMix64(3).uniform(-1, 1, (B, T, H * D))
    fused_inputs, chain_inputs = _inputs(), _inputs()
    scale = 1.0 / math.sqrt(D)
    fused = ops.fused_attention(*fused_inputs, scale=scale, blocked=blocked)
    weights = ops.attention_weights(
        chain_inputs[0], chain_inputs[1], scale=scale, blocked=blocked, added=None
    )
    chain = ops.merge_heads(weights @ chain_inputs[2])
    assert recorded_ops(fused) == {"fused_attention": 1}
    np.testing.assert_allclose(
        fused.value, _numpy_attention(*(t.value for t in fused_inputs), blocked), atol=1e-14
    )
    np.testing.assert_allclose(fused.value, chain.value, rtol=0, atol=1e-15)
    fused.backward(seed)
    chain.backward(seed)
    for a, b in zip(fused_inputs, chain_inputs, strict=True):
        np.testing.assert_allclose(a.grad, b.grad, rtol=0, atol=1e-14)


def test_gradients_match_central_differences() -> None:
    q, k, v = _inputs(5)
    report = gradcheck(
        lambda a, b, c: ops.fused_attention(a, b, c, scale=0.5, blocked=CAUSAL), [q, k, v]
    )
    assert report.passed


def test_mismatched_shapes_are_refused() -> None:
    q, k, v = _inputs()
    with pytest.raises(ShapeError, match="fused_attention"):
        ops.fused_attention(q, k[:, :, :2], v, scale=0.5, blocked=None)
