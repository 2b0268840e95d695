"""Chapter 12's exercise: which key/value head each query head reads, written by the reader.

``kv_head_of(num_heads, num_kv_heads)`` returns H whole numbers, entry h the key/value head g
that query head h reads in grouped-query attention: consecutive runs of H / G query heads share
one key/value head, g = ⌊h / (H / G)⌋. The grader checks it against that rule written out head by
head and against what the package's layer does (which key head's weights move which query
head's attention), and names the two usual slips: the interleaved order h mod G and ⌊h / G⌋.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..figures.current_attention import kv_head_reads
from ..nn.attention import MultiHeadAttention
from ..random import SplitMix64
from .grading import AnswerError, call, expect, grader, require_callable

__all__ = ["CASES", "check_kv_head_of", "kv_heads_by_rule"]

CASES = ((8, 2), (6, 3), (4, 4), (4, 1), (12, 4))  # (H, G): H/G ≠ G in the first and the last


def kv_heads_by_rule(num_heads: int, num_kv_heads: int) -> np.ndarray:
    """g[h] for h = 0 … H − 1, counting H / G query heads per key/value head: [H] ints."""
    group = num_heads // num_kv_heads
    out = np.empty(num_heads, dtype=np.int64)
    head = 0
    for g in range(num_kv_heads):
        for _ in range(group):
            out[head] = g
            head += 1
    return out


def _layer_truth(num_heads: int, num_kv_heads: int) -> np.ndarray:
    """The package layer's own grouping, measured: the one key head each query head reads."""
    layer = MultiHeadAttention(
        2 * num_heads, num_heads, num_kv_heads=num_kv_heads, rng=SplitMix64(1200 + num_heads)
    )
    reads = kv_head_reads(layer)  # (H, G) bool
    assert np.all(reads.sum(axis=1) == 1)
    return np.argmax(reads, axis=1)


@grader("Chapter 12, the key/value head of each query head")
def check_kv_head_of(candidate: Any) -> str:
    """Grade ``kv_head_of(H, G)`` on five head counts, head by head."""
    require_callable(candidate, "your kv_head_of")
    for heads, kv_heads in CASES:
        case = f"H = {heads}, G = {kv_heads}"
        raw = call(candidate, heads, kv_heads, what="your kv_head_of", case=case)
        try:
            got = np.asarray(raw)
        except (TypeError, ValueError):  # ragged nesting
            got = np.asarray(None)
        want = kv_heads_by_rule(heads, kv_heads)
        assert np.array_equal(want, _layer_truth(heads, kv_heads))
        expect(
            got.shape == want.shape,
            f"kv_head_of({heads}, {kv_heads}) has shape {got.shape} for {case}; it should hold "
            f"one key/value head per query head, shape ({heads},).",
        )
        expect(
            got.dtype.kind in "iu" or (got.dtype.kind == "f" and np.all(got == np.round(got))),
            f"kv_head_of({heads}, {kv_heads}) holds {got.dtype} values for {case}; each entry "
            "is a head index, a whole number.",
        )
        got = got.astype(np.int64)
        wrong = np.nonzero(got != want)[0]
        if wrong.size:
            h = int(wrong[0])
            group = heads // kv_heads
            hint = ""
            if np.array_equal(got, np.arange(heads) % kv_heads):
                hint = (
                    f" You interleaved the heads (h mod G): the layer splits the H query heads "
                    f"into G consecutive runs of H / G = {group}, so heads 0 … {group - 1} share "
                    "key/value head 0. Divide instead: h // (H // G)."
                )
            elif np.array_equal(got, np.arange(heads) // kv_heads):
                hint = (
                    f" You divided by G; each key/value head serves H / G = {group} query heads, "
                    "so divide by the group size: h // (H // G)."
                )
            raise AnswerError(
                f"kv_head_of({heads}, {kv_heads})[{h}] is {int(got[h])} for {case}; query head "
                f"{h} reads key/value head {int(want[h])}.{hint}"
            )
    return "Every query head reads the key/value head the layer gives it, on five head counts."
