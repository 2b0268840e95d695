"""Chapter 7's exercise: the RoPE rotation, written by the reader.

``rope(x, positions, base)`` takes rows x [T, d] (d even) and one position per row, and turns
pair j = (x[2j], x[2j + 1]) of row t by the angle positions[t]·ω_j, ω_j = base^(−2j/d). The
grader builds the answer with complex numbers, (a + ib)·e^(iθ), independently of the package's
rotation, and checks it against the package's ``RotaryEmbedding`` too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..nn.positions import RotaryEmbedding
from ..random import SplitMix64
from .grading import AnswerError, as_array, call, compare, expect, grader, require_callable

__all__ = ["check_rope", "rope_by_complex_numbers"]


def rope_by_complex_numbers(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """Pair j of row t as a + ib, times e^(i·t·ω_j), back to (a, b): [T, d] → [T, d]."""
    width = x.shape[-1]
    frequencies = base ** (-2.0 * np.arange(width // 2) / width)  # ω_j, (d/2,)
    pairs = x[..., 0::2] + 1j * x[..., 1::2]  # (T, d/2)
    turned = pairs * np.exp(1j * positions[:, None] * frequencies)  # (T, d/2)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = turned.real, turned.imag
    return out


def _half_pairing(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """The rotation with pairs (j, j + d/2) instead of (2j, 2j + 1)."""
    width = x.shape[-1]
    order = np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])  # x_half = x[order]
    back = np.argsort(order)
    return rope_by_complex_numbers(x[..., back], positions, base)[..., order]


CASES = (
    (np.array([[1.0, 0.0]]), np.array([1.0]), 10000.0, "one pair (1, 0) at position 1"),
    (SplitMix64(7).normal((4, 6)), np.arange(4.0), 10000.0, "x of shape (4, 6), positions 0 … 3"),
    (
        SplitMix64(8).normal((3, 8)),
        np.array([5.0, 0.0, 2.0]),
        100.0,
        "x of shape (3, 8), positions (5, 0, 2), base 100",
    ),
)


@grader("Chapter 7, the RoPE rotation")
def check_rope(candidate: Any) -> str:
    """Grade ``rope(x, positions, base)``: lengths kept, direction, pairing, then every entry."""
    require_callable(candidate, "your rope")
    for x, positions, base, case in CASES:
        x_copy, positions_copy = x.copy(), positions.copy()
        got = as_array(
            call(candidate, x_copy, positions_copy, base, what="your rope", case=case),
            "rope(x, positions, base)",
        )
        expect(
            np.array_equal(x_copy, x) and np.array_equal(positions_copy, positions),
            f"rope changed x or positions in place on {case}; return a new array.",
        )
        want = rope_by_complex_numbers(x, positions, base)
        package = RotaryEmbedding(x.shape[-1], base=base)(x, positions).value
        assert np.allclose(want, package, atol=1e-12)
        if got.shape != want.shape:
            raise AnswerError(
                f"rope(x, positions, base) has shape {got.shape} for {case}; it should keep x's "
                f"shape {want.shape}."
            )
        if np.allclose(got, want, atol=1e-9, rtol=1e-9):
            continue
        if np.any(positions) and np.allclose(
            got, rope_by_complex_numbers(x, -positions, base), atol=1e-9
        ):
            raise AnswerError(
                f"rope(x, positions, base) turns every pair by −θ for {case}: (1, 0) should go "
                "to (cos θ, sin θ), anticlockwise. Check the signs: a' = a cos θ − b sin θ, "
                "b' = a sin θ + b cos θ."
            )
        if x.shape[-1] > 2 and np.allclose(got, _half_pairing(x, positions, base), atol=1e-9):
            raise AnswerError(
                f"rope(x, positions, base) pairs coordinate j with j + d/2 for {case}; this "
                "book's RoPE pairs neighbours: pair j is (x[2j], x[2j + 1])."
            )
        lengths = np.hypot(got[..., 0::2], got[..., 1::2])  # (T, d/2)
        kept = np.hypot(x[..., 0::2], x[..., 1::2])
        if not np.allclose(lengths, kept, atol=1e-9):
            t, j = (int(i) for i in np.argwhere(~np.isclose(lengths, kept, atol=1e-9))[0])
            raise AnswerError(
                f"pair {j} of row {t} has length {lengths[t, j]:.6g} after rope for {case}; it "
                f"had length {kept[t, j]:.6g}. A rotation keeps every pair's length: use "
                "(a cos θ − b sin θ, a sin θ + b cos θ), with the same θ in both lines."
            )
        width = x.shape[-1]
        frequencies = base ** (-2.0 * np.arange(width // 2) / width)
        turn = (got[..., 0::2] + 1j * got[..., 1::2]) / (x[..., 0::2] + 1j * x[..., 1::2])
        wanted = positions[:, None] * frequencies  # θ = t·ω_j, (T, d/2)
        off = ~np.isclose(turn, np.exp(1j * wanted), atol=1e-9)
        if np.any(off):
            t, j = (int(i) for i in np.argwhere(off)[0])
            raise AnswerError(
                f"pair {j} of row {t} turned by {np.angle(turn[t, j]):.6g} rad for {case}; it "
                f"should turn by positions[{t}]·ω_{j} = {np.angle(np.exp(1j * wanted[t, j])):.6g}"
                " rad (mod 2π), with ω_j = base^(−2j/d) and j counted from 0."
            )
        compare(got, want, what="rope(x, positions, base)", case=case, atol=1e-9, rtol=1e-9)
    return "Every pair turns by its position times its frequency, anticlockwise, lengths kept."
