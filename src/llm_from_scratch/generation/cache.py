"""The key/value cache: every layer's keys and values, written once at their absolute positions.

Without a cache, generating token t+1 re-runs the decoder over all t + 1 positions, although
the keys and values of positions 0 … t − 1 have not changed (causal attention: a position never
reads later ones). The cache keeps them: K and V of layer l are [B, H, C, d_h] arrays (C the
capacity, in positions), the prompt fills positions 0 … T − 1 in one pass (prefill), and each
step writes one position per row and reads every position up to it.

Rows may sit at different positions (prompts of different lengths): the query of row b at
position p_b sees key slots j <= p_b and no others, and a slot is always written before a query
at its position reads it, so the slots beyond a row's position (padding, or nothing yet) are
never seen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, TokenError
from ..nn.decoder import Decoder
from ..validate import element_count, positive_int

__all__ = ["KVCache", "LayerCache", "cache_bytes"]

FLOAT64_BYTES = 8


def cache_bytes(num_layers: int, positions: int, model_width: int, batch: int = 1) -> int:
    """2 · layers · positions · width · 8 bytes per row (a K and a V of width D per position)."""
    num_layers = positive_int(num_layers, "cache_bytes num_layers")
    positions = positive_int(positions, "cache_bytes positions")
    model_width = positive_int(model_width, "cache_bytes model_width")
    batch = positive_int(batch, "cache_bytes batch")
    return 2 * num_layers * positions * model_width * FLOAT64_BYTES * batch


class LayerCache:
    """One block's keys and values, [B, H, C, d_h] each, at absolute positions 0 … C − 1."""

    def __init__(self, owner: KVCache, num_heads: int, head_width: int) -> None:
        shape = (owner.batch, num_heads, owner.capacity, head_width)
        element_count(shape, "KVCache layer [B, H, C, d_h]")
        self._owner = owner
        self.keys = np.zeros(shape)  # (B, H, C, d_h)
        self.values = np.zeros(shape)  # (B, H, C, d_h)
        self.written: tuple[Tensor, Tensor] | None = None  # the last k, v stored (for counting)

    @property
    def query_positions(self) -> np.ndarray:
        """[B, L] absolute positions of the tokens being run (set by KVCache.start)."""
        return self._owner.query_positions

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, np.ndarray]:
        """Store k, v [B, H, L, d_h] at the query positions; return K, V [B, H, S, d_h], blocked.

        S = max position + 1; blocked [B, L, S] is True where slot j > the query's position.
        """
        positions = self._owner.query_positions  # (B, L)
        batch, heads, _, head_width = self.keys.shape
        if k.shape != (batch, heads, positions.shape[1], head_width) or v.shape != k.shape:
            raise ArgumentError(
                f"LayerCache.append needs k and v of shape [B, H, L, d_h] = "
                f"{[batch, heads, positions.shape[1], head_width]}; got "
                f"k {k.shape}, v {v.shape}."
            )
        rows = np.arange(batch)[:, None]  # (B, 1)
        self.keys[rows, :, positions] = k.value.transpose(0, 2, 1, 3)  # slots (B, L) ← (H, d_h)
        self.values[rows, :, positions] = v.value.transpose(0, 2, 1, 3)
        self.written = (k, v)
        key_len = int(positions.max()) + 1
        blocked = np.arange(key_len)[None, None, :] > positions[:, :, None]  # (B, L, S)
        keys = Tensor.wrap(self.keys[:, :, :key_len])  # (B, H, S, d_h), a view
        values = Tensor.wrap(self.values[:, :, :key_len])
        return keys, values, blocked


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
        self.query_positions = np.zeros((self.batch, 0), dtype=np.int64)  # (B, L)
        self.layers = [
            LayerCache(self, block.attention.num_heads, block.attention.head_width)
            for block in model.blocks
        ]

    def __repr__(self) -> str:
        return (
            f"KVCache(B={self.batch}, layers={self.num_layers}, capacity={self.capacity}, "
            f"D={self.model_width}, {self.nbytes:,} bytes)"
        )

    def layer(self, index: int) -> LayerCache:
        """Block ``index``'s cache."""
        return self.layers[index]

    def start(self, positions: Any) -> None:
        """Set the absolute positions [B, L] of the next tokens run through the decoder."""
        array = np.asarray(positions)
        if array.ndim != 2 or array.shape[0] != self.batch or array.dtype.kind not in "iu":
            raise ArgumentError(
                f"KVCache.start needs integer positions [B, L] with B = {self.batch}; got "
                f"{array.dtype} array of shape {array.shape}."
            )
        if array.size and (array.min() < 0 or array.max() >= self.capacity):
            raise TokenError(
                f"positions must lie in [0, {self.capacity}), the positions this cache holds; "
                f"got values from {array.min()} to {array.max()}. Build the cache with a "
                "larger capacity (the context)."
            )
        self.query_positions = array.astype(np.int64)

    @property
    def nbytes(self) -> int:
        """Bytes held by every K and V array: 2 · layers · capacity · width · 8 · B."""
        return sum(layer.keys.nbytes + layer.values.nbytes for layer in self.layers)

    def shapes(self) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """(K shape, V shape) of each layer, [B, H, C, d_h]."""
        return [(layer.keys.shape, layer.values.shape) for layer in self.layers]

    def written(self) -> list[Tensor]:
        """The k and v tensors every layer stored on the last pass (their tapes hold its work)."""
        return [t for layer in self.layers if layer.written for t in layer.written]
