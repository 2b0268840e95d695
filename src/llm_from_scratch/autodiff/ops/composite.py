"""Composite ops: one recorded op where a layer would otherwise record a chain of primitives.

Each forward computes exactly what the chain of primitive ops computes, in the same order, so
the values are bit-for-bit the same (``tests/autodiff/test_composite_ops.py`` checks this and
checks the gradients against the chain's and against central differences). What they save is
bookkeeping: one tape entry instead of four to seven, and no intermediate array kept alive for a
backward pass that does not need it (the scores before the softmax, the un-normalised token, the
partner coordinates of a rotation).
"""

from __future__ import annotations

import numpy as np

from ..registry import op
from .linalg import _bmm
from .reductions import softmax_array, softmax_vjp_array


@op(saves=True)
def rms_norm(x, gain, eps):
    """γ ⊙ x / √(Σ_j x_j² / D + ε) over the last axis (RMSNorm's chain of seven ops)"""
    width = x.shape[-1]
    mean_square = np.sum(x * x, axis=-1, keepdims=True) * (1.0 / width if width else np.nan)
    root = np.sqrt(mean_square + eps)  # (..., 1)
    return x / root * gain, root


@rms_norm.vjp
def _(grad, _out, x, gain, eps, saved, needs):
    root = saved  # (..., 1)
    normalized = x / root  # x̂ = x / r, recomputed rather than kept from the forward
    grad_gain = grad * normalized if needs[1] else None  # summed over tokens by the engine
    if not needs[0]:
        return None, grad_gain
    grad_hat = grad * gain  # ∂/∂x̂
    inner = np.sum(grad_hat * normalized, axis=-1, keepdims=True) * (1.0 / x.shape[-1])
    grad_hat -= normalized * inner  # ∂x̂_i/∂x_j = (δ_ij − x̂_i x̂_j / D) / r
    grad_hat /= root
    return grad_hat, grad_gain


@op
def pair_rotate(x, cos, sin, partner):
    """x ⊙ cos + x[..., partner] ⊙ sin: RoPE's rotation, partner a permutation of the last axis"""
    return x * cos + x[..., partner] * sin


@pair_rotate.vjp
def _(grad, _out, x, cos, sin, partner):
    back = grad * cos
    back[..., partner] += grad * sin  # a permutation: each coordinate receives one share
    return back


@op
def attention_weights(q, k, *bias, scale, blocked, added):
    """softmax over keys of (q·scale) kᵀ + added + bias, blocked keys at weight 0"""
    scores = _bmm(q * scale, np.swapaxes(k, -1, -2))  # (B, H, L, S)
    if added is not None:
        scores += added
    if bias:
        scores += bias[0]
    empty = None
    if blocked is not None:
        empty = np.broadcast_to(blocked, scores.shape).all(axis=-1, keepdims=True)
        np.copyto(scores, -np.inf, where=blocked)  # exp(−∞) = 0 exactly
        if empty.any():
            np.copyto(scores, 0.0, where=empty)  # finite stand-in for rows with no open key
        else:
            empty = None
    weights = softmax_array(scores, -1)
    if empty is not None:
        np.copyto(weights, 0.0, where=empty)  # a row with nothing to read reads nothing
    return weights


@attention_weights.vjp
def _(grad, out, q, k, *bias, scale, blocked, added, needs):
    grad_scores = softmax_vjp_array(grad, out, -1)  # zero wherever the weight is zero
    grad_q = _bmm(grad_scores, k) * scale if needs[0] else None
    grad_k = _bmm(np.swapaxes(grad_scores, -1, -2), q) * scale if needs[1] else None
    return (grad_q, grad_k, grad_scores) if bias else (grad_q, grad_k)
