"""Counted work: cached steps grow linearly in the position, uncached passes quadratically."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.generation import decoder_step_work, multiply_adds
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64

V, D, LAYERS, H, F = 13, 8, 2, 2, 16


@pytest.fixture(scope="module")
def decoder():
    return Decoder(V, D, LAYERS, H, F, rng=SplitMix64(3))


def cached_closed_form(s):
    """One token reading S keys: per layer 4D² (q, k, v, o) + 2SD (q·k, w·v) + 2DF, head VD."""
    return LAYERS * (4 * D * D + 2 * s * D + 2 * D * F) + V * D


def uncached_closed_form(t):
    """T tokens: per layer T·4D² + 2T²D (every score of the [T, T] grid) + 2TDF, head TVD."""
    return LAYERS * (4 * t * D * D + 2 * t * t * D + 2 * t * D * F) + t * V * D


def test_multiply_adds_of_one_matmul_is_m_k_n():
    a = Tensor(np.ones((3, 4)), requires_grad=True)
    assert multiply_adds([a @ np.ones((4, 5))]) == 3 * 4 * 5
    assert multiply_adds([(a @ np.ones((4, 5))).sum()]) == 60  # a sum is not a product
    b = Tensor(np.ones((2, 3, 4)), requires_grad=True)
    assert multiply_adds([b @ np.ones((2, 4, 6))]) == 2 * 3 * 4 * 6
    with pytest.raises(ArgumentError, match="Tensors"):
        multiply_adds([np.ones(2)])


def test_step_work_matches_the_closed_forms(decoder):
    for t in range(1, 12):
        assert decoder_step_work(decoder, t, cached=True) == cached_closed_form(t)
        assert decoder_step_work(decoder, t, cached=False) == uncached_closed_form(t)


def test_cached_work_is_linear_and_uncached_quadratic_in_the_length(decoder):
    lengths = range(1, 25)
    cached = np.array([decoder_step_work(decoder, t, cached=True) for t in lengths])
    uncached = np.array([decoder_step_work(decoder, t, cached=False) for t in lengths])
    assert np.all(np.diff(cached, 2) == 0) and np.all(np.diff(cached) == 2 * LAYERS * D)
    assert np.all(np.diff(uncached, 2) == 4 * LAYERS * D)  # constant 2nd difference: quadratic
    assert np.all(uncached[1:] > cached[1:])
    # summed over a generation of n tokens: cached Θ(n) per token, uncached Θ(n²) per token
    assert uncached.sum() / cached.sum() > 5
