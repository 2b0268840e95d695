"""Sampling rules on logits, against hand-computed cases and closed forms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.generation import (
    entropy,
    greedy,
    next_tokens,
    probabilities,
    sample,
    temperature_scale,
    top_k_filter,
    top_p_filter,
)
from llm_from_scratch.random import SplitMix64

LOGITS = np.array([[math.log(0.5), math.log(0.3), math.log(0.15), math.log(0.05)]])


def test_probabilities_are_softmax_and_ignore_shifts():
    np.testing.assert_allclose(probabilities(LOGITS), [[0.5, 0.3, 0.15, 0.05]], rtol=1e-14)
    np.testing.assert_allclose(probabilities(LOGITS + 700.0), probabilities(LOGITS), rtol=1e-12)


def test_entropy_closed_forms():
    assert entropy(np.full((1, 8), 1 / 8))[0] == pytest.approx(math.log(8), rel=1e-14)
    assert entropy(np.array([[1.0, 0.0, 0.0]]))[0] == 0.0
    p = np.array([0.5, 0.3, 0.15, 0.05])
    assert entropy(p[None])[0] == pytest.approx(-(p * np.log(p)).sum(), rel=1e-14)


def test_temperature_limits_greedy_and_uniform():
    cold = probabilities(temperature_scale(LOGITS, 0.01))
    hot = probabilities(temperature_scale(LOGITS, 1e6))
    assert cold[0, 0] > 1 - 1e-12
    np.testing.assert_allclose(hot, np.full((1, 4), 0.25), atol=1e-5)
    # τ = 1/2 squares the probabilities (then renormalises): p_i² / Σ p_j²
    p = np.array([0.5, 0.3, 0.15, 0.05])
    np.testing.assert_allclose(
        probabilities(temperature_scale(LOGITS, 0.5))[0], p**2 / (p**2).sum(), rtol=1e-13
    )


def test_entropy_grows_with_temperature():
    taus = [0.25, 0.5, 1.0, 2.0, 4.0]
    h = [entropy(probabilities(temperature_scale(LOGITS, t)))[0] for t in taus]
    assert all(a < b for a, b in itertools.pairwise(h))
    assert h[-1] < math.log(4)


def test_top_k_keeps_exactly_k_with_ties_to_the_lower_index():
    z = np.array([[1.0, 3.0, 3.0, 2.0, 0.0]])
    kept = np.isfinite(top_k_filter(z, 2))[0]
    assert kept.tolist() == [False, True, True, False, False]
    kept = np.isfinite(top_k_filter(np.array([[1.0, 2.0, 2.0, 2.0]]), 2))[0]
    assert kept.tolist() == [False, True, True, False]
    assert np.array_equal(top_k_filter(z, 10), z)  # k >= V keeps every token


def test_top_p_keeps_the_smallest_nucleus_reaching_p():
    # probabilities 0.5, 0.3, 0.15, 0.05: mass before each 0, 0.5, 0.8, 0.95
    assert np.isfinite(top_p_filter(LOGITS, 0.5))[0].tolist() == [True, False, False, False]
    assert np.isfinite(top_p_filter(LOGITS, 0.6))[0].tolist() == [True, True, False, False]
    assert np.isfinite(top_p_filter(LOGITS, 0.9))[0].tolist() == [True, True, True, False]
    assert np.isfinite(top_p_filter(LOGITS, 1.0))[0].all()
    assert np.isfinite(top_p_filter(LOGITS, 1e-9))[0].tolist() == [True, False, False, False]


def test_top_p_works_in_each_rows_own_order():
    z = np.log(np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]]))
    kept = np.isfinite(top_p_filter(z, 0.75))
    assert kept.tolist() == [[False, True, True], [True, True, False]]


def test_sample_is_inverse_cdf_of_the_next_uniform():
    rng, twin = SplitMix64(5), SplitMix64(5)
    draws = [int(sample(LOGITS, rng)[0]) for _ in range(200)]
    cdf = np.cumsum([0.5, 0.3, 0.15, 0.05])
    expected = [int(np.searchsorted(cdf, twin.next_float(), side="right")) for _ in range(200)]
    assert draws == expected


def test_sample_never_picks_a_removed_token_and_matches_frequencies():
    z = top_k_filter(np.tile(LOGITS, (4000, 1)), 2)
    draws = sample(z, SplitMix64(0))
    assert set(draws.tolist()) == {0, 1}
    assert abs(np.mean(draws == 0) - 0.5 / 0.8) < 0.03  # 5 σ of a binomial mean at n = 4000


def test_next_tokens_greedy_and_seeded():
    z = np.array([[0.0, 2.0, 1.0], [5.0, 5.0, 0.0]])
    assert greedy(z).tolist() == [1, 0]
    assert next_tokens(z, do_sample=False).tolist() == [1, 0]
    a = next_tokens(z, SplitMix64(9), temperature=0.7, top_k=2, top_p=0.9)
    b = next_tokens(z, SplitMix64(9), temperature=0.7, top_k=2, top_p=0.9)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("tau", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_bad_temperature_is_refused(tau):
    with pytest.raises(ArgumentError, match="temperature"):
        temperature_scale(LOGITS, tau)


@pytest.mark.parametrize("k", [0, -3, 1.5, None, True])
def test_bad_k_is_refused(k):
    with pytest.raises(ArgumentError, match="top_k"):
        top_k_filter(LOGITS, k)


@pytest.mark.parametrize("p", [0.0, -0.1, 1.0000001, 2, float("nan"), "0.5"])
def test_bad_p_is_refused(p):
    with pytest.raises(ArgumentError, match="top_p"):
        top_p_filter(LOGITS, p)


@pytest.mark.parametrize(
    "logits", [np.zeros(3), np.zeros((2, 0)), [[np.nan, 0.0]], [[np.inf, 0.0]], [[-np.inf]]]
)
def test_bad_logits_are_refused(logits):
    with pytest.raises(ArgumentError, match="logits"):
        probabilities(logits)


def test_sample_needs_a_splitmix64():
    with pytest.raises(ArgumentError, match="SplitMix64"):
        sample(LOGITS, np.random.default_rng(0))
    with pytest.raises(ArgumentError, match="SplitMix64"):
        next_tokens(LOGITS, None)
