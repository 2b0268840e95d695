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
  last L of the S positions.
* A query row whose keys are all blocked (every row, when S = 0) gets all-zero weights and so a
  zero output and a zero gradient. This is a documented choice, finite and warning-free, not a
  probability distribution.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..autodiff import Tensor, ops
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
)
from .linear import Linear
from .module import Module, as_tensor, check_name

__all__ = [
    "AttentionCache",
    "MultiHeadAttention",
    "PositionScheme",
    "causal_mask",
    "merge_heads",
    "scaled_dot_product_attention",
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
    if causal:
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


def _check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    for label, t in (("q", q), ("k", k), ("v", v)):
        if t.ndim != 4:
            raise RankError(
                f"scaled_dot_product_attention expects {label} of rank 4, [B, H, "
                f"{'L' if label == 'q' else 'S'}, d_h]; got shape {t.shape}. Use split_heads "
                "on a [B, T, D] projection."
            )
    if not (q.shape[:2] == k.shape[:2] == v.shape[:2]):
        raise ShapeError(
            f"q, k and v must share batch and head axes [B, H, ...]; got q {q.shape}, "
            f"k {k.shape}, v {v.shape}."
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
) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / √d_h + added + bias, blocked → 0) v: outputs [B,H,L,d_v], weights [B,H,L,S].

    ``mask`` [L,S] or [B·H,L,S] and ``key_padding_mask`` [B,S]: Boolean True blocks, float adds
    (−inf blocks). ``bias`` broadcasts to [B,H,L,S] and is added (ALiBi). ``causal`` blocks keys
    after each query, with the L queries at the last L of the S positions. A fully blocked
    query row gets zero weights and a zero output, and so does every row when S = 0.
    """
    q = as_tensor(q, "scaled_dot_product_attention q")
    k = as_tensor(k, "scaled_dot_product_attention k")
    v = as_tensor(v, "scaled_dot_product_attention v")
    causal = as_flag(causal, "causal")
    _check_qkv(q, k, v)
    batch, heads, queries, head_width = q.shape
    keys = k.shape[2]
    shape = (batch, heads, queries, keys)
    masks = _combine_masks(mask, key_padding_mask, causal, shape)
    bias_tensor = None if bias is None else _bias_tensor(bias, shape)

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


class MultiHeadAttention(Module):
    """MHA(X) = concat(head_1, …, head_H) W_O, head_i = Attention(X W_Q,i, X W_K,i, X W_V,i).

    Four bias-free [D, D] projections, named ``<name>.query``, ``<name>.key``, ``<name>.value``
    and ``<name>.output`` (4D² weights). Heads are the d_h-wide column blocks of W_Q, W_K, W_V.
    """

    def __init__(
        self,
        model_width: int,
        num_heads: int,
        *,
        causal: bool = False,
        positions: PositionScheme | None = None,
        name: str = "attention",
        rng: SplitMix64,
    ) -> None:
        model_width = as_width(model_width, "MultiHeadAttention model_width")
        num_heads = positive_int(num_heads, "num_heads")
        head_width = _check_divisible(model_width, num_heads)
        element_count((model_width, model_width), "MultiHeadAttention projection weight")
        causal = as_flag(causal, "causal")
        check_name(name, "MultiHeadAttention")
        _check_positions(positions, num_heads, head_width)
        with generator(rng, "MultiHeadAttention").transaction() as draft:  # all four or none
            d = model_width
            query = Linear(d, d, bias=False, name=f"{name}.query", rng=draft)
            key = Linear(d, d, bias=False, name=f"{name}.key", rng=draft)
            value = Linear(d, d, bias=False, name=f"{name}.value", rng=draft)
            output = Linear(d, d, bias=False, name=f"{name}.output", rng=draft)
        self._build(query, key, value, output, num_heads, causal, positions, name)

    @classmethod
    def from_parameters(
        cls,
        wq: Any,
        wk: Any,
        wv: Any,
        wo: Any,
        *,
        num_heads: int,
        causal: bool = False,
        positions: PositionScheme | None = None,
        name: str = "attention",
    ) -> MultiHeadAttention:
        """A layer holding exactly W_Q, W_K, W_V, W_O (each [D, D], Y = X W convention)."""
        arrays = []
        for label, w in (("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo)):
            array = as_float_array(w, f"MultiHeadAttention {label}", finite=True, error=ShapeError)
            if array.ndim != 2 or array.shape[0] != array.shape[1] or array.shape[0] == 0:
                raise ShapeError(
                    f"MultiHeadAttention {label} must be a square [D, D] matrix with D >= 1; "
                    f"got shape {array.shape}."
                )
            arrays.append(array)
        if len({a.shape for a in arrays}) != 1:
            raise ShapeError(
                "MultiHeadAttention wq, wk, wv and wo must share one shape [D, D]; got "
                f"{[a.shape for a in arrays]}."
            )
        num_heads = positive_int(num_heads, "num_heads")
        head_width = _check_divisible(arrays[0].shape[0], num_heads)
        causal = as_flag(causal, "causal")
        check_name(name, "MultiHeadAttention")
        _check_positions(positions, num_heads, head_width)
        parts = [
            Linear.from_parameters(a, name=f"{name}.{role}")
            for a, role in zip(arrays, ("query", "key", "value", "output"), strict=True)
        ]
        return cls._assemble(*parts, num_heads, causal, positions, name)

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
    ) -> None:
        Module.__init__(self, name)
        self.model_width = query.input_width
        self.num_heads = num_heads
        self.head_width = self.model_width // num_heads
        self.causal = bool(causal)
        self.positions = positions
        self.query = query  # assignment order = forward order = named_parameters order
        self.key = key
        self.value = value
        self.output = output

    def __repr__(self) -> str:
        return (
            f"MultiHeadAttention(D={self.model_width}, H={self.num_heads}, "
            f"d_h={self.head_width}, causal={self.causal}, name={self.name!r})"
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
        """q, k, v as [B,H,T,d_h], after the position scheme's rotation (if any).

        ``positions`` (broadcasting to [B, H, T]) gives the absolute position of each row for
        the rotation; by default rows sit at 0 … T − 1.
        """
        x = as_tensor(x, "MultiHeadAttention input")
        self.check_input(x)
        q = split_heads(self.query(x), self.num_heads)  # (B, H, T, d_h)
        k = split_heads(self.key(x), self.num_heads)
        v = split_heads(self.value(x), self.num_heads)
        if self.positions is not None and positions is not None:
            q, k = self.positions.rotate(q, positions), self.positions.rotate(k, positions)
        elif self.positions is not None:
            q, k = self.positions.rotate(q), self.positions.rotate(k)
            if q.shape != v.shape or k.shape != v.shape:
                raise ShapeError(
                    f"positions.rotate must keep the shape [B, H, T, d_h] = {v.shape}; got "
                    f"q {q.shape} and k {k.shape}."
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
        )  # (B, H, T, d_h), (B, H, T, T)
        output = self.output(merge_heads(heads))  # (B, T, D) @ W_O
        if average_weights:
            weights = weights.mean(axis=1)  # (B, T, T): a summary, not a representation
        return output, weights

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
        if mask is not None or key_padding_mask is not None:
            raise ArgumentError(
                "With a cache, which keys a query sees follows from the positions the cache "
                "holds; pass mask=None and key_padding_mask=None (got a mask)."
            )
        positions = np.asarray(cache.query_positions)  # (B, L) absolute positions
        q, k, v = self.project_heads(x, positions[:, None, :])  # (B, H, L, d_h)
        keys, values, blocked = cache.append(k, v)  # (B, H, S, d_h) ×2, (B, L, S)
        key_len = blocked.shape[2]
        bias = None
        if self.positions is not None:
            bias_at = getattr(self.positions, "score_bias_at", None)
            if bias_at is None:
                raise ArgumentError(
                    f"Cached attention needs score_bias_at(num_heads, query_positions, key_len) "
                    f"from the position scheme; {type(self.positions).__name__} has none."
                )
            bias = bias_at(self.num_heads, positions, key_len)  # (B, H, L, S) or None
        heads, weights = scaled_dot_product_attention(
            q,
            keys,
            values,
            mask=np.repeat(blocked, self.num_heads, axis=0),  # (B·H, L, S): row b·H + h
            bias=bias,
        )  # (B, H, L, d_h), (B, H, L, S)
        output = self.output(merge_heads(heads))  # (B, L, D) @ W_O
        if average_weights:
            weights = weights.mean(axis=1)  # (B, L, S)
        return output, weights
