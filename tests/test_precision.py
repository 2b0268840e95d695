"""The display-precision policy: what it rounds, what it refuses, what it leaves alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.precision import (
    array_text,
    below,
    bound_text,
    changed,
    fmt,
    gap_text,
    rounded,
)


def test_last_bit_neighbours_round_to_one_value() -> None:
    # Two results seen on two CPUs for the same computation (one ulp apart).
    assert rounded(3.0032491189825086) == rounded(3.003249118982509) == 3.003249119
    assert rounded(2.9000000000000004) == rounded(2.9) == 2.9
    assert repr(rounded(1.7782794100389227e-06)) == "1.77827941e-06"


def test_negative_zero_becomes_zero_and_non_finite_values_pass() -> None:
    assert math.copysign(1.0, rounded(-0.0)) == 1.0
    assert math.copysign(1.0, rounded(-1e-300 * 1e-300)) == 1.0  # underflows to -0.0
    assert math.isnan(rounded(float("nan"))) and rounded(float("inf")) == float("inf")


def test_numpy_values_become_python_values_and_containers_are_walked() -> None:
    value = rounded(np.float64(0.1) + np.float64(0.2))
    assert type(value) is float and value == 0.3
    assert type(rounded(np.int64(7))) is int and rounded(True) is True
    assert rounded({"a": [0.30000000000000004, (1, "x")]}) == {"a": [0.3, (1, "x")]}
    array = rounded(np.array([[1 / 3, -0.0]]))
    assert array.shape == (1, 2) and array[0, 0] == 0.3333333333 and str(array[0, 1]) == "0.0"
    assert rounded(np.array([1, 2])).dtype.kind == "i"


def test_more_digits_where_a_tolerance_needs_them_and_never_past_the_guard() -> None:
    assert rounded(10000.984375, 12) == 10000.984375
    assert rounded(10000.984375) == 10000.98438
    for bad in (0, 13, 2.5, "10"):
        with pytest.raises(ArgumentError, match="significant"):
            rounded(1.0, bad)


def test_below_states_the_bound_and_refuses_a_false_one() -> None:
    assert below(7.5e-11, 1e-8) == "below 1e-8"
    assert below(np.array([1e-17, -3e-16]), 1e-12) == "below 1e-12"
    with pytest.raises(ArgumentError, match=r"2\.000e-07 is not below the stated bound 1e-08"):
        below(2e-7, 1e-8)
    with pytest.raises(ArgumentError, match="finite"):
        below(np.array([0.0, np.nan]), 1.0)


def test_bound_and_gap_texts() -> None:
    assert bound_text(1e-09) == "1e-9" and bound_text(0.5) == "0.5" and bound_text(1e10) == "1e10"
    assert gap_text(3e-17) == "below 1e-12"
    assert gap_text(0.000123456) == "1.2e-04"


def test_changed_rows_use_the_tolerance_not_exact_zero() -> None:
    before = np.zeros((3, 2))
    after = before.copy()
    after[1, 0] = 4e-17  # rounding noise on another CPU
    after[2, 1] = 0.5
    assert changed(before, after, 1e-12) == [2]
    with pytest.raises(ArgumentError, match="one shape"):
        changed(before, after[:2], 1e-12)


def test_array_text_prints_noise_as_zero() -> None:
    assert array_text([-1e-17, 0.5, 2.0]) == "[0. , 0.5, 2. ]"
    assert array_text([-1e-17, 0.5], 6, fixed=True) == "[0.000000, 0.500000]"
    assert fmt(2.9000000000000004, "") == "2.9" and fmt(1 / 3, ".12f") == "0.333333333300"
