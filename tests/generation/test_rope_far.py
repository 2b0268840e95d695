"""RoPE at far positions (issue 28): angles for exactly the positions asked, never a table.

A KV cache asks RoPE for one position at a time. Position 1,000,000 once built a table of a
million rows (1 GB at d_h = 64, 19 s); now a far position costs one row of angles, equals the
closed-form rotation, and a whole position reads bit for bit what the table holds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.nn.positions import TABLE_ROWS, RoPEPositions, RotaryEmbedding


def closed_form(x: np.ndarray, position: float, head_width: int, pairing: str) -> np.ndarray:
    """Each pair (a, b) rotated by t·ω_j, ω_j = 10000^(−2j/d), with math.cos and math.sin."""
    out = np.empty_like(x)
    half = head_width // 2
    for j in range(half):
        angle = position * 10000.0 ** (-2.0 * j / head_width)
        c, s = math.cos(angle), math.sin(angle)
        a_i, b_i = (2 * j, 2 * j + 1) if pairing == "interleaved" else (j, j + half)
        a, b = x[..., a_i], x[..., b_i]
        out[..., a_i], out[..., b_i] = a * c - b * s, a * s + b * c
    return out


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_position_one_million_builds_no_table_and_is_the_closed_form_rotation(pairing):
    rope = RotaryEmbedding(64, pairing=pairing)
    x = np.linspace(-1.0, 1.0, 2 * 64).reshape(1, 2, 64)  # (B, T, d_h)
    positions = np.array([[1_000_000, 999_999]])
    y = rope(x, positions).value
    assert rope._table_length() == 0  # nothing tabulated
    for t in range(2):
        want = closed_form(x[0, t], float(positions[0, t]), 64, pairing)
        np.testing.assert_allclose(y[0, t], want, rtol=0, atol=1e-9)  # |angle| ~ 1e6: 1e-10 rad


def test_far_positions_keep_the_table_small_after_ordinary_calls():
    rope = RoPEPositions(8)
    x = Tensor(np.ones((1, 1, 3, 8)))
    rope.rotate(x)  # the default positions 0, 1, 2: a table of 3 rows
    rope.rotate(x, np.array([10**6, 10**7, 10**8]))
    assert rope._table_length() == 3


def test_prepare_tables_builds_once_up_to_the_limit_and_refuses_a_bad_length():
    rope = RotaryEmbedding(8)
    rope.prepare_tables(5)
    assert rope._table_length() == 5
    rope.prepare_tables(3)  # shorter: the table already holds it
    assert rope._table_length() == 5
    far = RotaryEmbedding(8)
    far.prepare_tables(TABLE_ROWS + 1)  # beyond the limit: rotated row by row, no table
    assert far._table_length() == 0
    for bad in (-1, 2.5, "4", None):
        with pytest.raises(ArgumentError, match="prepare_tables length"):
            far.prepare_tables(bad)  # type: ignore[arg-type]
    assert far._table_length() == 0


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["interleaved", "half"]),
    st.sampled_from([2, 4, 6, 16]),
    st.lists(st.integers(0, 3 * TABLE_ROWS), min_size=1, max_size=6),
)
def test_a_whole_position_rotates_bit_for_bit_as_the_table_row_does(pairing, width, positions):
    """Table rows (positions=None on a long x) against explicit positions, near and far."""
    longest = max(positions) + 1
    x = np.cos(np.arange(longest * width, dtype=np.float64)).reshape(1, longest, width)
    table = RotaryEmbedding(width, pairing=pairing)(x).value  # rows 0 … longest − 1 tabulated
    asked = np.array(positions)
    fresh = RotaryEmbedding(width, pairing=pairing)  # no table yet: far ones are computed alone
    y = fresh(x[:, asked], asked).value
    assert np.array_equal(y, table[:, asked])
    assert fresh._table_length() <= TABLE_ROWS


def test_gradients_at_far_positions_are_the_transposed_rotation():
    rope = RotaryEmbedding(4)
    x = Tensor(np.array([[1.0, 2.0, -1.0, 0.5]]), requires_grad=True)
    y = rope(x, np.array([5_000_000]))
    g = np.array([[0.3, -0.7, 1.1, 0.2]])
    y.backward(g)
    # R(θ)ᵀ g per pair: rotating g by −θ is rotating it by position −t
    np.testing.assert_allclose(
        x.grad[0], closed_form(g[0], -5_000_000.0, 4, "interleaved"), rtol=0, atol=1e-9
    )
