"""Composite ops: one recorded op where a layer would otherwise record a chain of primitives.

Each forward computes what the chain of primitive ops computes, in the same order, so the values
are bit-for-bit the same, except where a cheaper but equally exact formula is used and the
values then agree to rounding (attention's softmax multiplies by one reciprocal per row instead
of dividing every weight; ``tests/autodiff/test_composite_ops.py`` checks the values and checks
the gradients against the chain's and against central differences). What they save is
bookkeeping: one tape entry instead of four to seven, and no intermediate array kept alive for a
backward pass that does not need it (the scores before the softmax, the un-normalised token, the
partner coordinates of a rotation).
"""

from __future__ import annotations

import numpy as np

from ...errors import ArgumentError, ShapeError
from ...validate import as_float_array, as_real, broadcasts_to, received
from ..registry import Example, op
from .linalg import _bmm

# The gradient-check examples' fixed arrays: two rotation angles, and a causal mask over 3 steps.
_ANGLES = np.array([0.7, -2.1])
_ROTATION = {
    "cos": np.repeat(np.cos(_ANGLES), 2),
    "sin": np.stack([-np.sin(_ANGLES), np.sin(_ANGLES)], axis=-1).ravel(),
    "partner": np.array([1, 0, 3, 2]),
}
_CAUSAL = np.triu(np.ones((3, 3), dtype=bool), 1)


@op(
    example=Example(lambda a, g: rms_norm(a, g, eps=1e-6), ((2, 3), (3,)), "input and gain"),
    saves=True,
)
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


@op(
    example=Example(
        lambda a, g, b: layer_norm(a, g, b, eps=1e-5), ((2, 3), (3,), (3,)), "input, gain and bias"
    ),
    saves=True,
)
def layer_norm(x, gain, bias, eps):
    """γ ⊙ (x − μ) / √(σ² + ε) + β, μ and σ² = Σ_j (x_j − μ)² / D over the last axis

    LayerNorm's chain of ten ops (mean, subtract, square, mean, add, sqrt, divide, scale, shift),
    in the same order, so the values are the chain's bit for bit.
    """
    width = x.shape[-1]
    per_feature = 1.0 / width if width else np.nan
    centred = x - np.sum(x, axis=-1, keepdims=True) * per_feature  # (..., D)
    variance = np.sum(centred * centred, axis=-1, keepdims=True) * per_feature  # (..., 1)
    root = np.sqrt(variance + eps)  # (..., 1)
    centred /= root  # x̂, kept for the VJP
    out = centred * gain
    out += bias
    return out, (centred, root)


@layer_norm.checks
def _(x, gain, bias, eps):
    eps = as_real(eps, "layer_norm's eps")
    if eps < 0:
        raise ArgumentError(f"layer_norm's eps must be at least 0; got {eps}.")
    return {"eps": eps}


@layer_norm.vjp
def _(grad, _out, _x, gain, bias, eps, saved, needs):
    normalized, root = saved  # x̂ (..., D), r (..., 1)
    grad_gain = grad * normalized if needs[1] else None  # summed over tokens by the engine
    grad_bias = grad if needs[2] else None
    if not needs[0]:
        return None, grad_gain, grad_bias
    # ∂x̂_i/∂x_j = (δ_ij − 1/D − x̂_i x̂_j / D) / r, applied to ĝ = g ⊙ γ:
    # ∂/∂x = (ĝ − mean(ĝ) − x̂ ⊙ mean(ĝ ⊙ x̂)) / r
    grad_hat = grad * gain  # (..., D)
    per_feature = 1.0 / _x.shape[-1]
    inner = np.sum(grad_hat * normalized, axis=-1, keepdims=True) * per_feature  # (..., 1)
    grad_hat -= np.sum(grad_hat, axis=-1, keepdims=True) * per_feature
    grad_hat -= normalized * inner
    grad_hat /= root
    return grad_hat, grad_gain, grad_bias


@op(
    example=Example(lambda a: pair_rotate(a, **_ROTATION), ((2, 4),), "partners (1, 0, 3, 2)"),
)
def pair_rotate(x, cos, sin, partner):
    """x ⊙ cos + x[..., partner] ⊙ sin: RoPE's rotation, partner a permutation of the last axis"""
    # Heads split from tokens arrive as a permuted view: one copy into row order first makes the
    # gather and the products below contiguous, and the result row-ordered for the score matmul.
    x = np.ascontiguousarray(x)
    out = x.take(partner, axis=-1)  # x[..., partner], row-ordered (indexing would not be)
    out *= sin
    out += x * cos  # the same sum as x ⊙ cos + x[..., partner] ⊙ sin, bit for bit
    return out


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
def _(grad, _out, _x, cos, sin, partner):
    # y_c = x_c cos_c + x_p(c) sin_c, so ∂/∂x_j = g_j cos_j + (g ⊙ sin)_c at the c with p(c) = j:
    # a gather through the inverse permutation, each coordinate receiving its one share exactly
    # as a scattered add would give it (RoPE's partners are their own inverse: p⁻¹ = p).
    inverse = np.empty_like(partner)
    inverse[partner] = np.arange(partner.size)
    shares = grad * sin  # (..., d)
    back = shares.take(inverse, axis=-1)
    back += np.multiply(grad, cos, out=shares)  # g ⊙ cos + (g ⊙ sin)[..., p⁻¹]
    return back


@op(
    example=Example(
        lambda q, k: attention_weights(q, k, scale=0.5, blocked=_CAUSAL, added=None),
        ((1, 2, 3, 2), (1, 2, 3, 2)),
        "causal, 2 heads",
    ),
)
def attention_weights(q, k, *bias, scale, blocked, added):
    """softmax over keys of (q·scale) kᵀ + added + bias, blocked keys at weight 0

    A row with no open key (every key blocked, or every score −∞, as when two finite masks of
    −1e308 add up past the float64 range) gets all-zero weights: it reads nothing.
    """
    if _exact_scale(scale) and k.size < q.size:  # a power of two scales either side exactly
        scores = _bmm(q, np.swapaxes(k * scale, -1, -2))  # (B, H, L, S)
    else:
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
    any_empty = bool(empty.any())
    if any_empty:
        np.copyto(scores, 0.0, where=empty)  # finite stand-ins, so no 0/0 below
        np.copyto(row_max, 0.0, where=empty)
    # The softmax in place on the fresh scores: exp(s − max) / Σ exp(s − max), no new arrays.
    # s − max below −1.8e308 is −∞, whose exp is 0 exactly; a row's sum is at least 1 (its
    # largest key gives e⁰), so 1 / 0 happens only on an empty key axis, where nothing is scaled.
    with np.errstate(over="ignore", divide="ignore"):
        scores -= row_max
        np.exp(scores, out=scores)
        scores *= 1.0 / scores.sum(axis=-1, keepdims=True)  # a division per row, not per weight
    if any_empty:
        np.copyto(scores, 0.0, where=empty)  # a row with nothing to read reads nothing
    return scores  # the weights


def _exact_scale(scale: float) -> bool:
    """Whether multiplying by ``scale`` is exact: a power of two (bar under- and overflow)."""
    return scale != 0.0 and np.frexp(scale)[0] == 0.5


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
    # p ⊙ (g − ⟨g, p⟩) over keys, in one fresh array: zero wherever the weight is zero
    grad_scores = grad * out  # (B, H, L, S)
    inner = np.sum(grad_scores, axis=-1, keepdims=True)  # (B, H, L, 1)
    np.subtract(grad, inner, out=grad_scores)
    grad_scores *= out
    grad_q = grad_k = None
    if needs[0]:
        grad_q = _bmm(grad_scores, k)  # (B, H, L, d)
        grad_q *= scale
    if needs[1]:
        grad_k = _bmm(np.swapaxes(grad_scores, -1, -2), q)  # (B, H, S, d)
        grad_k *= scale
    return (grad_q, grad_k, grad_scores) if bias else (grad_q, grad_k)
