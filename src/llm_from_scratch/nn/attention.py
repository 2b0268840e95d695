"""Multi-head attention: head split and merge, scaled dot-product attention, masks, positions.

Axis names used throughout: B batch, T tokens (self-attention), L queries, S keys, D model width,
H heads, d_h = D / H head width.

Mask contract (the one PyTorch's ``nn.MultiheadAttention`` documents):

* ``mask`` is [L,S] (shared by every batch row and head) or [B·H,L,S] (one per batch row and
  head, row ``b·H + h``); ``key_padding_mask`` is [B,S] (one flag per key of each batch row).
* A Boolean mask blocks where it is True. A float mask is added to the scores; a ``-inf`` entry
  in a float mask blocks exactly like True. When both masks are given they must both be Boolean
  or both be float.
* ``causal=True`` blocks key j for query i when j > (S − L) + i: with L < S the queries are the
  last L of the S positions. ``window=w`` (with ``causal=True``) also blocks j <= (S − L) + i − w:
  a query sees itself and the w − 1 keys before it (Mistral's sliding window).
* Grouped-query attention: k and v may carry G heads where G divides the H query heads
  (``enable_gqa=True``); query head h reads key/value head h // (H / G). K and V are broadcast
  as [B, G, 1, S, d_h] against queries read as [B, G, H/G, L, d_h], never copied per head.
* A query row whose keys are all blocked (every row, when S = 0) gets all-zero weights and so a
  zero output and a zero gradient. This is a documented choice, finite and warning-free, not a
  probability distribution.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..autodiff import Tensor, ops
from ..autodiff.ops.fused_attention import fused_attention_with_weights
from ..errors import ArgumentError, RankError, ShapeError, WidthError
from ..random import SplitMix64
from ..validate import (
    as_flag,
    as_float_array,
    as_numpy,
    as_width,
    broadcasts_to,
    element_count,
    generator,
    non_negative_int,
    positive_int,
    received,
)
from .linear import Linear
from .module import Module, as_tensor, check_name
from .norms import RMSNorm
from .positions import RoPEPositions

QK_NORM_EPS = 1e-6  # Qwen3's rms_norm_eps, used by its q_norm and k_norm

__all__ = [
    "AttentionCache",
    "MultiHeadAttention",
    "PositionScheme",
    "causal_mask",
    "merge_heads",
    "scaled_dot_product_attention",
    "sliding_window_mask",
    "split_heads",
]


# --- the position hook ---------------------------------------------------------------------


@runtime_checkable
class PositionScheme(Protocol):
    """What attention asks of a position scheme (ALiBi adds a bias, RoPE rotates q and k).

    ``score_bias(num_heads, query_len, key_len)`` returns an [H,L,S] array added to the scores
    (or None for no bias); ``rotate(x)`` maps queries or keys [B,H,T,d_h] to the same shape
    (return ``x`` unchanged for no rotation).
    """

    def score_bias(self, num_heads: int, query_len: int, key_len: int) -> Any: ...

    def rotate(self, x: Tensor) -> Tensor: ...


@runtime_checkable
class AttentionCache(Protocol):
    """What cached attention asks of one layer's key/value cache (``generation.KVCache``).

    ``query_positions`` [B, L] holds the absolute position of each new query; ``append(k, v)``
    stores the new keys and values [B, H, L, d_h] at those positions and returns every stored
    key and value [B, H, S, d_h] with a Boolean [B, L, S] array, True where key slot j lies
    after query i's position (blocked).
    """

    query_positions: np.ndarray

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, np.ndarray]: ...


# --- head split and merge ------------------------------------------------------------------


def _check_divisible(width: int, num_heads: int) -> int:
    if width % num_heads:
        raise WidthError(
            f"Model width D = {width} must be divisible by num_heads H = {num_heads} so that "
            f"each head gets d_h = D / H whole coordinates; {width} / {num_heads} is not whole. "
            "Choose H among the divisors of D."
        )
    return width // num_heads


def split_heads(x: Any, num_heads: int) -> Tensor:
    """[B,T,D] → reshape [B,T,H,d_h] → permute (0,2,1,3) → [B,H,T,d_h], d_h = D / H.

    The two steps are one op (``ops.split_heads``, one tape entry, tested equal to the
    reshape-and-permute chain); this function checks the input and says what went wrong.
    """
    x = as_tensor(x, "split_heads input")
    num_heads = positive_int(num_heads, "num_heads")
    if x.ndim != 3:
        raise RankError(
            f"split_heads expects [B, T, D] (rank 3); got shape {x.shape}. Add a batch axis "
            "of length 1 for a single sequence."
        )
    _check_divisible(x.shape[-1], num_heads)
    # (B, T, D) → (B, T, H, d_h): a token's row splits; → (B, H, T, d_h): each head's rows
    # gathered across tokens
    return ops.split_heads(x, heads=num_heads)


def merge_heads(x: Any) -> Tensor:
    """[B,H,T,d_h] → permute (0,2,1,3) → [B,T,H,d_h] → reshape [B,T,H·d_h]: split's inverse."""
    x = as_tensor(x, "merge_heads input")
    if x.ndim != 4:
        raise RankError(f"merge_heads expects [B, H, T, d_h] (rank 4); got shape {x.shape}.")
    return ops.merge_heads(x)  # (B, H, T, d_h) → (B, T, H, d_h) → (B, T, D): one op


# --- masks -----------------------------------------------------------------------------------


def causal_mask(query_len: int, key_len: int) -> np.ndarray:
    """Boolean [L,S], True (blocked) where key j > (S − L) + i: queries are the last L keys."""
    query_len = non_negative_int(query_len, "causal_mask query_len")
    key_len = non_negative_int(key_len, "causal_mask key_len")
    if query_len > key_len:
        raise ShapeError(
            f"A causal mask places the L queries at the last L of the S key positions, so it "
            f"needs L <= S; got L = {query_len}, S = {key_len}."
        )
    element_count((query_len, key_len), "causal_mask [L, S]")
    return np.triu(np.ones((query_len, key_len), dtype=bool), k=key_len - query_len + 1)


def check_window(window: Any, causal: bool) -> int | None:
    """A sliding-window length w >= 1 (an int, not a bool), or None; only with causal=True."""
    if window is None:
        return None
    if isinstance(window, bool | np.bool_) or not isinstance(window, numbers.Integral):
        raise ArgumentError(
            "window must be a whole number of positions w >= 1 (a query sees itself and the "
            f"w − 1 keys before it) or None for full causal attention; got {received(window)}."
        )
    if window < 1:
        raise ArgumentError(
            "window must be at least 1 (a query always sees itself; w = 1 sees only itself); "
            f"got {int(window)}. Pass window=None for full causal attention."
        )
    if not causal:
        raise ArgumentError(
            "A sliding window limits how far back a causal query reads, so window needs "
            f"causal=True; got window={int(window)} with causal=False. Pass causal=True, or "
            "window=None."
        )
    return int(window)


def sliding_window_mask(query_len: int, key_len: int, window: int) -> np.ndarray:
    """Boolean [L,S], True (blocked) unless p_i − w < j <= p_i, p_i = (S − L) + i."""
    window = check_window(window, True)
    blocked = causal_mask(query_len, key_len)  # j > p_i: the future
    # j <= p_i − w = i + (S − L) − w: more than w − 1 keys back
    too_old = np.tril(np.ones((query_len, key_len), dtype=bool), k=key_len - query_len - window)
    return blocked | too_old


def _mask_array(mask: Any, label: str) -> np.ndarray:
    """A mask as a numpy array: Boolean stays Boolean, float becomes float64 (no NaN/+inf)."""
    array = as_numpy(mask, label, kind="Boolean or float array")
    if array.dtype == np.bool_:
        return array
    if not np.issubdtype(array.dtype, np.floating):
        raise ArgumentError(
            f"{label} must be Boolean (True blocks) or float (added to the scores); got dtype "
            f"{array.dtype}. Convert 0/1 integers with .astype(bool)."
        )
    array = array.astype(np.float64)
    if np.isnan(array).any() or np.isposinf(array).any():
        raise ArgumentError(
            f"A float {label} may hold finite values and -inf (which blocks); it holds NaN or "
            "+inf, which would make the softmax undefined."
        )
    return array


class _Masks:
    """Masks combined once into a Boolean 'blocked' array and a float 'added' array."""

    __slots__ = ("added", "blocked")

    def __init__(self) -> None:
        self.blocked: np.ndarray | None = None
        self.added: np.ndarray | None = None

    def include(self, array: np.ndarray) -> None:
        if array.dtype == np.bool_:
            self._block(array)
            return
        infinite = np.isneginf(array)
        if infinite.any():
            self._block(infinite)
            array = np.where(infinite, 0.0, array)
        if self.added is None:
            self.added = array
        else:
            with np.errstate(over="ignore"):  # finite masks may add up past −1.8e308: −∞ blocks
                self.added = self.added + array

    def _block(self, array: np.ndarray) -> None:
        self.blocked = array if self.blocked is None else self.blocked | array


def _combine_masks(
    mask: Any,
    key_padding_mask: Any,
    causal: bool,
    shape: tuple[int, int, int, int],
    window: int | None = None,
) -> _Masks:
    """Check both masks against the [L,S] / [B·H,L,S] / [B,S] contract and combine them."""
    batch, heads, queries, keys = shape
    masks = _Masks()
    kinds = []
    if mask is not None:
        array = _mask_array(mask, "mask")
        if array.shape == (queries, keys):
            array = array.reshape(1, 1, queries, keys)  # shared by every batch row and head
        elif array.shape == (batch * heads, queries, keys):
            array = array.reshape(batch, heads, queries, keys)  # row b·H + h → [b, h]
        else:
            raise ShapeError(
                f"mask must be [L, S] = [{queries}, {keys}] (shared) or [B·H, L, S] = "
                f"[{batch * heads}, {queries}, {keys}] (row b·H + h for batch b, head h); got "
                f"shape {array.shape}. A broadcastable 4-D mask is not part of this contract."
            )
        kinds.append(array.dtype == np.bool_)
        masks.include(array)
    if key_padding_mask is not None:
        array = _mask_array(key_padding_mask, "key_padding_mask")
        if array.shape != (batch, keys):
            raise ShapeError(
                f"key_padding_mask must be [B, S] = [{batch}, {keys}], one flag per key of each "
                f"batch row; got shape {array.shape}."
            )
        kinds.append(array.dtype == np.bool_)
        masks.include(array.reshape(batch, 1, 1, keys))
    if len(kinds) == 2 and kinds[0] != kinds[1]:
        raise ArgumentError(
            "mask and key_padding_mask must have the same type (both Boolean or both float); "
            f"got mask {'Boolean' if kinds[0] else 'float'} and key_padding_mask "
            f"{'Boolean' if kinds[1] else 'float'}. Convert one of them."
        )
    if causal and window is not None:
        masks.include(sliding_window_mask(queries, keys, window).reshape(1, 1, queries, keys))
    elif causal:
        masks.include(causal_mask(queries, keys).reshape(1, 1, queries, keys))
    return masks


def _bias_tensor(bias: Any, shape: tuple[int, int, int, int]) -> Tensor:
    tensor = as_tensor(bias, "bias", error=ShapeError)
    if not broadcasts_to(tensor.shape, shape):
        raise ShapeError(
            f"bias is added to the scores [B, H, L, S] = {list(shape)} and must broadcast to "
            f"that shape (e.g. [H, L, S] or [1, H, L, S]); got shape {tensor.shape}."
        )
    if not np.isfinite(tensor.value).all():
        raise ShapeError(
            "bias must be finite; block positions with a mask (True, or -inf in a float mask)."
        )
    return tensor


# --- scaled dot-product attention ----------------------------------------------------------


def _check_qkv(q: Tensor, k: Tensor, v: Tensor, enable_gqa: bool = False) -> None:
    for label, t in (("q", q), ("k", k), ("v", v)):
        if t.ndim != 4:
            raise RankError(
                f"scaled_dot_product_attention expects {label} of rank 4, [B, H, "
                f"{'L' if label == 'q' else 'S'}, d_h]; got shape {t.shape}. Use split_heads "
                "on a [B, T, D] projection."
            )
    if not enable_gqa and not (q.shape[:2] == k.shape[:2] == v.shape[:2]):
        raise ShapeError(
            f"q, k and v must share batch and head axes [B, H, ...]; got q {q.shape}, "
            f"k {k.shape}, v {v.shape}. For G < H key/value heads pass enable_gqa=True."
        )
    if enable_gqa:
        heads, kv_heads = q.shape[1], k.shape[1]
        if not (q.shape[0] == k.shape[0] == v.shape[0]) or kv_heads != v.shape[1]:
            raise ShapeError(
                f"q, k and v must share the batch axis B, and k and v the head axis G; got "
                f"q {q.shape}, k {k.shape}, v {v.shape}."
            )
        if kv_heads != heads and (kv_heads == 0 or heads % kv_heads):
            raise ShapeError(
                f"Grouped-query attention shares the H query heads out among G key/value "
                f"heads, so G must divide H; got q {q.shape} (H = {heads}) and k {k.shape} "
                f"(G = {kv_heads}). Choose G among the divisors of H."
            )
    if q.shape[3] != k.shape[3]:
        raise ShapeError(
            f"Queries and keys must have the same width d_h to be compared; got q {q.shape} "
            f"and k {k.shape}."
        )
    if k.shape[2] != v.shape[2]:
        raise ShapeError(
            f"Keys and values must have the same length S (one value per key); got k "
            f"{k.shape} and v {v.shape}."
        )
    if q.shape[3] == 0:
        raise ShapeError(
            f"Queries and keys need a width d_h of at least 1 (the scale is 1/√d_h); got "
            f"q {q.shape}."
        )


def scaled_dot_product_attention(
    q: Any,
    k: Any,
    v: Any,
    *,
    mask: Any = None,
    key_padding_mask: Any = None,
    bias: Any = None,
    causal: bool = False,
    window: int | None = None,
    enable_gqa: bool = False,
) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / √d_h + added + bias, blocked → 0) v: outputs [B,H,L,d_v], weights [B,H,L,S].

    ``mask`` [L,S] or [B·H,L,S] and ``key_padding_mask`` [B,S]: Boolean True blocks, float adds
    (−inf blocks). ``bias`` broadcasts to [B,H,L,S] and is added (ALiBi). ``causal`` blocks keys
    after each query, with the L queries at the last L of the S positions; ``window`` w also
    blocks keys more than w − 1 positions before the query. With ``enable_gqa`` k and v may hold
    G heads, G dividing H: query head h reads key/value head h // (H / G). A fully blocked
    query row gets zero weights and a zero output, and so does every row when S = 0.
    """
    q = as_tensor(q, "scaled_dot_product_attention q")
    k = as_tensor(k, "scaled_dot_product_attention k")
    v = as_tensor(v, "scaled_dot_product_attention v")
    causal = as_flag(causal, "causal")
    enable_gqa = as_flag(enable_gqa, "enable_gqa")
    window = check_window(window, causal)
    _check_qkv(q, k, v, enable_gqa)
    batch, heads, queries, head_width = q.shape
    keys = k.shape[2]
    shape = (batch, heads, queries, keys)
    masks = _combine_masks(mask, key_padding_mask, causal, shape, window)
    bias_tensor = None if bias is None else _bias_tensor(bias, shape)

    if k.shape[1] != heads:  # G < H key/value heads, each read by H / G query heads
        return _grouped_attention(q, k, v, masks, bias_tensor)
    if keys == 0:  # nothing to read: every row is fully blocked, so zero weights and outputs
        weights = Tensor.wrap(np.zeros(shape))
        return weights @ v, weights
    # One recorded op for scores, masks and softmax: (q / √d_h) kᵀ + added + bias, blocked
    # entries at −∞, softmax over keys; rows with no open key get zero weights. Its values equal
    # that chain of matmul, add, masked_fill and softmax ops exactly, and it keeps no [L, S]
    # array but the weights (tests/autodiff/test_composite_ops.py).
    biases = () if bias_tensor is None else (bias_tensor,)
    weights = ops.attention_weights(
        q,
        k,
        *biases,
        scale=1.0 / math.sqrt(head_width),
        blocked=masks.blocked,
        added=masks.added,
    )  # (B, H, L, S), rows sum to 1 over open keys
    return weights @ v, weights  # (B, H, L, d_v), (B, H, L, S)


def _grouped(array: Any, kv_heads: int, group: int) -> Any:
    """A [B or 1, H or 1, L or 1, S] mask or bias read as [B or 1, G or 1, H/G or 1, L, S]."""
    if array is None:
        return None
    four = array.reshape((1,) * (4 - array.ndim) + tuple(array.shape))  # (b, h, l, S)
    lead, per_head = four.shape[0], four.shape[1] != 1
    # head h = g·(H/G) + r, so an H-long head axis splits into (G, H/G); a shared one stays 1
    heads = (kv_heads, group) if per_head else (1, 1)
    return four.reshape(lead, *heads, *four.shape[2:])


def _folded(array: Any, kv_heads: int, group: int) -> Any:
    """A mask [.., L, S] read per group as [B or 1, G or 1, (H/G)·L, S] (the group's rows)."""
    if array is None:
        return None
    grouped = _grouped(array, kv_heads, group)  # (b, G or 1, H/G or 1, L, S)
    lead, heads, _, queries, keys = grouped.shape
    full = np.broadcast_to(grouped, (lead, heads, group, queries, keys))
    return full.reshape(lead, heads, group * queries, keys)


def _grouped_attention(
    q: Tensor, k: Tensor, v: Tensor, masks: _Masks, bias: Tensor | None
) -> tuple[Tensor, Tensor]:
    """Attention of H query heads over G key/value heads, query head h reading head h // (H/G).

    The H/G query heads of a group share its keys, so their queries are read as the rows of one
    [B, G, (H/G)·L, d_h] matrix (a view) against keys and values [B, G, S, d_h]: one product
    per group, each key/value head read once, never copied per head; the engine sums the H/G
    gradient shares of each key/value head back into it. With a score bias (ALiBi: one per
    head) queries are read as [B, G, H/G, L, d_h] against [B, G, 1, S, d_h] instead.
    """
    batch, heads, queries, head_width = q.shape
    kv_heads, keys = k.shape[1], k.shape[2]
    group = heads // kv_heads
    if bias is None or keys == 0:
        rows = q.reshape(batch, kv_heads, group * queries, head_width)  # (B, G, (H/G)·L, d_h)
        if keys == 0:  # nothing to read: zero weights and outputs
            weights4 = Tensor.wrap(np.zeros((batch, kv_heads, group * queries, 0)))
        else:
            weights4 = ops.attention_weights(
                rows,
                k,
                scale=1.0 / math.sqrt(head_width),
                blocked=_folded(masks.blocked, kv_heads, group),
                added=_folded(masks.added, kv_heads, group),
            )  # (B, G, (H/G)·L, S)
        heads4 = weights4 @ v  # (B, G, (H/G)·L, d_v)
        return (
            heads4.reshape(batch, heads, queries, v.shape[3]),  # (B, H, L, d_v)
            weights4.reshape(batch, heads, queries, keys),  # (B, H, L, S)
        )
    q5 = q.reshape(batch, kv_heads, group, queries, head_width)  # (B, G, H/G, L, d_h)
    k5 = k.reshape(batch, kv_heads, 1, keys, head_width)  # (B, G, 1, S, d_h)
    v5 = v.reshape(batch, kv_heads, 1, keys, v.shape[3])  # (B, G, 1, S, d_v)
    weights5 = ops.attention_weights(
        q5,
        k5,
        _grouped(bias, kv_heads, group),
        scale=1.0 / math.sqrt(head_width),
        blocked=_grouped(masks.blocked, kv_heads, group),
        added=_grouped(masks.added, kv_heads, group),
    )  # (B, G, H/G, L, S)
    heads5 = weights5 @ v5  # (B, G, H/G, L, d_v)
    return (
        heads5.reshape(batch, heads, queries, v.shape[3]),  # (B, H, L, d_v)
        weights5.reshape(batch, heads, queries, keys),  # (B, H, L, S)
    )


def _bias_at_keys(
    scheme: Any, num_heads: int, positions: np.ndarray, key_positions: np.ndarray
) -> Any:
    """A position bias [B, H, L, S] for keys at absolute positions [B, S] (a rolling buffer).

    ALiBi (a scheme with ``slopes``): −m_h (p_i − p_j) for p_j <= p_i, else 0, computed at the
    S keys alone. Any other scheme: its bias for slots 0 … max position, read at each key's
    position (slots holding no key, position −1, read position 0: they are blocked anyway).
    """
    slopes = getattr(scheme, "slopes", None)
    if slopes is not None:
        scheme.score_bias_at(num_heads, positions, 0)  # the scheme's own checks
        distance = positions[:, None, :, None] - key_positions[:, None, None, :]  # (B, 1, L, S)
        penalty = np.asarray(slopes, dtype=np.float64)[None, :, None, None] * distance
        return np.where(distance > 0, -penalty, 0.0)  # (B, H, L, S)
    bias_at = scheme.score_bias_at
    key_len = int(max(key_positions.max(), positions.max())) + 1
    full = bias_at(num_heads, positions, key_len)  # (B, H, L, P) or None
    if full is None:
        return None
    full = np.asarray(full)
    index = np.maximum(key_positions, 0)[:, None, None, :]  # (B, 1, 1, S)
    index = np.broadcast_to(index, (*full.shape[:3], key_positions.shape[1]))
    return np.take_along_axis(full, index, axis=3)  # (B, H, L, S)


# --- the module --------------------------------------------------------------------------------


def _check_positions(positions: Any, num_heads: int, head_width: int) -> Any:
    """A position scheme that fits H heads of width d_h, or None (checked before building)."""
    if positions is None:
        return None
    if not isinstance(positions, PositionScheme):
        raise ArgumentError(
            "positions must provide score_bias(num_heads, query_len, key_len) and rotate(x) "
            f"(the PositionScheme protocol), or be None; got {type(positions).__name__}."
        )
    heads = getattr(positions, "num_heads", None)  # ALiBi: one slope per head
    if heads is not None and heads != num_heads:
        raise ArgumentError(
            f"The position scheme holds {heads} ALiBi slopes, one per head, but the attention "
            f"has num_heads = {num_heads}; got {positions!r}. Build ALiBiPositions({num_heads})."
        )
    width = getattr(positions, "head_width", None)  # RoPE: rotates rows of width d_h
    if width is not None and width != head_width:
        raise WidthError(
            f"The position scheme rotates rows of width {width}, but each head has width d_h = "
            f"D / H = {head_width}; got {positions!r}. Build RoPEPositions({head_width})."
        )
    return positions


def _divisors(number: int) -> list[int]:
    """The positive divisors of ``number`` in increasing order (√n trial divisions)."""
    small = [d for d in range(1, math.isqrt(number) + 1) if number % d == 0]
    return sorted({*small, *(number // d for d in small)})


def check_kv_heads(num_kv_heads: Any, num_heads: int) -> int:
    """G, the number of key/value heads: a positive divisor of H (None means G = H)."""
    if num_kv_heads is None:
        return num_heads
    kv_heads = positive_int(
        num_kv_heads,
        "num_kv_heads",
        fix="G = H is multi-head attention, G = 1 multi-query attention.",
    )
    if num_heads % kv_heads:
        divisors = _divisors(num_heads) if num_heads <= 1 << 20 else "the divisors of H"
        raise ArgumentError(
            f"num_kv_heads G must divide num_heads H, so that each key/value head serves H / G "
            f"whole query heads; got G = {kv_heads}, H = {num_heads}. Choose G among "
            f"{divisors} (G = H is multi-head, G = 1 multi-query attention)."
        )
    return kv_heads


def check_head_width(head_width: Any, model_width: int, num_heads: int) -> int:
    """d_h: D / H (which must be whole) when None, else any positive width (Qwen3's head_dim)."""
    if head_width is None:
        return _check_divisible(model_width, num_heads)
    return as_width(
        head_width,
        "head_width",
        fix="d_h is each head's width; None means D / H, Qwen3 sets head_dim = 128.",
    )


def _bias_arrays(biases: Any) -> list[Any]:
    """(b_q, b_k, b_v, b_o) as given (Linear checks each; None: that projection has none)."""
    if biases is None:
        return [None] * 4
    if not isinstance(biases, tuple | list) or len(biases) != 4:
        raise ArgumentError(
            "biases must be four vectors or Nones (b_q, b_k, b_v, b_o), one per projection, or "
            f"None for bias-free projections; got {received(biases)}."
        )
    return list(biases)  # GPT-2 biases all four, Qwen2 q, k and v only


def _projection_arrays(
    weights: tuple[Any, Any, Any, Any], grouped: bool, free: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """W_Q, W_K, W_V, W_O as float arrays: all [D, D], or, ``grouped``, W_K, W_V [D, any].

    ``free`` (an explicit head width): every matrix any non-empty rank-2 shape, checked later.
    """
    arrays = []
    for label, w in zip(("wq", "wk", "wv", "wo"), weights, strict=True):
        array = as_float_array(w, f"MultiHeadAttention {label}", finite=True, error=ShapeError)
        if free:
            if array.ndim != 2 or 0 in array.shape:
                raise ShapeError(
                    f"MultiHeadAttention {label} must be a non-empty matrix; got shape "
                    f"{array.shape}."
                )
        elif grouped and label in ("wk", "wv"):
            if array.ndim != 2 or array.shape[0] == 0:
                raise ShapeError(
                    f"MultiHeadAttention {label} must be a [D, G·d_h] matrix with D >= 1; got "
                    f"shape {array.shape}."
                )
        elif array.ndim != 2 or array.shape[0] != array.shape[1] or array.shape[0] == 0:
            raise ShapeError(
                f"MultiHeadAttention {label} must be a square [D, D] matrix with D >= 1; "
                f"got shape {array.shape}."
            )
        arrays.append(array)
    square = [] if free else [arrays[0], arrays[3]] if grouped else arrays
    if square and len({a.shape for a in square}) != 1:
        names = "wq and wo" if grouped else "wq, wk, wv and wo"
        raise ShapeError(
            f"MultiHeadAttention {names} must share one shape [D, D]; got "
            f"{[a.shape for a in arrays]}."
        )
    return arrays[0], arrays[1], arrays[2], arrays[3]


def _qk_norms(
    qk_norm: bool, query_gain: Any, key_gain: Any, head_width: int, name: str
) -> tuple[RMSNorm | None, RMSNorm | None]:
    """The two RMSNorms over d_h (gains of ones unless given), or (None, None) without QK-norm."""
    if not qk_norm:
        if query_gain is not None or key_gain is not None:
            raise ArgumentError(
                "query_norm_gain and key_norm_gain are the gains of QK-norm; got a gain with "
                "qk_norm=False. Pass qk_norm=True, or leave both gains None."
            )
        return None, None
    norms = []
    for role, gain in (("query", query_gain), ("key", key_gain)):
        label = f"{name}.{role}_norm"
        if gain is None:
            norms.append(RMSNorm(head_width, QK_NORM_EPS, name=label))
            continue
        norm = RMSNorm.from_parameters(gain, eps=QK_NORM_EPS, name=label)
        if norm.width != head_width:
            raise ShapeError(
                f"The {role} QK-norm gain scales each head's d_h = {head_width} coordinates "
                f"(one gain shared by every head); got a gain of shape ({norm.width},). Pass "
                f"a vector of length {head_width}."
            )
        norms.append(norm)
    return norms[0], norms[1]


class MultiHeadAttention(Module):
    """MHA(X) = concat(head_1, …, head_H) W_O, head_h = Attention(X W_Q,h, X W_K,g, X W_V,g).

    Bias-free projections named ``<name>.query`` [D, D], ``<name>.key`` and ``<name>.value``
    [D, G·d_h] and ``<name>.output`` [D, D]. Query heads are the d_h-wide column blocks of W_Q;
    query head h reads key/value head g = h // (H / G) (G = H, the default: 4D² weights, one
    key/value head per query head; G = 1: multi-query attention). ``window`` w (causal only)
    lets a query see itself and the w − 1 keys before it. ``qk_norm`` applies RMSNorm with
    gains [d_h] (``<name>.query_norm``, ``<name>.key_norm``, shared by the heads, ε = 1e-6) to
    each head's queries and keys before the position scheme rotates them. ``fused=True``
    records the steps from the projections to the merged heads as one ``fused_attention``
    entry (the same values and gradients bit for bit) where it can: no mask, G = H, no
    QK-norm, no position scheme or RoPE at positions 0 … T − 1; elsewhere the composed ops run.
    """

    def __init__(
        self,
        model_width: int,
        num_heads: int,
        *,
        num_kv_heads: int | None = None,
        causal: bool = False,
        window: int | None = None,
        qk_norm: bool = False,
        head_width: int | None = None,
        bias: bool = False,
        positions: PositionScheme | None = None,
        fused: bool = False,
        name: str = "attention",
        rng: SplitMix64,
    ) -> None:
        model_width = as_width(model_width, "MultiHeadAttention model_width")
        num_heads = positive_int(num_heads, "num_heads")
        head_width = check_head_width(head_width, model_width, num_heads)
        kv_heads = check_kv_heads(num_kv_heads, num_heads)
        bias = as_flag(bias, "attention bias")
        element_count((model_width, num_heads * head_width), "MultiHeadAttention query weight")
        causal = as_flag(causal, "causal")
        window = check_window(window, causal)
        qk_norm = as_flag(qk_norm, "qk_norm")
        fused = as_flag(fused, "fused")
        check_name(name, "MultiHeadAttention")
        _check_positions(positions, num_heads, head_width)
        query_norm, key_norm = _qk_norms(qk_norm, None, None, head_width, name)
        with generator(rng, "MultiHeadAttention").transaction() as draft:  # all four or none
            d, inner, kv = model_width, num_heads * head_width, kv_heads * head_width
            query = Linear(d, inner, bias=bias, name=f"{name}.query", rng=draft)
            key = Linear(d, kv, bias=bias, name=f"{name}.key", rng=draft)
            value = Linear(d, kv, bias=bias, name=f"{name}.value", rng=draft)
            output = Linear(inner, d, bias=bias, name=f"{name}.output", rng=draft)
        self._build(
            query,
            key,
            value,
            output,
            num_heads,
            causal,
            positions,
            name,
            num_kv_heads=kv_heads,
            window=window,
            query_norm=query_norm,
            key_norm=key_norm,
            head_width=head_width,
            fused=fused,
        )

    @classmethod
    def from_parameters(
        cls,
        wq: Any,
        wk: Any,
        wv: Any,
        wo: Any,
        *,
        num_heads: int,
        num_kv_heads: int | None = None,
        causal: bool = False,
        window: int | None = None,
        qk_norm: bool = False,
        query_norm_gain: Any = None,
        key_norm_gain: Any = None,
        head_width: int | None = None,
        biases: Any = None,
        positions: PositionScheme | None = None,
        fused: bool = False,
        name: str = "attention",
    ) -> MultiHeadAttention:
        """A layer holding exactly W_Q, W_O [D, D], W_K, W_V [D, G·d_h] (Y = X W convention).

        With ``head_width`` d_h (Qwen3's head_dim, which may differ from D / H) W_Q is
        [D, H·d_h] and W_O [H·d_h, D]. ``biases`` (b_q, b_k, b_v, b_o) or None (bias-free).
        With ``qk_norm`` the gains [d_h] default to ones.
        """
        grouped = num_kv_heads is not None
        free = head_width is not None
        arrays = _projection_arrays((wq, wk, wv, wo), grouped or free, free)
        num_heads = positive_int(num_heads, "num_heads")
        width = arrays[0].shape[0]
        head_width = check_head_width(head_width, width, num_heads)
        kv_heads = check_kv_heads(num_kv_heads, num_heads)
        inner = num_heads * head_width
        for label, array, shape in (
            ("wq", arrays[0], (width, inner)),
            ("wo", arrays[3], (inner, width)),
        ):
            if array.shape != shape:
                raise ShapeError(
                    f"MultiHeadAttention {label} must be {list(shape)} for H = {num_heads} "
                    f"heads of width d_h = {head_width} over D = {width}; got shape "
                    f"{array.shape}."
                )
        bias_arrays = _bias_arrays(biases)
        for label, array in (("wk", arrays[1]), ("wv", arrays[2])):
            if array.shape != (width, kv_heads * head_width):
                raise ShapeError(
                    f"MultiHeadAttention {label} must be [D, G·d_h] = [{width}, "
                    f"{kv_heads * head_width}] for G = {kv_heads} key/value heads of width "
                    f"d_h = {head_width}; got shape {array.shape}."
                )
        causal = as_flag(causal, "causal")
        window = check_window(window, causal)
        qk_norm = as_flag(qk_norm, "qk_norm")
        fused = as_flag(fused, "fused")
        check_name(name, "MultiHeadAttention")
        _check_positions(positions, num_heads, head_width)
        query_norm, key_norm = _qk_norms(qk_norm, query_norm_gain, key_norm_gain, head_width, name)
        parts = [
            Linear.from_parameters(a, b, name=f"{name}.{role}")
            for a, b, role in zip(
                arrays, bias_arrays, ("query", "key", "value", "output"), strict=True
            )
        ]
        return cls._assemble(
            *parts,
            num_heads,
            causal,
            positions,
            name,
            num_kv_heads=kv_heads,
            window=window,
            query_norm=query_norm,
            key_norm=key_norm,
            head_width=head_width,
            fused=fused,
        )

    def _build(
        self,
        query: Linear,
        key: Linear,
        value: Linear,
        output: Linear,
        num_heads: int,
        causal: bool,
        positions: PositionScheme | None,
        name: str,
        *,
        num_kv_heads: int | None = None,
        window: int | None = None,
        query_norm: RMSNorm | None = None,
        key_norm: RMSNorm | None = None,
        head_width: int | None = None,
        fused: bool = False,
    ) -> None:
        Module.__init__(self, name)
        self.model_width = query.input_width
        self.num_heads = num_heads
        self.num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        self.head_width = self.model_width // num_heads if head_width is None else head_width
        self.bias = query.bias is not None
        self.causal = bool(causal)
        self.window = window
        self.qk_norm = query_norm is not None
        self.positions = positions
        self.fused = fused  # one tape entry from the projections to the merged heads, when it can
        self._fused_blocked: tuple | None = None  # ((T, causal, window), blocked) of the last call
        self.query = query  # assignment order = forward order = named_parameters order
        self.key = key
        self.value = value
        if query_norm is not None:  # q and k normalised after the projections, before W_O
            self.query_norm = query_norm
            self.key_norm = key_norm
        else:
            self.query_norm = self.key_norm = None
        self.output = output

    def __repr__(self) -> str:
        extra = "" if self.num_kv_heads == self.num_heads else f", G={self.num_kv_heads}"
        extra += "" if self.window is None else f", window={self.window}"
        extra += ", qk_norm=True" if self.qk_norm else ""
        extra += ", bias=True" if self.bias else ""
        extra += ", fused=True" if self.fused else ""
        return (
            f"MultiHeadAttention(D={self.model_width}, H={self.num_heads}, "
            f"d_h={self.head_width}{extra}, causal={self.causal}, name={self.name!r})"
        )

    def check_input(self, x: Tensor) -> None:
        """Raise unless x is [B, T, D] with D = model_width."""
        if x.ndim != 3:
            raise RankError(
                f"MultiHeadAttention expects input [B, T, D] (rank 3); got shape {x.shape}. "
                "Add a batch axis of length 1 for a single sequence."
            )
        if x.shape[-1] != self.model_width:
            raise WidthError(
                f"MultiHeadAttention(D = {self.model_width}) expects input whose last axis is "
                f"{self.model_width}; got shape {x.shape}."
            )

    def project_heads(self, x: Any, positions: Any = None) -> tuple[Tensor, Tensor, Tensor]:
        """q [B,H,T,d_h], k and v [B,G,T,d_h], after QK-norm and the rotation (if any).

        ``positions`` (broadcasting to [B, H, T]) gives the absolute position of each row for
        the rotation; by default rows sit at 0 … T − 1.
        """
        x = as_tensor(x, "MultiHeadAttention input")
        self.check_input(x)
        q = split_heads(self.query(x), self.num_heads)  # (B, H, T, d_h)
        k = split_heads(self.key(x), self.num_kv_heads)  # (B, G, T, d_h)
        v = split_heads(self.value(x), self.num_kv_heads)  # (B, G, T, d_h)
        if self.query_norm is not None:  # QK-norm: RMSNorm over each head's d_h, before RoPE
            q, k = self.query_norm(q), self.key_norm(k)
        query_shape = q.shape
        if self.positions is not None and positions is not None:
            q, k = self.positions.rotate(q, positions), self.positions.rotate(k, positions)
        elif self.positions is not None:
            q, k = self.positions.rotate(q), self.positions.rotate(k)
            if q.shape != query_shape or k.shape != v.shape:
                raise ShapeError(
                    f"positions.rotate must keep the shapes [B, H, T, d_h] = {query_shape} of "
                    f"q and [B, G, T, d_h] = {v.shape} of k; got q {q.shape} and k {k.shape}."
                )
        return q, k, v

    def forward(
        self,
        x: Any,
        mask: Any = None,
        key_padding_mask: Any = None,
        average_weights: bool = True,
        cache: AttentionCache | None = None,
    ) -> tuple[Tensor, Tensor]:
        """(output [B,T,D], weights [B,T,T] averaged over heads, or [B,H,T,T] if not).

        With a ``cache`` the T new tokens sit at ``cache.query_positions`` and attend to every
        key the cache holds up to their own position: weights are then [B, T, S] ([B, H, T, S]).
        """
        average_weights = as_flag(average_weights, "average_weights")
        if cache is not None:
            return self._forward_cached(x, mask, key_padding_mask, average_weights, cache)
        x = as_tensor(x, "MultiHeadAttention input")
        rotation = self._fused_rotation(x) if mask is None and key_padding_mask is None else None
        if rotation is not None:  # fused=True and nothing the fused op does not do
            output, weights = self._forward_fused(x, rotation)
            return output, (weights.mean(axis=1) if average_weights else weights)
        q, k, v = self.project_heads(x)
        tokens = q.shape[2]
        bias = None
        if self.positions is not None:
            bias = self.positions.score_bias(self.num_heads, tokens, tokens)
            if bias is not None:
                bias = as_tensor(bias, "positions.score_bias", error=ShapeError)
                if bias.shape != (self.num_heads, tokens, tokens):
                    raise ShapeError(
                        f"positions.score_bias must return [H, L, S] = "
                        f"[{self.num_heads}, {tokens}, {tokens}]; got shape {bias.shape}."
                    )
                bias = bias.reshape(1, self.num_heads, tokens, tokens)
        heads, weights = scaled_dot_product_attention(
            q,
            k,
            v,
            mask=mask,
            key_padding_mask=key_padding_mask,
            bias=bias,
            causal=self.causal,
            window=self.window,
            enable_gqa=self.num_kv_heads != self.num_heads,
        )  # (B, H, T, d_h), (B, H, T, T)
        output = self.output(merge_heads(heads))  # (B, T, D) @ W_O
        if average_weights:
            weights = weights.mean(axis=1)  # (B, T, T): a summary, not a representation
        return output, weights

    def _fused_rotation(self, x: Tensor) -> dict[str, Any] | None:
        """The fused path's RoPE tables ({} for none), or None where the composed chain runs.

        Fused: ``fused=True``, no mask, G = H, no QK-norm, and positions None or exactly a
        :class:`RoPEPositions` at the default positions 0 … T − 1 (its shared tables). Anything
        else (ALiBi's score bias, another scheme, a mask, T = 0) takes the composed chain.
        """
        if not self.fused or self.num_kv_heads != self.num_heads or self.query_norm is not None:
            return None
        tokens = x.shape[1] if x.ndim == 3 else 0
        if tokens == 0 or not (self.positions is None or type(self.positions) is RoPEPositions):
            return None
        if self.positions is None:
            return {}
        cos, sin, partner = self.positions._tables_for(tokens)  # (T, d_h) ×2, (d_h,)
        return {"cos": cos, "sin": sin, "partner": partner}

    def _forward_fused(self, x: Tensor, rotation: dict[str, Any]) -> tuple[Tensor, Tensor]:
        """(output [B,T,D], weights [B,H,T,T]): the projections, one fused entry, W_O."""
        self.check_input(x)
        tokens = x.shape[1]
        setting = (tokens, self.causal, self.window)
        if self._fused_blocked is None or self._fused_blocked[0] != setting:
            # causal and window as _combine_masks spells them, kept (read-only) for this T
            blocked = _combine_masks(None, None, self.causal, (1, 1, tokens, tokens), self.window)
            if blocked.blocked is not None:
                blocked.blocked.flags.writeable = False
            self._fused_blocked = (setting, blocked.blocked)  # (1, 1, T, T) or None
        # no name holds a projection: once the fused entry alone holds one, it can be let go
        merged, weights = fused_attention_with_weights(
            self.query(x),
            self.key(x),
            self.value(x),
            heads=self.num_heads,
            scale=1.0 / math.sqrt(self.head_width),
            blocked=self._fused_blocked[1],
            **rotation,
        )  # (B, T, H·d_h), (B, H, T, T)
        return self.output(merged), weights  # (B, T, D) @ W_O

    def _forward_cached(
        self,
        x: Any,
        mask: Any,
        key_padding_mask: Any,
        average_weights: bool,
        cache: AttentionCache,
    ) -> tuple[Tensor, Tensor]:
        """Attention of new tokens at cache.query_positions over the cached keys and values."""
        if not (hasattr(cache, "query_positions") and callable(getattr(cache, "append", None))):
            raise ArgumentError(
                "cache must provide query_positions [B, L] and append(k, v) (the "
                f"AttentionCache protocol); got {type(cache).__name__}."
            )
        if self.window is not None and getattr(cache, "window", None) != self.window:
            raise ArgumentError(
                f"This layer reads a sliding window of {self.window} positions, so its cache must "
                f"apply the same window (cache.window = {self.window}); got a cache with window "
                f"{getattr(cache, 'window', None)!r}. Build generation.KVCache(model, batch, "
                "capacity), which reads each layer's window."
            )
        if mask is not None or key_padding_mask is not None:
            raise ArgumentError(
                "With a cache, which keys a query sees follows from the positions the cache "
                "holds; pass mask=None and key_padding_mask=None (got a mask)."
            )
        positions = np.asarray(cache.query_positions)  # (B, L) absolute positions
        q, k, v = self.project_heads(
            x, positions[:, None, :]
        )  # (B, H, L, d_h), k v (B, G, L, d_h)
        keys, values, blocked = cache.append(k, v)  # (B, G, S, d_h) ×2, (B, L, S)
        key_len = blocked.shape[2]
        # a rolling window buffer says which absolute position each key slot holds
        key_positions = getattr(cache, "key_positions", None) if self.window is not None else None
        bias = None
        if self.positions is not None:
            bias_at = getattr(self.positions, "score_bias_at", None)
            if bias_at is None:
                raise ArgumentError(
                    f"Cached attention needs score_bias_at(num_heads, query_positions, key_len) "
                    f"from the position scheme; {type(self.positions).__name__} has none."
                )
            if key_positions is None:
                bias = bias_at(self.num_heads, positions, key_len)  # (B, H, L, S) or None
            else:
                bias = _bias_at_keys(self.positions, self.num_heads, positions, key_positions)
        heads, weights = scaled_dot_product_attention(
            q,
            keys,
            values,
            mask=np.repeat(blocked, self.num_heads, axis=0),  # (B·H, L, S): row b·H + h
            bias=bias,
            enable_gqa=self.num_kv_heads != self.num_heads,
        )  # (B, H, L, d_h), (B, H, L, S)
        output = self.output(merge_heads(heads))  # (B, L, D) @ W_O
        if average_weights:
            weights = weights.mean(axis=1)  # (B, L, S)
        return output, weights
