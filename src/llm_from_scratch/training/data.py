"""Batches drawn with the package's SplitMix64: random windows of a token array and the
synthetic induction task.

Windows: start s uniform in [0, N − T − 1]; inputs = tokens[s : s+T], targets = tokens[s+1 :
s+T+1].
Induction: each row is L random tokens followed by the same L tokens again. Only the targets whose
input token lies in the repeated half count (the others are ``IGNORE_INDEX``): there the next
token is the one that followed the previous occurrence of the current position's token, so an
induction head can predict it exactly, while nothing can beat ln V on the first half.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..random import SplitMix64

IGNORE_INDEX = -100  # torch's default ignore_index for targets that do not count


def _positive(value: Any, label: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ArgumentError(f"{label} must be a positive integer; got {value!r}.")
    return int(value)


def _check_rng(rng: Any) -> SplitMix64:
    if not isinstance(rng, SplitMix64):
        raise ArgumentError(f"rng must be a SplitMix64 generator; got {type(rng).__name__}.")
    return rng


def uniform_integers(rng: SplitMix64, high: int, count: int) -> np.ndarray:
    """[count] integers uniform in [0, high): ⌊u · high⌋ with u from the top 53 bits."""
    unit = (rng.u64_array(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return np.minimum((unit * high).astype(np.int64), high - 1)


def random_windows(
    tokens: Any, batch_size: int, context: int, rng: SplitMix64
) -> tuple[np.ndarray, np.ndarray]:
    """(inputs [B, T], targets [B, T]) with targets[b, t] = tokens[s_b + t + 1]."""
    array = np.asarray(tokens)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ShapeError(
            f"random_windows reads a 1-D integer token array; got shape {array.shape}, dtype "
            f"{array.dtype}."
        )
    batch_size = _positive(batch_size, "batch_size")
    context = _positive(context, "context")
    if array.size < context + 1:
        raise ShapeError(
            f"random_windows needs at least context + 1 = {context + 1} tokens; got {array.size}."
        )
    starts = uniform_integers(_check_rng(rng), array.size - context, batch_size)  # (B,)
    offsets = starts[:, None] + np.arange(context + 1)[None, :]  # (B, T + 1)
    windows = array[offsets].astype(np.int64)
    return windows[:, :-1], windows[:, 1:]


def induction_batch(
    batch_size: int, half_length: int, vocab_size: int, rng: SplitMix64
) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, targets) [B, 2L − 1]: L random tokens twice; targets at t < L are ignored."""
    batch_size = _positive(batch_size, "batch_size")
    half_length = _positive(half_length, "half_length")
    vocab_size = _positive(vocab_size, "vocab_size")
    if half_length < 2:
        raise ArgumentError(
            f"half_length must be at least 2 to repeat anything; got {half_length}."
        )
    first = uniform_integers(_check_rng(rng), vocab_size, batch_size * half_length)
    first = first.reshape(batch_size, half_length)  # (B, L)
    sequence = np.concatenate([first, first], axis=1)  # (B, 2L)
    inputs, targets = sequence[:, :-1], sequence[:, 1:].copy()  # (B, 2L − 1)
    targets[:, :half_length] = IGNORE_INDEX  # count inputs at t ≥ L: L − 1 targets per row
    return inputs, targets
