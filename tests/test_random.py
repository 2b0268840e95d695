"""SplitMix64 against the reference outputs, and Xavier-uniform initialisation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.random import SplitMix64, xavier_uniform


def test_reference_outputs_seed_zero():
    rng = SplitMix64(0)
    assert [rng.next_u64() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


def test_reference_outputs_seed_1234567():
    rng = SplitMix64(1234567)
    assert [rng.next_u64() for _ in range(3)] == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
    ]


def test_next_float_uses_the_top_53_bits():
    rng = SplitMix64(0)
    assert rng.next_float() == (0xE220A8397B1DCDAF >> 11) / 2**53


def test_vectorised_draws_equal_sequential_draws():
    a, b = SplitMix64(42), SplitMix64(42)
    assert a.u64_array(257).tolist() == [b.next_u64() for _ in range(257)]
    assert a.next_u64() == b.next_u64()
    u = SplitMix64(7).uniform(-1.0, 1.0, (3, 4))
    c = SplitMix64(7)
    np.testing.assert_array_equal(u.ravel(), [-1.0 + 2.0 * c.next_float() for _ in range(12)])


def test_normal_draws_are_standard_normal_in_aggregate():
    z = SplitMix64(3).normal((20_000,))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1.0) < 0.03
    assert np.all(np.isfinite(z))


def test_seed_must_be_an_integer():
    with pytest.raises(ArgumentError, match="seed must be an integer"):
        SplitMix64(1.5)


def test_xavier_bound_shape_and_reproducibility():
    w = xavier_uniform(2, 3, SplitMix64(19))
    bound = math.sqrt(6.0 / 5.0)
    assert w.shape == (2, 3) and np.all(np.abs(w) < bound)
    np.testing.assert_array_equal(w, xavier_uniform(2, 3, SplitMix64(19)))
    assert not np.array_equal(w, xavier_uniform(2, 3, SplitMix64(20)))
    big = xavier_uniform(200, 300, SplitMix64(1))
    assert big.max() == pytest.approx(math.sqrt(6.0 / 500.0), rel=1e-3)


@pytest.mark.parametrize(("fan_in", "fan_out"), [(0, 3), (2, 0), (-1, 3), (True, 3), (2.0, 3)])
def test_xavier_rejects_empty_or_non_integer_fans_without_drawing(fan_in, fan_out):
    rng = SplitMix64(19)
    with pytest.raises(ArgumentError, match="positive integer fan"):
        xavier_uniform(fan_in, fan_out, rng)
    assert rng.state == SplitMix64(19).state


def test_transaction_commits_only_on_success():
    rng = SplitMix64(5)
    with rng.transaction() as draft:
        draft.next_u64()
    assert rng.state == SplitMix64(5).clone().state + 0x9E3779B97F4A7C15
    before = rng.state
    with pytest.raises(RuntimeError), rng.transaction() as draft:
        draft.next_u64()
        raise RuntimeError("construction failed")
    assert rng.state == before
