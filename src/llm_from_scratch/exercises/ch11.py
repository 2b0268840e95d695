"""Chapter 11's grader: the reader writes the sampling distribution of temperature and top-k.

The reader writes ``top_k_probabilities(logits, k, temperature)``: for [B, V] logits z, the
probabilities softmax(top-k(z / τ)), every token outside the k largest scores of its row at
probability zero (ties: the lower index is kept). The truth is the package's own rules,
``probabilities(top_k_filter(temperature_scale(z, τ), k))``. When the answer is wrong the
grader tries the usual slips (z · τ, no renormalisation, k ± 1, the tie broken the other way or
not at all, a softmax without its shift) and names the one that matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from llm_from_scratch.generation import probabilities, temperature_scale, top_k_filter

from .grading import AnswerError, as_array, call, compare, expect, grader, require_callable

# (name, logits [B, V], k, τ): a plain row, a temperature, ties, k ≥ V, huge scores, a batch.
CASES = (
    ("six scores, k = 3, τ = 1", [[2.0, 1.0, 0.5, 0.0, -0.5, -1.5]], 3, 1.0),
    ("six scores, k = 2, τ = 0.5", [[2.0, 1.0, 0.5, 0.0, -0.5, -1.5]], 2, 0.5),
    ("tied scores [1, 3, 3, 0, 3], k = 2, τ = 1", [[1.0, 3.0, 3.0, 0.0, 3.0]], 2, 1.0),
    ("k = 10 above V = 4, τ = 2", [[0.5, -1.0, 2.0, 0.0]], 10, 2.0),
    ("huge scores [1000, 999, 0], k = 2, τ = 1", [[1000.0, 999.0, 0.0]], 2, 1.0),
    ("two rows, k = 2, τ = 1.5", [[0.0, 1.0, 2.0, 3.0], [3.0, -1.0, 2.0, 0.0]], 2, 1.5),
)


def _softmax_kept(z: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """softmax over the kept entries of each row, zero elsewhere (shifted by the row's max)."""
    masked = np.where(keep, z, -np.inf)
    shifted = np.exp(masked - masked.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _top(z: np.ndarray, k: int, *, ties: str = "low") -> np.ndarray:
    """Keep masks of the k largest per row: ties to the lower index, the higher, or all tied."""
    v = z.shape[1]
    keep = np.zeros(z.shape, dtype=bool)
    for b, row in enumerate(z):
        if ties == "high":
            order = v - 1 - np.argsort(-row[::-1], kind="stable")
        else:
            order = np.argsort(-row, kind="stable")
        keep[b, order[: min(k, v)]] = True
        if ties == "all" and k < v:
            keep[b] |= row >= row[order[k - 1]]
    return keep


def _slips(z: np.ndarray, k: int, tau: float) -> dict[str, np.ndarray]:
    """Plausible wrong answers, each with the plain-words fix the message gives."""
    scaled = z / tau
    with np.errstate(all="ignore"):
        unshifted = np.exp(np.where(_top(scaled, k), scaled, -np.inf))
        unshifted = unshifted / unshifted.sum(axis=1, keepdims=True)
    full = _softmax_kept(scaled, np.ones(z.shape, dtype=bool))
    return {
        "the scores are multiplied by τ; temperature divides them, z / τ": _softmax_kept(
            z * tau, _top(z * tau, k)
        ),
        "the kept probabilities are not renormalised: after zeroing the others, divide the "
        "kept ones by their sum (or take the softmax over the kept scores only)": np.where(
            _top(scaled, k), full, 0.0
        ),
        "a tie is broken towards the higher index; keep the lower index (a stable sort of −z)": (
            _softmax_kept(scaled, _top(scaled, k, ties="high"))
        ),
        "every token tied with the k-th is kept; keep exactly k, ties to the lower index": (
            _softmax_kept(scaled, _top(scaled, k, ties="all"))
        ),
        f"k + 1 = {k + 1} tokens are kept; keep exactly k": _softmax_kept(
            scaled, _top(scaled, k + 1)
        ),
        f"k − 1 = {k - 1} tokens are kept; keep exactly k": _softmax_kept(
            scaled, _top(scaled, max(k - 1, 1))
        ),
        "exp overflows: subtract each row's largest kept score before exp (softmax does not "
        "change when a constant is added to a row)": unshifted,
    }


@grader("Chapter 11 exercise: temperature and top-k")
def grade_top_k_probabilities(candidate: Callable[[np.ndarray, int, float], Any]) -> str:
    """Pass when candidate(z, k, τ) equals softmax(top_k_filter(z / τ, k)) on every case."""
    require_callable(candidate, "your top_k_probabilities")
    for case, logits, k, tau in CASES:
        z = np.array(logits)
        with np.errstate(all="ignore"):  # an overflow in the reader's code is named below
            got = call(candidate, z.copy(), k, tau, what="your top_k_probabilities", case=case)
        got_array = as_array(got, "your probabilities")
        want = probabilities(top_k_filter(temperature_scale(z, tau), k))
        if got_array.shape == want.shape and not np.allclose(
            got_array, want, rtol=1e-9, atol=1e-12, equal_nan=False
        ):
            for fix, wrong in _slips(z, k, tau).items():
                if np.allclose(got_array, wrong, rtol=1e-9, atol=1e-12, equal_nan=True):
                    raise AnswerError(f"For {case}, {fix}.")
            sums = got_array.sum(axis=1)
            expect(
                not np.all(np.isfinite(got_array)) or np.allclose(sums, 1.0, atol=1e-9),
                f"For {case}, the rows of your probabilities sum to "
                f"{[round(float(x), 6) for x in sums]}; each row should sum to 1 (return "
                "probabilities, not filtered logits).",
            )
        compare(got_array, want, what="your probabilities", case=case, atol=1e-12)
    return (
        f"your probabilities match the package's temperature and top-k on all {len(CASES)} "
        "cases, ties and huge scores included."
    )
