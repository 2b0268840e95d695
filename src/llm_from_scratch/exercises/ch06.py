"""Chapter 6's exercises: the head split and the causal mask, written by the reader.

``split_heads(x, num_heads)`` takes x [B, T, D] to [B, H, T, d_h] with d_h = D / H, head h of
token t holding coordinates h·d_h … (h + 1)·d_h − 1. ``causal_mask(T)`` returns a boolean [T, T]
array, True where query i must not see key j (every j > i). The graders check both against the
rule written out entry by entry and against the package's own functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..nn.attention import causal_mask as package_causal_mask
from ..nn.attention import split_heads as package_split_heads
from .grading import AnswerError, as_array, call, expect, grader, require_callable

__all__ = ["check_causal_mask", "check_split_heads", "heads_by_rule", "mask_by_rule"]

SPLIT_CASES = ((2, 3, 8, 4), (1, 5, 6, 2), (2, 2, 6, 1))  # (B, T, D, H), T ≠ H in the first


def heads_by_rule(x: np.ndarray, num_heads: int) -> np.ndarray:
    """out[b, h, t] = x[b, t, h·d_h : (h + 1)·d_h], one slice at a time: [B, H, T, d_h]."""
    batch, tokens, width = x.shape
    head_width = width // num_heads
    out = np.empty((batch, num_heads, tokens, head_width))
    for b, h, t in np.ndindex(batch, num_heads, tokens):
        out[b, h, t] = x[b, t, h * head_width : (h + 1) * head_width]
    return out


@grader("Chapter 6, the head split")
def check_split_heads(candidate: Any) -> str:
    """Grade ``split_heads(x, num_heads)`` on three shapes, entry by entry."""
    require_callable(candidate, "your split_heads")
    for batch, tokens, width, num_heads in SPLIT_CASES:
        x = np.arange(batch * tokens * width, dtype=np.float64).reshape(batch, tokens, width)
        head_width = width // num_heads
        case = f"x of shape ({batch}, {tokens}, {width}) with num_heads = {num_heads}"
        x_copy = x.copy()
        got = as_array(
            call(candidate, x_copy, num_heads, what="your split_heads", case=case),
            "split_heads(x, num_heads)",
        )
        expect(np.array_equal(x_copy, x), f"split_heads changed x in place on {case}.")
        want = heads_by_rule(x, num_heads)
        assert np.array_equal(want, package_split_heads(x, num_heads).value)
        if got.shape == (batch, tokens, num_heads, head_width) and got.shape != want.shape:
            raise AnswerError(
                f"split_heads(x, num_heads) has shape {got.shape} for {case}, that is "
                "[B, T, H, d_h]: the token's row is split into heads, but the head axis must "
                f"come before the token axis, [B, H, T, d_h] = {want.shape}. Swap axes 1 and 2 "
                "(transpose(0, 2, 1, 3))."
            )
        if got.shape != want.shape:
            raise AnswerError(
                f"split_heads(x, num_heads) has shape {got.shape} for {case}; it should have "
                f"shape [B, H, T, d_h] = {want.shape}, with d_h = D / H = {head_width}."
            )
        if not np.array_equal(got, want):
            b, h, t = (int(i) for i in np.argwhere(np.any(got != want, axis=-1))[0])
            lo, hi = h * head_width, (h + 1) * head_width
            hint = ""
            if np.array_equal(got, x.reshape(want.shape)):
                hint = (
                    " You reshaped straight to [B, H, T, d_h]; a reshape keeps the memory "
                    "order, so it cuts the sequence's rows into H runs instead of cutting each "
                    "token's row into H slices. Reshape to [B, T, H, d_h] first, then swap axes "
                    "1 and 2."
                )
            raise AnswerError(
                f"split_heads(x, num_heads)[{b}, {h}, {t}] is {got[b, h, t].tolist()} for {case}; "
                f"head {h} of token {t} should hold coordinates {lo} … {hi - 1} of that token, "
                f"x[{b}, {t}, {lo}:{hi}] = {want[b, h, t].tolist()}.{hint}"
            )
    return "Every head of every token holds its own slice of the token's row, on three shapes."


def mask_by_rule(tokens: int) -> np.ndarray:
    """blocked[i, j] = (j > i) for query i and key j, written entry by entry: [T, T] bool."""
    blocked = np.zeros((tokens, tokens), dtype=bool)
    for i, j in np.ndindex(tokens, tokens):
        blocked[i, j] = j > i
    return blocked


@grader("Chapter 6, the causal mask")
def check_causal_mask(candidate: Any) -> str:
    """Grade ``causal_mask(T)``: a boolean [T, T], True exactly where key j > query i."""
    require_callable(candidate, "your causal_mask")
    for tokens in (4, 1, 6):
        case = f"T = {tokens}"
        raw = call(candidate, tokens, what="your causal_mask", case=case)
        expect(raw is not None, f"causal_mask({tokens}) is None: the function returns nothing.")
        expect(
            not hasattr(raw, "value"),
            f"causal_mask({tokens}) is {type(raw).__name__}; return a plain numpy boolean array "
            "(a mask is a constant, not a Tensor).",
        )
        try:
            got = np.asarray(raw)
        except ValueError:
            raise AnswerError(
                f"causal_mask({tokens}) has rows of different lengths; it should be a [T, T] "
                "array, one row per query and one column per key."
            ) from None
        want = mask_by_rule(tokens)
        assert np.array_equal(want, package_causal_mask(tokens, tokens))
        expect(
            got.dtype == np.bool_,
            f"causal_mask({tokens}) has dtype {got.dtype}; it should be a boolean array (True = "
            "blocked), e.g. built with np.triu(np.ones((T, T), dtype=bool), k=1).",
        )
        if got.shape != want.shape:
            raise AnswerError(
                f"causal_mask({tokens}) has shape {got.shape}; it should have shape {want.shape}, "
                "one row per query and one column per key."
            )
        if tokens > 1 and np.array_equal(got, ~want):
            raise AnswerError(
                f"causal_mask({tokens}) is True where attention is allowed and False where it is "
                "blocked: this book's mask marks the *blocked* entries True. Return its negation."
            )
        wrong = np.argwhere(got != want)
        if wrong.size:
            i, j = (int(v) for v in wrong[0])
            if i == j:
                rule = (
                    f"query {i} must see its own key: a causal mask lets each token attend to "
                    "itself and to every earlier token, and blocks only keys j > i (np.triu "
                    "with k=1, not k=0)"
                )
            elif j > i:
                rule = f"query {i} can see key {j}, which comes after it; block every key j > i"
            else:
                rule = (
                    f"query {i} is blocked from key {j}, which comes before it; only later keys "
                    "(j > i) are blocked"
                )
            raise AnswerError(
                f"causal_mask({tokens})[{i}, {j}] is {bool(got[i, j])}; it should be "
                f"{bool(want[i, j])}: {rule}."
            )
    return "True exactly where a key comes after its query, for T = 4, 1 and 6."
