"""Chapter 8's exercise: the top-k gate, written by the reader.

``top_k_gate(probabilities, k)`` takes router probabilities [N, E] and returns ``(selected,
gates)``, both [N, k]: each row's k most probable experts, most probable first (a tie keeps the
lower index first), and their probabilities renormalized to sum to one,
g_e = p_e / Σ_(e' selected) p_e'. The grader checks each part against a row-by-row sort and the
package's ``top_k_gates``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..nn.moe import top_k_gates
from .grading import AnswerError, as_array, call, compare, expect, grader, require_callable

__all__ = ["check_top_k_gate", "gate_by_rule"]

CASES = (
    (np.array([[0.1, 0.6, 0.05, 0.25]]), 2, "one token, p = (0.1, 0.6, 0.05, 0.25), k = 2"),
    (
        np.array([[0.2, 0.2, 0.5, 0.1], [0.4, 0.3, 0.2, 0.1], [0.05, 0.15, 0.3, 0.5]]),
        2,
        "three tokens, k = 2 (token 0 has a tie)",
    ),
    (np.array([[0.3, 0.1, 0.6], [0.5, 0.25, 0.25]]), 1, "two tokens, k = 1"),
    (np.array([[0.3, 0.1, 0.6]]), 3, "one token, k = E = 3"),
)


def gate_by_rule(probabilities: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row by row: sort experts by (−p_e, e), keep k, divide their p by its sum: [N, k] twice."""
    selected = np.empty((probabilities.shape[0], k), dtype=np.int64)
    gates = np.empty((probabilities.shape[0], k))
    for row, p in enumerate(probabilities):
        ranked = sorted(range(len(p)), key=lambda e: (-p[e], e))[:k]
        selected[row] = ranked
        gates[row] = p[ranked] / p[ranked].sum()
    return selected, gates


@grader("Chapter 8, the top-k gate")
def check_top_k_gate(candidate: Any) -> str:
    """Grade ``top_k_gate(p, k)``: which experts, in which order, then the renormalized gates."""
    require_callable(candidate, "your top_k_gate")
    for probabilities, k, case in CASES:
        p_copy = probabilities.copy()
        result = call(candidate, p_copy, k, what="your top_k_gate", case=case)
        expect(
            np.array_equal(p_copy, probabilities),
            f"top_k_gate changed the probabilities in place on {case}; leave them as they were.",
        )
        if not (isinstance(result, tuple) and len(result) == 2):
            raise AnswerError(
                f"top_k_gate should return a pair (selected, gates); got "
                f"{type(result).__name__} on {case}."
            )
        selected, gates = np.asarray(result[0]), as_array(result[1], "gates")
        want_selected, want_gates = gate_by_rule(probabilities, k)
        package_selected, package_gates = top_k_gates(probabilities, k)
        assert np.array_equal(want_selected, package_selected)
        assert np.allclose(want_gates, package_gates, rtol=1e-12)
        shape = want_selected.shape
        for name, array in (("selected", selected), ("gates", gates)):
            if array.shape != shape:
                raise AnswerError(
                    f"{name} has shape {array.shape} for {case}; it should have shape {shape}: "
                    "one row per token and k columns."
                )
        expect(
            np.issubdtype(selected.dtype, np.integer),
            f"selected has dtype {selected.dtype} for {case}; it should hold expert indices "
            "(integers), e.g. from np.argsort.",
        )
        for row in range(shape[0]):
            p = probabilities[row]
            chosen, wanted = selected[row], want_selected[row]
            if set(chosen.tolist()) != set(wanted.tolist()):
                missing = min(set(wanted.tolist()) - set(chosen.tolist()), key=lambda e: -p[e])
                if not set(chosen.tolist()) <= set(range(len(p))):
                    raise AnswerError(
                        f"row {row} selects {chosen.tolist()} for {case}; expert indices run "
                        f"from 0 to {len(p) - 1}."
                    )
                extra = next(e for e in chosen.tolist() if e not in wanted.tolist())
                if p[extra] == p[missing]:
                    raise AnswerError(
                        f"row {row} selects expert {extra} but not expert {missing} for {case}; "
                        f"both have p = {p[missing]:g}, and a tie keeps the lower index "
                        "(np.argsort(-p, kind='stable') does)."
                    )
                raise AnswerError(
                    f"row {row} selects expert {extra} (p = {p[extra]:g}) for {case}, but expert "
                    f"{missing} has the larger p = {p[missing]:g} and is not selected: keep the "
                    f"{k} largest probabilities (sort by −p)."
                )
            if not np.array_equal(chosen, wanted):
                raise AnswerError(
                    f"row {row} selects {chosen.tolist()} for {case}; it should list the same "
                    f"experts as {wanted.tolist()}: most probable first, and a tie keeps the "
                    "lower index first (np.argsort(-p, kind='stable'))."
                )
        sums = gates.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=1e-9):
            row = int(np.argmax(np.abs(sums - 1.0)))
            raise AnswerError(
                f"the gates of row {row} sum to {sums[row]:.6g} for {case}; they should sum to "
                "1: divide the k kept probabilities by their sum."
            )
        kept = np.take_along_axis(probabilities, want_selected, axis=-1)
        softmaxed = np.exp(kept) / np.exp(kept).sum(axis=-1, keepdims=True)
        expect(
            k == 1 or not np.allclose(gates, softmaxed, atol=1e-9),
            f"your gates are a softmax of the kept probabilities for {case}; they are already "
            "probabilities, so renormalize them by division: g_e = p_e / Σ p (kept).",
        )
        compare(gates, want_gates, what="gates", case=case, atol=1e-12, rtol=1e-9)
    return (
        "Each token keeps its k most probable experts, most probable first, with gates that "
        "are their probabilities divided by their sum."
    )
