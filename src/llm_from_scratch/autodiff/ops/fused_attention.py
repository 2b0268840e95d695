"""Fused attention core: the projections' rows in, the merged heads out, one tape entry.

The taught version is the composed chain a :class:`~..nn.attention.MultiHeadAttention` records
between its projections and its output projection: ``split_heads`` of q, k and v, RoPE's
``pair_rotate`` of q and k, ``attention_weights``, the ``matmul`` of the weights with the values
and ``merge_heads``: eight entries. ``fused_attention`` records one. Its forward calls those
ops' own array functions in the chain's order, and its VJP calls their own VJPs in the chain's
reverse order, so the output and every gradient are the chain's bit for bit
(``tests/autodiff/test_fused_attention.py`` asserts equality, not closeness). It keeps what
those VJPs read (the weights, the rotated q and k, the split v) and lets the projections go.

The weights [B, H, T, T] get a tape entry of their own (``fused_attention_weights``, built by
:func:`fused_attention_with_weights` on the same saved arrays, no copy): a loss that reads them
sends its gradient back through the softmax, the rotation and the split to q and k. A backward
that reaches both the output and the weights sums the two paths' shares at q and k (the chain
sums them at the weights instead: the same gradient, equal to rounding).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ArgumentError, ShapeError
from ..registry import Example, _constant, op
from ..tensor import TapeEntry, Tensor, creation_numbers, grad_mode
from .composite import attention_weights, pair_rotate
from .linalg import matmul
from .shape import merge_heads, split_heads

__all__ = ["fused_attention", "fused_attention_weights", "fused_attention_with_weights"]

# The gradient-check examples: 3 tokens, 2 heads of width 4, causal, RoPE-style tables per
# position (interleaved pairs: partner 2j ↔ 2j + 1).
_ANGLES = np.array([[0.3, -1.2], [0.9, 0.4], [-2.0, 1.5]])  # (T, d_h / 2)
_EXAMPLE = {
    "heads": 2,
    "scale": 0.5,
    "blocked": np.triu(np.ones((3, 3), dtype=bool), 1),
    "cos": np.repeat(np.cos(_ANGLES), 2, axis=-1),  # (T, d_h)
    "sin": np.stack([-np.sin(_ANGLES), np.sin(_ANGLES)], axis=-1).reshape(3, 4),
    "partner": np.array([1, 0, 3, 2]),
}
_ROWS = ((1, 3, 8), (1, 3, 8), (1, 3, 8))


_ZERO = np.zeros(1)
_ZERO.flags.writeable = False


def _stand_in(shape: tuple[int, ...]) -> np.ndarray:
    """A read-only zero-memory array of ``shape`` (every entry one 0): what a check reads."""
    return np.ndarray(shape, np.float64, _ZERO, 0, (0,) * len(shape))


@op(
    example=Example(
        lambda q, k, v: fused_attention(q, k, v, **_EXAMPLE), _ROWS, "causal, RoPE, 2 heads"
    ),
    saves=True,
)
def fused_attention(
    q_rows, k_rows, v_rows, heads, scale, blocked, cos=None, sin=None, partner=None
):
    """merge(softmax(rot(split q)·scale rot(split k)ᵀ, blocked → 0) split v): [B,T,D] → [B,T,D]

    ``rot`` is ``pair_rotate`` with the tables (cos, sin, partner), or nothing when all three
    are None. The chain's own array functions, in its order.
    """
    q = split_heads.forward(q_rows, heads=heads)  # (B, H, T, d_h)
    k = split_heads.forward(k_rows, heads=heads)  # (B, H, T, d_h)
    v = split_heads.forward(v_rows, heads=heads)  # (B, H, T, d_v)
    if partner is not None:  # RoPE: q and k rotated, row t by t·ω
        q = pair_rotate.forward(q, cos=cos, sin=sin, partner=partner)
        k = pair_rotate.forward(k, cos=cos, sin=sin, partner=partner)
    weights = attention_weights.forward(q, k, scale=scale, blocked=blocked, added=None)
    merged = merge_heads.forward(matmul.forward(weights, v))  # (B, H, T, d_v) → (B, T, H·d_v)
    return merged, (weights, q, k, v)  # what the chain's VJPs read


@fused_attention.checks
def _(q_rows, k_rows, v_rows, heads, scale, blocked, cos, sin, partner):
    if q_rows.ndim != 3 or k_rows.shape != q_rows.shape or v_rows.shape[:-1] != q_rows.shape[:-1]:
        raise ShapeError(
            "fused_attention needs the projections' rows q and k [B, T, D] of one shape and v "
            f"[B, T, D_v] of the same B and T; got {q_rows.shape}, {k_rows.shape} and "
            f"{v_rows.shape}. Pass the outputs of the query, key and value layers."
        )
    heads = split_heads.check(q_rows, heads=heads)["heads"]
    split_heads.check(v_rows, heads=heads)
    batch, tokens, width = q_rows.shape
    split = _stand_in((batch, heads, tokens, width // heads))  # q and k after split_heads
    tables = (cos, sin, partner)
    rotation = {"cos": None, "sin": None, "partner": None}
    if any(t is not None for t in tables):
        if any(t is None for t in tables):
            raise ArgumentError(
                "fused_attention rotates q and k with all three of cos, sin and partner (the "
                "tables pair_rotate reads), or not at all with all three None; got "
                f"{', '.join(n for n, t in zip(rotation, tables, strict=True) if t is None)} "
                "None. Pass RotaryEmbedding's tables, or none of them."
            )
        rotation = pair_rotate.check(split, cos=cos, sin=sin, partner=partner)  # copies
    checked = attention_weights.check(split, split, scale=scale, blocked=blocked, added=None)
    return {"heads": heads, "scale": checked["scale"], "blocked": blocked, **rotation}


@fused_attention.vjp
def _(
    grad, _out, _q_rows, _k_rows, _v_rows, heads, scale, blocked, cos, sin, partner, saved, needs
):
    weights, q, k, v = saved  # (B, H, T, T), rotated q and k, split v (B, H, T, d)
    # merge_heads's VJP reads only its input's shape, the heads' (B, H, T, d_v): v's shape
    grad_heads = merge_heads.backward(grad, None, v)
    scores_wanted = needs[0] or needs[1]  # the weights depend on q and k
    grad_weights, grad_v = matmul.backward(
        grad_heads, None, weights, v, needs=[scores_wanted, needs[2]]
    )
    grad_v_rows = split_heads.backward(grad_v, None, _v_rows, heads=heads) if needs[2] else None
    if not scores_wanted:
        return None, None, grad_v_rows
    grad_q_rows, grad_k_rows = _scores_vjp(
        grad_weights,
        weights,
        q,
        k,
        _q_rows,
        _k_rows,
        heads,
        scale,
        blocked,
        cos,
        sin,
        partner,
        needs,
    )
    return grad_q_rows, grad_k_rows, grad_v_rows


def _scores_vjp(
    grad_weights: np.ndarray,
    weights: np.ndarray,
    q: np.ndarray,
    k: np.ndarray,
    q_rows: np.ndarray,
    k_rows: np.ndarray,
    heads: int,
    scale: float,
    blocked: Any,
    cos: Any,
    sin: Any,
    partner: Any,
    needs: list[bool],
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """∂/∂q_rows, ∂/∂k_rows from ∂/∂weights: softmax's VJP, un-rotate, merge back to rows."""
    grad_q, grad_k = attention_weights.backward(
        grad_weights, weights, q, k, scale=scale, blocked=blocked, added=None, needs=needs[:2]
    )  # (B, H, T, d_h) each, or None
    shares = []
    for wanted, grad_split, rows in ((needs[0], grad_q, q_rows), (needs[1], grad_k, k_rows)):
        if not wanted:
            shares.append(None)
            continue
        if partner is not None:  # pair_rotate's VJP reads only its input's shape: q's
            grad_split = pair_rotate.backward(
                grad_split, None, q, cos=cos, sin=sin, partner=partner
            )
        shares.append(split_heads.backward(grad_split, None, rows, heads=heads))  # (B, T, D)
    return shares[0], shares[1]


@op(
    example=Example(
        lambda q, k, v: fused_attention_with_weights(q, k, v, **_EXAMPLE)[1],
        _ROWS,
        "the weights of the example above",
    ),
)
def fused_attention_weights(
    q_rows, k_rows, v_rows, heads, scale, blocked, cos, sin, partner, saved, needs
):
    """softmax(rot(split q)·scale rot(split k)ᵀ, blocked → 0): the weights fused_attention saved

    Recorded by :func:`fused_attention_with_weights` on fused_attention's own inputs and saved
    arrays (no copy); its forward only returns the saved weights [B, H, T, T].
    """
    return saved[0]


@fused_attention_weights.checks
def _(q_rows, k_rows, v_rows, heads, scale, blocked, cos, sin, partner, saved, needs):
    batch, tokens = q_rows.shape[:2] if q_rows.ndim == 3 else (None, None)
    weights = saved[0] if isinstance(saved, tuple) and len(saved) == 4 else None
    if not isinstance(weights, np.ndarray) or weights.shape != (batch, heads, tokens, tokens):
        raise ArgumentError(
            "fused_attention_weights reads the arrays fused_attention saved for these inputs; "
            f"got saved={type(saved).__name__}. Call fused_attention_with_weights instead."
        )
    return {
        "heads": heads,
        "scale": scale,
        "blocked": blocked,
        "cos": cos,
        "sin": sin,
        "partner": partner,
        "saved": saved,
        "needs": needs,
    }


@fused_attention_weights.vjp
def _(
    grad, _out, _q_rows, _k_rows, _v_rows, heads, scale, blocked, cos, sin, partner, saved, needs
):
    weights, q, k, _ = saved
    grad_q_rows, grad_k_rows = _scores_vjp(
        grad, weights, q, k, _q_rows, _k_rows, heads, scale, blocked, cos, sin, partner, needs
    )
    return grad_q_rows, grad_k_rows, None


def fused_attention_with_weights(
    q_rows: Any, k_rows: Any, v_rows: Any, **params: Any
) -> tuple[Tensor, Tensor]:
    """(merged heads [B, T, D_v], weights [B, H, T, T]): fused_attention and its weights.

    The merged heads are one ``fused_attention`` entry; the weights, when q or k is recorded,
    one ``fused_attention_weights`` entry on the same inputs (the same tuple, so the tape holds
    no extra reference to a projection) and the same saved arrays. With nothing to record both
    are constants from one forward.
    """
    inputs = [t if isinstance(t, Tensor) else _constant(t) for t in (q_rows, k_rows, v_rows)]
    del q_rows, k_rows, v_rows  # this frame must not keep the projections alive
    if grad_mode.enabled and (inputs[0].requires_grad or inputs[1].requires_grad):
        merged = fused_attention(*inputs, **params)  # one entry
        del inputs
        entry = merged._entry
        wanted = [entry.needs[0], entry.needs[1], False]
        keywords = {**entry.keywords, "needs": wanted}
        weights_entry = TapeEntry(
            fused_attention_weights,
            entry.inputs,  # the same tuple: the projections are let go as if it were not there
            keywords,
            wanted,
            next(creation_numbers),
            entry.seen,
        )
        weights = Tensor.from_op(entry.keywords["saved"][0], weights_entry)
        return merged, weights
    if grad_mode.enabled and inputs[2].requires_grad:  # only v recorded: the weights are constant
        merged = fused_attention(*inputs, **params)
        return merged, Tensor.from_op(merged._entry.keywords["saved"][0], None)
    arrays = [t._value for t in inputs]
    checked = fused_attention.check(*arrays, **{**fused_attention.defaults, **params})
    out, saved = fused_attention.forward(*arrays, **checked)
    return Tensor.from_op(out, None, arrays), Tensor.from_op(saved[0], None)
