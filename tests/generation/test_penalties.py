"""The repetition penalty: closed-form values, the identity at θ = 1, and typed refusals."""

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, TokenError
from llm_from_scratch.generation.penalties import repetition_penalty


def test_seen_tokens_are_divided_when_positive_and_multiplied_when_negative():
    z = np.array([[2.0, -1.0, 0.5, 3.0], [1.0, 1.0, -2.0, 0.0]])
    out = repetition_penalty(z, [[0, 1, 0], [2, 3]], 2.0)
    np.testing.assert_array_equal(out, [[1.0, -2.0, 0.5, 3.0], [1.0, 1.0, -4.0, 0.0]])
    np.testing.assert_array_equal(z[0], [2.0, -1.0, 0.5, 3.0])  # the input is untouched


def test_a_penalty_above_one_lowers_the_probability_of_every_seen_token():
    z = np.array([[0.3, -0.7, 1.1, 0.0, -2.0]])
    seen = [1, 2]
    before = np.exp(z) / np.exp(z).sum()
    after_z = repetition_penalty(z, [seen], 1.3)
    after = np.exp(after_z) / np.exp(after_z).sum()
    assert np.all(after[0, seen] < before[0, seen])
    assert np.all(after[0, [0, 3, 4]] > before[0, [0, 3, 4]])


def test_theta_one_and_an_empty_history_change_nothing():
    z = np.array([[0.3, -0.7, 1.1]])
    np.testing.assert_array_equal(repetition_penalty(z, [[0, 1, 2]], 1.0), z)
    np.testing.assert_array_equal(repetition_penalty(z, [[]], 1.7), z)


def test_minus_infinity_stays_removed():
    z = np.array([[-np.inf, 1.0]])
    np.testing.assert_array_equal(repetition_penalty(z, [[0, 1]], 2.0), [[-np.inf, 0.5]])


@pytest.mark.parametrize(
    ("previous", "penalty", "error", "match"),
    [
        ([[0]], 0.0, ArgumentError, "penalty"),
        ([[0]], -1.0, ArgumentError, "penalty"),
        ([[0], [1]], 1.2, ArgumentError, "one token sequence per row"),
        ([[5]], 1.2, TokenError, "outside the vocabulary"),
        ([[-1]], 1.2, TokenError, "previous\\[0\\] token"),
        ([[1.0]], 1.2, TokenError, "previous\\[0\\] token"),
        (["ab"], 1.2, ArgumentError, "sequence of token IDs"),
        (3, 1.2, ArgumentError, "list of token-ID sequences"),
    ],
)
def test_bad_arguments_are_refused_with_typed_errors(previous, penalty, error, match):
    with pytest.raises(error, match=match):
        repetition_penalty(np.zeros((1, 3)), previous, penalty)
