"""Fused attention: softmax(q kᵀ·scale, blocked → 0) v with its heads merged, one tape entry.

The taught version stays the composed one (``attention_weights``, a matmul with the values,
``merge_heads``: three entries); this op computes the same values in one entry and keeps only
what its VJP reads (q, k, v and the weights), not the per-head outputs before the merge.
``tests/autodiff/test_fused_attention.py`` checks values and gradients against the composed
chain and central differences.
"""

from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ..registry import Example, op
from .composite import _CAUSAL, attention_weights
from .linalg import _bmm

_WEIGHTS = attention_weights.forward  # the composite's forward on arrays: the same softmax


@op(
    example=Example(
        lambda q, k, v: fused_attention(q, k, v, scale=0.5, blocked=_CAUSAL),
        ((1, 2, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2)),
        "causal, 2 heads",
    ),
    saves=True,
)
def fused_attention(q, k, v, scale, blocked):
    """merge_heads(softmax(q·scale kᵀ, blocked keys at 0) v): q, k, v [B,H,T,d] → [B,T,H·d]"""
    weights = _WEIGHTS(q, k, scale=scale, blocked=blocked, added=None)  # (B, H, L, S)
    heads = _bmm(weights, v)  # (B, H, L, d_v)
    batch, num_heads, queries, width = heads.shape
    merged = heads.transpose(0, 2, 1, 3).reshape(batch, queries, num_heads * width)
    return merged, weights


@fused_attention.checks
def _(q, k, v, scale, blocked):
    if q.ndim != 4 or k.shape != q.shape or v.shape[:3] != k.shape[:3]:
        raise ShapeError(
            f"fused_attention needs q and k [B, H, T, d] of one shape and v [B, H, T, d_v]; got "
            f"{q.shape}, {k.shape} and {v.shape}."
        )
    checked = attention_weights.check(q, k, scale=scale, blocked=blocked, added=None)
    return {"scale": checked["scale"], "blocked": checked["blocked"]}


@fused_attention.vjp
def _(grad, _out, q, k, v, scale, blocked, saved, needs):
    weights = saved  # (B, H, L, S)
    batch, num_heads, queries, width = v.shape[0], v.shape[1], q.shape[2], v.shape[3]
    grad_heads = np.ascontiguousarray(
        grad.reshape(batch, queries, num_heads, width).transpose(0, 2, 1, 3)
    )  # (B, H, L, d_v)
    grad_v = _bmm(np.swapaxes(weights, -1, -2), grad_heads) if needs[2] else None
    grad_scores = _bmm(grad_heads, np.swapaxes(v, -1, -2))  # ∂/∂weights, (B, H, L, S)
    # softmax's VJP: p ⊙ (g − ⟨g, p⟩) over keys
    grad_scores -= np.sum(grad_scores * weights, axis=-1, keepdims=True)
    grad_scores *= weights
    grad_q = _bmm(grad_scores, k) * scale if needs[0] else None
    grad_k = _bmm(np.swapaxes(grad_scores, -1, -2), q) * scale if needs[1] else None
    return grad_q, grad_k, grad_v
