"""Batches drawn with the package's SplitMix64: random windows of a token array and the
synthetic induction task.

Windows: start s uniform in [0, N − T − 1]; inputs = tokens[s : s+T], targets = tokens[s+1 :
s+T+1].
Induction (Olsson et al. 2022): each row is L distinct random tokens, the same L again, then
random filler; L varies from row to row, so no fixed offset finds the copy. Only targets whose
input token lies in the repeated half count (the others are ``IGNORE_INDEX``): there the next
token is the one that followed the current token's earlier occurrence, so an induction head
can predict it exactly, while nothing can beat ln V on the first half.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ArgumentError, ShapeError, TokenError
from ..random import SplitMix64, as_generator
from ..validate import (
    MAX_ELEMENTS,
    as_integer,
    as_numpy,
    non_negative_int,
    positive_int,
    received,
)

IGNORE_INDEX = -100  # torch's default ignore_index for targets that do not count
MAX_HIGH = 2**53  # ⌊u · high⌋ with a 53-bit u reaches every integer below high only up to 2⁵³
_INT64_MAX = int(np.iinfo(np.int64).max)


def _fits(what: str, dims: tuple[int, ...], arrays: int = 1) -> None:
    """Refuse a request of Π dims 64-bit values (``arrays`` copies) beyond MAX_ELEMENTS."""
    count = math.prod(dims)
    if count > MAX_ELEMENTS:
        shown = " × ".join(str(n) for n in dims)
        raise ArgumentError(
            f"{what} would hold {shown} = {count:,} 64-bit values and need about "
            f"{count * 8 * arrays:,} bytes; the package refuses more than {MAX_ELEMENTS:,} "
            "values (2 GiB) in one request, before allocating. Use a smaller batch or context."
        )


def uniform_integers(rng: SplitMix64, high: int, count: int) -> np.ndarray:
    """[count] integers uniform in [0, high): ⌊u · high⌋ with u from the top 53 bits."""
    rng = as_generator(rng, "uniform_integers")
    high = positive_int(
        high,
        "uniform_integers high",
        fix="The draws lie in [0, high), so high must be at least 1 (an empty range has none).",
    )
    if high > MAX_HIGH:
        raise ArgumentError(
            f"uniform_integers high must be at most 2⁵³ = {MAX_HIGH:,} (a 53-bit fraction "
            f"cannot reach every integer below a larger bound); got {high:,}."
        )
    count = non_negative_int(count, "uniform_integers count")
    _fits("uniform_integers", (count,))
    unit = (rng.u64_array(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return np.minimum((unit * high).astype(np.int64), high - 1)


def random_windows(
    tokens: Any, batch_size: int, context: int, rng: SplitMix64
) -> tuple[np.ndarray, np.ndarray]:
    """(inputs [B, T], targets [B, T]) with targets[b, t] = tokens[s_b + t + 1]."""
    array = as_numpy(tokens, "random_windows tokens", kind="1-D integer token array")
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ShapeError(
            f"random_windows reads a 1-D integer token array; got shape {array.shape}, dtype "
            f"{array.dtype}."
        )
    if array.size and (int(array.min()) < 0 or int(array.max()) > _INT64_MAX):
        bad = int(array.min()) if int(array.min()) < 0 else int(array.max())
        raise TokenError(
            f"random_windows reads token IDs, which are non-negative int64 values; got {bad}."
        )
    batch_size = positive_int(batch_size, "batch_size")
    context = positive_int(context, "context")
    if array.size < context + 1:
        raise ShapeError(
            f"random_windows needs at least context + 1 = {context} + 1 tokens (windows longer "
            f"than the data do not fit); got {array.size} in {received(tokens)}."
        )
    _fits("random_windows' batch (inputs and targets)", (batch_size, context + 1), arrays=2)
    rng = as_generator(rng, "random_windows")
    starts = uniform_integers(rng, array.size - context, batch_size)  # (B,)
    offsets = starts[:, None] + np.arange(context + 1)[None, :]  # (B, T + 1)
    windows = array[offsets].astype(np.int64)
    return windows[:, :-1], windows[:, 1:]


def induction_batch(
    batch_size: int,
    context: int,
    vocab_size: int,
    rng: SplitMix64,
    *,
    half_lengths: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, targets) [B, T]: L distinct random tokens, the same L again, random filler.

    L is drawn per row, uniform in ``half_lengths`` = (low, high) inclusive (default: the fixed
    L = ⌊(T + 1)/2⌋, the window's first half). Counted targets sit at input positions
    t = L … 2L − 2, where the next token is the one after the current token's only earlier
    occurrence; every other target is IGNORE_INDEX. Draw order: lengths, a permutation key per
    vocabulary entry per row, then the filler.
    """
    batch_size = positive_int(batch_size, "batch_size")
    context = positive_int(context, "context")
    vocab_size = positive_int(vocab_size, "vocab_size")
    if half_lengths is not None and (
        not isinstance(half_lengths, tuple | list) or len(half_lengths) != 2
    ):
        raise ArgumentError(
            f"induction half_lengths must be a pair (low, high) of integers or None; got "
            f"{half_lengths!r}."
        )
    low, high = ((context + 1) // 2,) * 2 if half_lengths is None else half_lengths
    low = as_integer(low, "induction half_lengths low")
    high = as_integer(high, "induction half_lengths high")
    if not (2 <= low <= high and 2 * high <= context + 1 and high <= vocab_size):
        raise ArgumentError(
            f"induction half_lengths (low, high) need 2 ≤ low ≤ high, 2·high ≤ context + 1 = "
            f"{context} + 1 (both copies fit the window) and high ≤ vocab_size = {vocab_size} "
            f"(the L tokens are distinct); got {(low, high)!r}."
        )
    _fits("induction_batch's sequences", (batch_size, context + 1), arrays=2)
    _fits("induction_batch's permutation keys", (batch_size, vocab_size))
    rng = as_generator(rng, "induction_batch")
    lengths = low + uniform_integers(rng, high - low + 1, batch_size)  # (B,)
    keys = rng.uniform(0.0, 1.0, (batch_size, vocab_size))  # (B, V): sort → a permutation
    sequence = uniform_integers(rng, vocab_size, batch_size * (context + 1))
    sequence = sequence.reshape(batch_size, context + 1)  # (B, T + 1), filler everywhere
    counted = np.zeros((batch_size, context), dtype=bool)  # (B, T)
    for b, length in enumerate(lengths):
        first = np.argsort(keys[b], kind="stable")[:length]  # L distinct tokens
        sequence[b, :length] = first
        sequence[b, length : 2 * length] = first
        counted[b, length : 2 * length - 1] = True
    inputs, targets = sequence[:, :-1], sequence[:, 1:].copy()
    targets[~counted] = IGNORE_INDEX
    return inputs, targets
