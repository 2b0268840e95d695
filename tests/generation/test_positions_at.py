"""ALiBi at explicit positions equals the last-L-of-S bias, row by row, hand-computed."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ShapeError
from llm_from_scratch.nn import ALiBiPositions, alibi_bias
from llm_from_scratch.nn.positions import alibi_bias_at


def test_alibi_bias_at_equals_alibi_bias_for_the_last_positions():
    scheme = ALiBiPositions(4)
    expected = alibi_bias(4, 3, 7)  # (H, L, S): queries at 4, 5, 6
    got = scheme.score_bias_at(4, np.array([[4, 5, 6], [4, 5, 6]]), 7)
    assert got.shape == (2, 4, 3, 7)
    assert np.array_equal(got[0], expected) and np.array_equal(got[1], expected)


def test_alibi_bias_at_hand_computed_rows_at_different_positions():
    slopes = np.array([0.5, 0.25])
    got = alibi_bias_at(slopes, np.array([[2], [0]]), 4)
    assert got[0, 0, 0].tolist() == [-1.0, -0.5, 0.0, 0.0]
    assert got[0, 1, 0].tolist() == [-0.5, -0.25, 0.0, 0.0]
    assert got[1, :, 0].tolist() == [[0.0] * 4, [0.0] * 4]


@pytest.mark.parametrize("positions", [np.array([1, 2]), np.array([[0.5]])])
def test_alibi_bias_at_needs_integer_positions_b_by_l(positions):
    with pytest.raises(ShapeError, match=r"\[B, L\]"):
        alibi_bias_at(np.array([0.5]), positions, 3)


def test_rope_at_integer_positions_equals_rotating_by_their_angles_bit_for_bit():
    from llm_from_scratch.nn import RoPEPositions, rotate_pairs
    from llm_from_scratch.random import SplitMix64

    rope = RoPEPositions(6)
    x = SplitMix64(1).normal((2, 3, 1, 6))  # (B, H, L, d_h)
    positions = np.array([[[7]], [[2]]])  # (B, 1, L): each row its own absolute position
    fast = rope.rotate(x, positions).value
    slow = rotate_pairs(x, rope.angles(positions.astype(float)), "interleaved").value
    assert np.array_equal(fast, slow)
    half = rope.rotate(x, positions + 0.5).value  # non-integer positions: the general path
    assert half.shape == x.shape and not np.array_equal(half, fast)
