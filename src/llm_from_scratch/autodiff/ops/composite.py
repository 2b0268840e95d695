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

from ...errors import ArgumentError, ShapeError
from ..checks import as_float_array, as_real, broadcasts_to, received
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


@rms_norm.checks
def _(x, gain, eps):
    eps = as_real(eps, "rms_norm's eps")
    if eps < 0:
        raise ArgumentError(f"rms_norm's eps must be at least 0; got {eps}.")
    return {"eps": eps}


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


@pair_rotate.checks
def _(x, cos, sin, partner):
    cos = as_float_array(cos, "pair_rotate's cos")  # copies: the VJP reads all three
    sin = as_float_array(sin, "pair_rotate's sin")
    width = x.shape[-1] if x.ndim else 0
    order = np.array(partner)
    is_permutation = (
        order.shape == (width,)
        and order.dtype.kind in "iu"
        and sorted(order.tolist()) == list(range(width))
    )
    if not is_permutation:
        raise ArgumentError(
            f"pair_rotate's partner must be a permutation of the last axis, 0..{width - 1}; got "
            f"{received(partner)}."
        )
    if not (broadcasts_to(cos.shape, x.shape) and broadcasts_to(sin.shape, x.shape)):
        raise ShapeError(
            f"pair_rotate's cos {cos.shape} and sin {sin.shape} must broadcast to the input "
            f"{x.shape}."
        )
    return {"cos": cos, "sin": sin, "partner": order}


@pair_rotate.vjp
def _(grad, _out, x, cos, sin, partner):
    back = grad * cos
    back[..., partner] += grad * sin  # a permutation: each coordinate receives one share
    return back


@op
def attention_weights(q, k, *bias, scale, blocked, added):
    """softmax over keys of (q·scale) kᵀ + added + bias, blocked keys at weight 0

    A row with no open key (every key blocked, or every score −∞, as when two finite masks of
    −1e308 add up past the float64 range) gets all-zero weights: it reads nothing.
    """
    scores = _bmm(q * scale, np.swapaxes(k, -1, -2))  # (B, H, L, S)
    with np.errstate(over="ignore"):  # sums below −1.8e308 are −∞: those keys are blocked
        if added is not None:
            scores += added
        if bias:
            scores += bias[0]
    if blocked is not None:
        np.copyto(scores, -np.inf, where=blocked)  # exp(−∞) = 0 exactly
    row_max = np.max(scores, axis=-1, keepdims=True, initial=-np.inf)  # (B, H, L, 1)
    empty = np.isneginf(row_max)  # rows with no open key
    if empty.any():
        np.copyto(scores, 0.0, where=empty)  # finite stand-ins, so no 0/0 below
        np.copyto(row_max, 0.0, where=empty)
    weights = softmax_array(scores, -1, row_max)
    if empty.any():
        np.copyto(weights, 0.0, where=empty)  # a row with nothing to read reads nothing
    return weights


@attention_weights.checks
def _(q, k, *bias, scale, blocked, added):
    scale = as_real(scale, "attention_weights' scale")
    if blocked is not None and not (isinstance(blocked, np.ndarray) and blocked.dtype == np.bool_):
        raise ArgumentError(
            f"attention_weights' blocked must be None or a Boolean array; got {received(blocked)}."
        )
    if added is not None:
        array = added if isinstance(added, np.ndarray) else None
        if array is None or array.dtype.kind != "f" or not (array < np.inf).all():  # NaN, +inf
            raise ArgumentError(
                "attention_weights' added must be None or a float array of finite values and "
                f"-inf (the float masks, summed); got {received(added)}, which is not one, or "
                "holds NaN or +inf."
            )
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ShapeError(
            f"attention_weights needs queries [..., L, d] and keys [..., S, d] of one width d; "
            f"got shapes {q.shape} and {k.shape}."
        )
    lead_q, lead_k = q.shape[:-2], k.shape[:-2]
    try:
        lead = lead_q if lead_q == lead_k else np.broadcast_shapes(lead_q, lead_k)
    except ValueError:
        raise ShapeError(
            f"attention_weights: the leading axes of queries {q.shape} and keys {k.shape} must "
            "broadcast."
        ) from None
    scores = (*lead, q.shape[-2], k.shape[-2])
    for label, array in (
        ("blocked", blocked),
        ("added", added),
        ("bias", bias[0] if bias else None),
    ):
        if array is not None and not broadcasts_to(array.shape, scores):
            raise ShapeError(
                f"attention_weights' {label} must broadcast to the scores {scores}; got shape "
                f"{array.shape}."
            )
    return {"scale": scale, "blocked": blocked, "added": added}  # the VJP reads none of them


@attention_weights.vjp
def _(grad, out, q, k, *bias, scale, blocked, added, needs):
    grad_scores = softmax_vjp_array(grad, out, -1)  # zero wherever the weight is zero
    grad_q = _bmm(grad_scores, k) * scale if needs[0] else None
    grad_k = _bmm(np.swapaxes(grad_scores, -1, -2), q) * scale if needs[1] else None
    return (grad_q, grad_k, grad_scores) if bias else (grad_q, grad_k)
