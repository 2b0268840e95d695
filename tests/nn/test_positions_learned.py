"""LearnedPositions: GPT-2's learned absolute position table (wpe), read by gather."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, RankError, TokenError, WidthError
from llm_from_scratch.nn.positions import LearnedPositions
from llm_from_scratch.random import SplitMix64


def test_rows_are_the_table_rows_at_the_positions():
    table = np.arange(12.0).reshape(4, 3)
    wpe = LearnedPositions.from_parameters(table, name="wpe")
    np.testing.assert_array_equal(wpe(np.arange(3)).value, table[:3])
    np.testing.assert_array_equal(wpe(np.array([[3, 0], [1, 1]])).value, table[[[3, 0], [1, 1]]])
    assert wpe(np.arange(3)).shape == (3, 3)
    assert [name for name, _ in wpe.named_parameters()] == ["wpe.weight"]
    assert (wpe.max_positions, wpe.width) == (4, 3)
    assert repr(wpe) == "LearnedPositions(4 × 3, name='wpe')"


def test_the_table_is_a_copy_of_the_callers_array():
    table = np.zeros((2, 2))
    wpe = LearnedPositions.from_parameters(table)
    table[0, 0] = 5.0
    assert wpe.weight.value[0, 0] == 0.0


def test_initial_table_is_std_times_the_generators_normals():
    rng = SplitMix64(9)
    wpe = LearnedPositions(6, 4, std=0.02, rng=rng)
    np.testing.assert_array_equal(wpe.weight.value, 0.02 * SplitMix64(9).normal((6, 4)))
    assert rng.state != SplitMix64(9).state


def test_gradient_reaches_only_the_rows_read_and_repeated_rows_add():
    wpe = LearnedPositions(5, 3, rng=SplitMix64(1))
    seed = SplitMix64(2).normal((2, 3, 3))
    positions = np.array([[0, 1, 1], [4, 1, 0]])
    (wpe(positions) * seed).sum().backward()
    expected = np.zeros((5, 3))
    for b in range(2):
        for t in range(3):
            expected[positions[b, t]] += seed[b, t]
    np.testing.assert_allclose(wpe.weight.grad, expected, rtol=1e-15)
    assert not wpe.weight.grad[[2, 3]].any()


def test_matches_central_differences():
    wpe = LearnedPositions(4, 3, rng=SplitMix64(3))
    seed = SplitMix64(4).normal((2, 4, 3))
    positions = np.array([[0, 1, 2, 3], [3, 3, 2, 0]])
    result = gradcheck_parameters(lambda: (wpe(positions) * seed).sum(), [wpe.weight])
    assert result.passed, result.message


@pytest.mark.parametrize(
    ("positions", "message"),
    [
        (np.array([0, 4]), r"in \[0, 4\) only \(max_positions=4\); got positions from 0 to 4"),
        (np.array([-1, 0]), "got positions from -1 to 0"),
        (np.array([0.0, 1.0]), "integer positions"),
        (np.array([True, False]), "integer positions"),
        (np.zeros((1, 1, 2), dtype=int), r"\[T\] or \[B, T\]; got shape \(1, 1, 2\)"),
        (np.int64(2), r"got shape \(\)"),
        ([[0, 1], [2]], "rectangular"),
    ],
)
def test_bad_positions_are_token_errors(positions, message):
    wpe = LearnedPositions(4, 3, rng=SplitMix64(1))
    with pytest.raises(TokenError, match=message):
        wpe(positions)


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda rng: LearnedPositions(0, 3, rng=rng), ArgumentError, "max_positions"),
        (lambda rng: LearnedPositions(4, 1.5, rng=rng), ArgumentError, "width"),
        (lambda rng: LearnedPositions(4, 3, std=0.0, rng=rng), ArgumentError, "std"),
        (lambda rng: LearnedPositions(4, 3, std=True, rng=rng), ArgumentError, "std"),
        (lambda rng: LearnedPositions(4, 3, name="", rng=rng), ArgumentError, "name"),
        (lambda rng: LearnedPositions(10**6, 10**4, rng=rng), ArgumentError, "refuses more"),
        (lambda rng: LearnedPositions(4, 3, rng=np.random.default_rng(0)), ArgumentError, "rng"),
    ],
)
def test_failed_construction_is_typed_and_leaves_the_generator_untouched(build, error, message):
    rng = SplitMix64(11)
    with pytest.raises(error, match=message):
        build(rng)
    assert rng.state == SplitMix64(11).state


def test_from_parameters_refusals():
    with pytest.raises(RankError, match="rank 2"):
        LearnedPositions.from_parameters(np.zeros(3))
    with pytest.raises(WidthError, match="at least one position"):
        LearnedPositions.from_parameters(np.zeros((0, 3)))
    with pytest.raises(ArgumentError, match="finite"):
        LearnedPositions.from_parameters([[np.nan, 0.0]])
    with pytest.raises(ArgumentError, match="name"):
        LearnedPositions.from_parameters(np.zeros((2, 2)), name="a..b")
