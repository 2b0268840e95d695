"""Sampling by inverse CDF with SplitMix64, greedy at temperature 0, and generate's window."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, TokenError
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import generate, sample_next


def test_sample_next_is_the_inverse_cdf_of_softmax() -> None:
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))  # softmax gives these
    rng, twin = SplitMix64(8), SplitMix64(8)
    drawn = sample_next(logits, 1.0, rng)
    u = [twin.next_float(), twin.next_float()]
    by_hand = [
        0 if u[0] < 0.1 else 1 if u[0] < 0.3 else 2,
        0 if u[1] < 0.5 else 1 if u[1] < 0.75 else 2,
    ]
    assert drawn.tolist() == by_hand
    # Temperature 2 flattens: p ∝ √(0.1, 0.2, 0.7); zero means argmax, no draw.
    counts = np.bincount(
        [int(sample_next(logits[:1], 2.0, rng)[0]) for _ in range(4000)], minlength=3
    )
    expected = np.sqrt([0.1, 0.2, 0.7]) / np.sqrt([0.1, 0.2, 0.7]).sum()
    np.testing.assert_allclose(counts / 4000, expected, atol=0.03)
    state = rng.state
    assert sample_next(logits, 0, rng).tolist() == [2, 0] and rng.state == state


def test_generate_greedy_matches_repeated_greedy_steps() -> None:
    model = Decoder(7, 8, 1, 2, 16, rng=SplitMix64(1))
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    out = generate(model, prompt, 4, SplitMix64(0), temperature=0.0)
    expected = prompt
    for _ in range(4):
        expected = model.greedy_step(expected)
    np.testing.assert_array_equal(out, expected)
    cropped = generate(model, prompt, 2, SplitMix64(0), temperature=0.0, context=2)
    first = np.argmax(model(prompt[:, -2:]).value[:, -1], axis=-1)
    np.testing.assert_array_equal(cropped[:, 3], first)


def test_sample_next_refusals_leave_the_generator_alone() -> None:
    rng = SplitMix64(4)
    for logits, temperature in (
        (np.zeros(3), 1.0),
        (np.array([[0.0, np.nan]]), 1.0),
        (np.zeros((1, 2)), -0.5),
        (np.zeros((1, 2)), True),
    ):
        with pytest.raises(ArgumentError):
            sample_next(logits, temperature, rng)
    assert rng.state == SplitMix64(4).state


def test_generate_refusals() -> None:
    model = Decoder(7, 8, 1, 2, 16, rng=SplitMix64(1))
    with pytest.raises(TokenError, match=r"must lie in \[0, 7\); got values from 9 to 9"):
        generate(model, np.array([[9]]), 1, SplitMix64(0))
    with pytest.raises(ArgumentError, match="temperature"):
        generate(model, np.array([[1]]), 1, SplitMix64(0), temperature=-1.0)
    with pytest.raises(ArgumentError, match="max_new_tokens"):
        generate(model, np.array([[1]]), -1, SplitMix64(0))
    with pytest.raises(ArgumentError, match="SplitMix64"):
        generate(model, np.array([[1]]), 1, np.random.default_rng(0))
