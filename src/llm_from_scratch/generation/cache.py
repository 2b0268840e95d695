"""The key/value cache: every layer's keys and values, written once at their absolute positions.

Without a cache, generating token t+1 re-runs the decoder over all t + 1 positions, although
the keys and values of positions 0 … t − 1 have not changed (causal attention: a position never
reads later ones). The cache keeps them: K and V of layer l are [B, G, C, d_h] arrays (G the
key/value heads, C the capacity, in positions), the prompt fills positions 0 … T − 1 in one
pass (prefill), and each step writes one position per row and reads every position up to it.

Rows may sit at different positions (prompts of different lengths): the query of row b at
position p_b sees key slots j <= p_b and no others. The cache keeps, per layer and row, which
slots hold keys of the current sequence, and refuses a pass that would read any other slot:

- a pass writing positions P of a row makes every slot at or after min(P) stale first (they
  were computed from a sequence that is being rewritten), then marks the slots in P written;
- every query at position p must then find slots 0 … p written, so the positions of a row
  continue its sequence (prefill 0 … T − 1, then T, T + 1, …) or re-run part of it;
- positions repeat within a row nowhere (two tokens cannot share one slot).

A layer with a sliding window w < C keeps a rolling buffer of w slots instead (see LayerCache):
its queries never read further back, so its memory does not grow with the positions held.

Padding that the prefill wrote beyond a short row's length is made stale by the row's first
step and overwritten before any query of that row reads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import Tensor, grad_enabled
from ..autodiff.tensor import TapeEntry, creation_numbers
from ..errors import ArgumentError, TokenError
from ..nn.decoder import Decoder
from ..nn.positions import RotaryEmbedding
from ..validate import as_integer, as_numpy, element_count, non_negative_int, positive_int

__all__ = [
    "KVCache",
    "LayerCache",
    "cache_bytes",
    "cache_bytes_per_token",
    "latent_cache_bytes_per_token",
]

FLOAT64_BYTES = 8


def cache_bytes(num_layers: int, positions: int, model_width: int, batch: int = 1) -> int:
    """2 · layers · positions · width · 8 bytes per row (a K and a V of width D per position)."""
    num_layers = positive_int(num_layers, "cache_bytes num_layers")
    positions = positive_int(positions, "cache_bytes positions")
    model_width = positive_int(model_width, "cache_bytes model_width")
    batch = positive_int(batch, "cache_bytes batch")
    return 2 * num_layers * positions * model_width * FLOAT64_BYTES * batch


def cache_bytes_per_token(
    num_layers: int, num_kv_heads: int, head_width: int, bytes_per_number: int = 8
) -> int:
    """2 · L · G · d_h · bytes: a K and a V row of G heads of width d_h in each of L layers.

    G = H is multi-head attention, 1 <= G < H grouped-query and G = 1 multi-query attention.
    Llama 3 8B in bf16: 2 · 32 · 8 · 128 · 2 = 131072 bytes (128 KiB) per token.
    """
    num_layers = positive_int(num_layers, "cache_bytes_per_token num_layers")
    num_kv_heads = positive_int(num_kv_heads, "cache_bytes_per_token num_kv_heads")
    head_width = positive_int(head_width, "cache_bytes_per_token head_width")
    bytes_per_number = positive_int(
        bytes_per_number,
        "cache_bytes_per_token bytes_per_number",
        fix="float64 is 8 bytes, float32 4, bf16 and fp16 2.",
    )
    return 2 * num_layers * num_kv_heads * head_width * bytes_per_number


def latent_cache_bytes_per_token(
    num_layers: int, latent_width: int, rope_width: int, bytes_per_number: int = 8
) -> int:
    """L · (d_c + d_rope) · bytes: DeepSeek-V2's multi-head latent attention cache per token.

    Each layer keeps one compressed latent c_KV of width d_c (keys and values are both
    recomputed from it) and one decoupled RoPE key of width d_rope shared by the heads.
    DeepSeek-V2 in bf16: 60 · (512 + 64) · 2 = 69120 bytes per token.
    """
    num_layers = positive_int(num_layers, "latent_cache_bytes_per_token num_layers")
    latent_width = positive_int(latent_width, "latent_cache_bytes_per_token latent_width")
    rope_width = non_negative_int(rope_width, "latent_cache_bytes_per_token rope_width")
    bytes_per_number = positive_int(
        bytes_per_number,
        "latent_cache_bytes_per_token bytes_per_number",
        fix="float64 is 8 bytes, float32 4, bf16 and fp16 2.",
    )
    return num_layers * (latent_width + rope_width) * bytes_per_number


class LayerCache:
    """One block's keys and values, [B, G, C, d_h] each (G key/value heads), or a rolling buffer.

    Without a window (or with a window w >= C) slot j holds absolute position j. With a window
    w < C the layer keeps only W = w slots, [B, G, w, d_h], position p in slot p mod w: a query
    at p reads p − w + 1 … p and nothing older, so older keys are overwritten and the memory
    stays 2 · B · G · w · d_h · 8 bytes however long the generation.
    """

    def __init__(
        self, owner: KVCache, num_heads: int, head_width: int, window: int | None = None
    ) -> None:
        rolling = window is not None and window < owner.capacity
        slots = window if rolling else owner.capacity
        shape = (owner.batch, num_heads, slots, head_width)
        element_count(shape, "KVCache layer [B, G, C, d_h]")
        self._owner = owner
        self.window = window
        self.rolling = rolling
        self.keys = np.zeros(shape)  # (B, G, C or w, d_h)
        self.values = np.zeros(shape)  # (B, G, C or w, d_h)
        self.filled = np.zeros((owner.batch, owner.capacity), dtype=bool)  # (B, C) current keys
        # rolling buffer: the absolute position each slot holds, −1 for none
        self.slot_positions = np.full((owner.batch, slots), -1, dtype=np.int64)  # (B, W)
        self.key_positions: np.ndarray | None = None  # (B, S) of the last read (rolling only)
        self.written: tuple[Tensor, Tensor] | None = None  # the last k, v stored (for counting)

    @property
    def query_positions(self) -> np.ndarray:
        """[B, L] absolute positions of the tokens being run (set by KVCache.start)."""
        return self._owner.query_positions

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, np.ndarray]:
        """Store k, v [B, G, L, d_h] at the query positions; return K, V [B, G, S, d_h], blocked.

        Without a rolling buffer S = max position + 1 and blocked [B, L, S] is True where slot
        j > the query's position. With one, S = w + L (the buffer, then the new keys, whose
        positions are ``key_positions`` [B, S]) and blocked is True unless p − w < j <= p.
        """
        positions = self._owner.query_positions  # (B, L)
        batch, heads, _, head_width = self.keys.shape
        if k.shape != (batch, heads, positions.shape[1], head_width) or v.shape != k.shape:
            raise ArgumentError(
                f"LayerCache.append needs k and v of shape [B, G, L, d_h] = "
                f"{[batch, heads, positions.shape[1], head_width]}; got "
                f"k {k.shape}, v {v.shape}."
            )
        filled = slots_after_write(self.filled, positions)  # (B, C), checked before writing
        check_reads(filled, positions)
        if self.rolling:
            return self._append_rolling(k, v, positions, filled)
        self.filled = filled
        self.written = (k, v)
        rows = np.arange(batch)[:, None]  # (B, 1)
        self.keys[rows, :, positions] = k.value.transpose(0, 2, 1, 3)  # slots (B, L) ← (G, d_h)
        self.values[rows, :, positions] = v.value.transpose(0, 2, 1, 3)
        key_len = int(positions.max()) + 1
        blocked = np.arange(key_len)[None, None, :] > positions[:, :, None]  # (B, L, S)
        keys = _read(self.keys[:, :, :key_len], k, v)  # (B, G, S, d_h), a view
        values = _read(self.values[:, :, :key_len], k, v)
        return keys, values, blocked

    def _append_rolling(
        self, k: Tensor, v: Tensor, positions: np.ndarray, filled: np.ndarray
    ) -> tuple[Tensor, Tensor, np.ndarray]:
        """The rolling buffer's read (old slots, then the new keys) and write (the newest w)."""
        window = self.keys.shape[2]
        # slots holding positions being rewritten are stale before this pass reads them
        held = self.slot_positions.copy()  # (B, W)
        held[held >= positions.min(axis=1, keepdims=True)] = -1
        key_positions = np.concatenate([held, positions], axis=1)  # (B, W + L)
        query = positions[:, :, None]  # (B, L, 1)
        key = key_positions[:, None, :]  # (B, 1, W + L)
        blocked = (key < 0) | (key > query) | (key <= query - window)  # (B, L, W + L)
        seen = (~blocked).sum(axis=2)  # (B, L): keys each query finds
        short = np.argwhere(seen != np.minimum(positions + 1, window))
        if short.size:
            b, i = (int(n) for n in short[0])
            raise TokenError(
                f"KVCache: a rolling buffer keeps each row's newest {window} positions (the "
                f"sliding window), so the query at position {int(positions[b, i])} of row {b} "
                f"cannot find the {window} keys it reads; the buffer holds positions "
                f"{sorted(int(p) for p in held[b] if p >= 0)}. Continue the sequence, or "
                "re-run at most the last position."
            )
        keys = np.concatenate([self.keys, k.value], axis=2)  # (B, G, W + L, d_h)
        values = np.concatenate([self.values, v.value], axis=2)
        # write: each row keeps its newest w positions below its length, p in slot p mod w
        lengths = self._owner.query_lengths  # (B,): positions at or past it are padding
        kept = np.where(positions < lengths[:, None], positions, -1)  # (B, L)
        newest = kept.max(axis=1, keepdims=True)  # (B, 1)
        rows, columns = np.nonzero((kept >= 0) & (kept > newest - window))  # distinct slots
        slots = positions[rows, columns] % window
        self.filled = filled
        self.written = (k, v)
        self.slot_positions = held
        self.keys[rows, :, slots] = k.value[rows, :, columns]  # (n, G, d_h)
        self.values[rows, :, slots] = v.value[rows, :, columns]
        self.slot_positions[rows, slots] = positions[rows, columns]
        self.key_positions = key_positions
        return _read(keys, k, v), _read(values, k, v), blocked


class _CacheRead:
    """The op of a recorded cache read: on the tape so that a backward through it is refused."""

    name = "kv_cache_read"
    reads_out = False
    unread: tuple[int, ...] = ()  # no backward runs, so no input value is let go


NO_BACKWARD = (
    "backward() cannot pass through a KV cache: the cached keys and values are stored numbers, "
    "not a record of the passes that computed them, so the gradient would miss every path "
    "through them. Train on uncached passes, model(ids); run cached passes under no_grad()."
)


def _read(stored: np.ndarray, k: Tensor, v: Tensor) -> Tensor:
    """Stored keys or values as a constant, or, when k or v is recorded, as a refusing node."""
    if not (grad_enabled() and (k.requires_grad or v.requires_grad)):
        return Tensor.wrap(stored)
    entry = TapeEntry(_CacheRead(), (k, v), {}, [False, False], next(creation_numbers))
    read = Tensor.from_op(stored, entry)
    entry.seen = ((read, NO_BACKWARD),)  # checked before any gradient is written
    return read


def check_cache_size(model: Decoder, batch: int, capacity: int, owner: str = "KVCache") -> None:
    """Refuse a cache whose arrays would pass MAX_ELEMENTS, before any of them is allocated.

    Each layer holds K and V of [B, G, C, d_h] (C = the window w for a rolling buffer, w < C)
    and a slot map of [B, C]: too large a batch or capacity is the package's refusal, never
    numpy's MemoryError half-way through building the cache.
    """
    for block in model.blocks:
        window = block.attention.window
        slots = window if window is not None and window < capacity else capacity
        shape = (batch, block.attention.num_kv_heads, slots, block.attention.head_width)
        element_count(shape, f"{owner} layer [B, G, C, d_h]")
    element_count((batch, capacity), f"{owner} slot map [B, C]")


class KVCache:
    """Keys and values of every block of a decoder for B rows and C positions (float64)."""

    def __init__(self, model: Decoder, batch: int, capacity: int) -> None:
        if not isinstance(model, Decoder):
            raise ArgumentError(f"KVCache needs a Decoder; got {type(model).__name__}.")
        self.batch = positive_int(batch, "KVCache batch")
        self.capacity = positive_int(
            capacity, "KVCache capacity", fix="The capacity is the number of positions held."
        )
        self.num_layers = len(model.blocks)
        self.model_width = model.model_width
        check_cache_size(model, self.batch, self.capacity)  # before anything is allocated
        self.query_positions = np.zeros((self.batch, 0), dtype=np.int64)  # (B, L)
        self.query_lengths = np.full(self.batch, np.iinfo(np.int64).max, dtype=np.int64)  # (B,)
        self.layers = [
            LayerCache(
                self,
                block.attention.num_kv_heads,
                block.attention.head_width,
                block.attention.window,
            )
            for block in model.blocks
        ]
        _prepare_rotations(model, self.capacity)

    def __repr__(self) -> str:
        return (
            f"KVCache(B={self.batch}, layers={self.num_layers}, capacity={self.capacity}, "
            f"D={self.model_width}, {self.nbytes:,} bytes)"
        )

    def layer(self, index: int) -> LayerCache:
        """Block ``index``'s cache, 0 <= index < number of layers."""
        number = as_integer(index, "KVCache.layer index", minimum=0)
        if number >= self.num_layers:
            raise ArgumentError(
                f"KVCache.layer index must lie in [0, {self.num_layers}) (one cache per block); "
                f"got {number}."
            )
        return self.layers[number]

    def start(self, positions: Any, lengths: Any = None) -> None:
        """Set the absolute positions [B, L] of the next tokens run through the decoder.

        ``lengths`` [B] (optional) marks positions >= lengths[b] of row b as padding: a rolling
        buffer never keeps them (a short row's own last w keys stay). Refused (TokenError) when
        a query would read a slot that holds no key of its sequence: see the module docstring.
        """
        array = as_numpy(positions, "KVCache.start positions", kind="[B, L] integer array")
        if array.ndim != 2 or array.shape[0] != self.batch or array.dtype.kind not in "iu":
            raise ArgumentError(
                f"KVCache.start needs integer positions [B, L] with B = {self.batch}; got "
                f"{array.dtype} array of shape {array.shape}. Positions are not rounded: pass "
                "integers."
            )
        if array.shape[1] == 0:
            raise TokenError(
                "KVCache.start needs at least one position per row (L >= 1); got L = 0."
            )
        if array.min() < 0 or array.max() >= self.capacity:
            raise TokenError(
                f"positions must lie in [0, {self.capacity}), the positions this cache holds; "
                f"got values from {array.min()} to {array.max()}. Build the cache with a "
                "larger capacity (the context)."
            )
        array = array.astype(np.int64)
        ordered = np.sort(array, axis=1)
        if (ordered[:, 1:] == ordered[:, :-1]).any():
            row = int(np.argmax((ordered[:, 1:] == ordered[:, :-1]).any(axis=1)))
            raise TokenError(
                f"each position may appear once per row in one pass (one key slot per token); "
                f"row {row} repeats a position: {array[row].tolist()}. Run the tokens at "
                "distinct positions."
            )
        if lengths is None:
            lengths = np.full(self.batch, np.iinfo(np.int64).max, dtype=np.int64)
        else:
            lengths = as_numpy(lengths, "KVCache.start lengths", kind="[B] integer array")
            if lengths.shape != (self.batch,) or lengths.dtype.kind not in "iu":
                raise TokenError(
                    f"KVCache.start lengths must be {self.batch} integers, one per row; got "
                    f"{lengths.dtype} array of shape {lengths.shape}."
                )
            lengths = lengths.astype(np.int64)
            if (lengths < 1).any():
                raise TokenError(
                    f"KVCache.start lengths must be at least 1 (each row holds a token); got "
                    f"{lengths.tolist()}."
                )
        for layer in self.layers:  # every layer, before any of them is written
            check_reads(slots_after_write(layer.filled, array), array)
        self.query_positions = array
        self.query_lengths = lengths

    @property
    def nbytes(self) -> int:
        """Bytes held by every K and V array: 2 · layers · B · G · slots · d_h · 8.

        slots = C (the capacity), or w for a layer with a sliding window w < C.
        """
        return sum(layer.keys.nbytes + layer.values.nbytes for layer in self.layers)

    def shapes(self) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """(K shape, V shape) of each layer, [B, G, C, d_h] ([B, G, w, d_h] when rolling)."""
        return [(layer.keys.shape, layer.values.shape) for layer in self.layers]

    def filled_lengths(self) -> np.ndarray:
        """[B]: how many leading slots of each row hold current keys in every layer."""
        lengths = [_first_gap(layer.filled) for layer in self.layers]
        return np.minimum.reduce(lengths) if lengths else np.zeros(self.batch, dtype=np.int64)

    def written(self) -> list[Tensor]:
        """The k and v tensors every layer stored on the last pass (their tapes hold its work)."""
        return [t for layer in self.layers if layer.written for t in layer.written]


def _prepare_rotations(model: Decoder, capacity: int) -> None:
    """Build each RoPE scheme's shared tables for the C positions this cache holds, once.

    A rotary scheme keeps one table for the longest length it has seen and rebuilds it when a
    longer one is asked for: without this, a step at a new position would rebuild it every time
    (see ``RotaryEmbedding.prepare_tables``). The other schemes hold no tables.
    """
    for block in model.blocks:
        scheme = block.attention.positions
        if isinstance(scheme, RotaryEmbedding):
            scheme.prepare_tables(capacity)


def _first_gap(filled: np.ndarray) -> np.ndarray:
    """[B]: the first slot of each row that holds no current key (C when all do)."""
    capacity = filled.shape[1]
    return np.where(filled.all(axis=1), capacity, np.argmin(filled, axis=1)).astype(np.int64)


def slots_after_write(filled: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """[B, C]: the slots that hold current keys once positions [B, L] are (re)written.

    Slots at or after a row's smallest new position are stale (computed from the sequence being
    rewritten), so they are cleared first; then the new positions are marked.
    """
    slots = np.arange(filled.shape[1])[None, :]  # (1, C)
    after = filled & (slots < positions.min(axis=1, keepdims=True))  # (B, C)
    after[np.arange(filled.shape[0])[:, None], positions] = True
    return after


def check_reads(filled: np.ndarray, positions: np.ndarray) -> None:
    """Refuse a pass in which a query at position p would read a slot j <= p never written."""
    gap = _first_gap(filled)  # (B,)
    latest = positions.max(axis=1)  # (B,): the query reading the most slots
    bad = np.flatnonzero(latest >= gap)
    if bad.size:
        b = int(bad[0])
        raise TokenError(
            f"KVCache: the query at position {int(latest[b])} of row {b} would read key slot "
            f"{int(gap[b])}, which holds no key of its sequence (with this pass's positions "
            f"{positions[b].tolist()}, row {b} holds its first {int(gap[b])} slots). Positions "
            "must continue each row's sequence: prefill 0 … T − 1 first, then one position at a "
            "time, each at most one past the last slot written."
        )
