"""The shared argument checks: what each accepts, what it refuses, and what the message says."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError, FromScratchError, TokenError, WidthError
from llm_from_scratch.nn.module import as_tensor
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.validate import (
    MAX_ELEMENTS,
    as_flag,
    as_float_array,
    as_integer,
    as_numpy,
    as_real,
    as_width,
    broadcasts_to,
    element_count,
    generator,
    non_negative_int,
    positive_int,
    tensor_value,
)


@pytest.mark.parametrize("value", [1, 7, np.int64(3), np.uint8(2), 10**30])
def test_positive_int_accepts_integers_and_returns_int(value: object) -> None:
    result = positive_int(value, "width")
    assert type(result) is int and result == int(value)  # type: ignore[call-overload]


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 2.0, 2.5, "2", None, [2], 1j])
def test_positive_int_refuses_non_integers_naming_the_value(value: object) -> None:
    with pytest.raises(ArgumentError) as info:
        positive_int(value, "width")
    assert str(info.value) == f"width must be a positive integer; got {value!r}."


@pytest.mark.parametrize("value", [0, -1, np.int32(-5)])
def test_positive_int_range_error_class_and_message(value: object) -> None:
    with pytest.raises(WidthError) as info:
        positive_int(value, "width", range_error=WidthError, fix="Use 4.")
    assert str(info.value) == f"width must be at least 1; got {value!r}. Use 4."


def test_integer_minimum_wording() -> None:
    assert non_negative_int(0, "count") == 0
    with pytest.raises(ArgumentError, match=r"^count must be a non-negative integer; got -1\.$"):
        non_negative_int(-1, "count")
    with pytest.raises(ArgumentError, match=r"^n must be an integer ≥ 3; got 1\.5\.$"):
        as_integer(1.5, "n", minimum=3)
    with pytest.raises(ArgumentError, match=r"^n must be at least 3; got 2\.$"):
        as_integer(2, "n", minimum=3)
    assert as_integer(-9, "n") == -9


def test_error_class_is_the_callers() -> None:
    with pytest.raises(WidthError, match=r"^width must be at least 1; got 0\.$"):
        positive_int(0, "width", error=WidthError)


@pytest.mark.parametrize("value", [True, False, np.bool_(False)])
def test_as_flag_accepts_real_bools(value: object) -> None:
    assert as_flag(value, "bias") is bool(value)


@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, [], 0.0])
def test_as_flag_refuses_truthiness(value: object) -> None:
    with pytest.raises(ArgumentError) as info:
        as_flag(value, "bias")
    assert str(info.value).startswith(f"bias must be True or False; got {value!r}.")


def test_generator_accepts_only_splitmix64_and_names_it() -> None:
    rng = SplitMix64(1)
    assert generator(rng, "Linear") is rng
    for bad in (None, np.random.default_rng(0), 42, "seed"):
        with pytest.raises(ArgumentError) as info:
            generator(bad, "Linear")
        message = str(info.value)
        assert message.startswith(f"Linear needs a SplitMix64 rng; got {type(bad).__name__}")
        assert "SplitMix64(seed)" in message and "0x" not in message  # no memory address


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "eps must be finite; got nan."),
        (float("inf"), "eps must be finite; got inf."),
        (True, "eps must be a real number; got True."),
        ("1e-5", "eps must be a real number; got '1e-5'."),
        (0.0, "eps must be greater than 0; got 0.0."),
        (-1, "eps must be greater than 0; got -1."),
    ],
)
def test_as_real_refusals(value: object, message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        as_real(value, "eps", positive=True)
    assert str(info.value) == message


def test_as_real_accepts_and_minimum() -> None:
    assert as_real(np.float32(0.5), "x") == 0.5
    assert as_real(3, "x", minimum=3) == 3.0
    with pytest.raises(ArgumentError, match=r"^x must be at least 3; got 2\.$"):
        as_real(2, "x", minimum=3)


def test_element_count_refuses_before_allocating_and_names_the_size() -> None:
    assert element_count((2**14, 2**14), "W") == 2**28 == MAX_ELEMENTS
    with pytest.raises(ArgumentError) as info:
        element_count((10**9, 10**9), "Linear weight")
    message = str(info.value)
    assert "1000000000 × 1000000000 = 1,000,000,000,000,000,000 float64 values" in message
    assert "8,000,000,000,000,000,000 bytes" in message
    with pytest.raises(ArgumentError, match=r"would hold 268435457 = 268,435,457 float64"):
        element_count((MAX_ELEMENTS + 1,), "table")


def test_as_float_array_copies_and_converts() -> None:
    source = [[1, 2], [3, 4]]
    out = as_float_array(source, "W", finite=True)
    assert out.dtype == np.float64 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    t = Tensor([1.0, 2.0])
    copy = as_float_array(t, "W", finite=True)
    copy[0] = 9.0
    assert t.value[0] == 1.0  # a copy, never a view of the caller's data


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ([[1.0, 2.0], [3.0]], "must be a rectangular array of numbers; got [[1.0, 2.0], [3.0]]"),
        (None, "must be an array of numbers; got None."),
        ("abc", "must be an array of numbers; got 'abc'."),
        ([1.0, None], "dtype object"),
        ([1 + 2j], "dtype complex128"),
        ([1.0, np.nan], "must hold finite numbers; got 1 NaN or infinite entries in shape (2,)."),
        (Tensor([np.inf]), "must hold finite numbers"),
    ],
)
def test_as_float_array_refusals(value: object, fragment: str) -> None:
    with pytest.raises(ArgumentError) as info:
        as_float_array(value, "W", finite=True)
    assert fragment in str(info.value)
    assert str(info.value).startswith("W must")


def test_as_tensor_passes_tensors_through_and_allows_nan_values() -> None:
    t = Tensor([1.0])
    assert as_tensor(t, "x") is t
    assert np.isnan(as_tensor([np.nan], "x").value).all()
    with pytest.raises(FromScratchError, match="x must be an array of numbers; got None"):
        as_tensor(None, "x")


def test_as_width_is_an_argument_error_for_non_integers_and_a_width_error_below_one() -> None:
    assert as_width(np.int64(3), "Linear input width") == 3
    with pytest.raises(WidthError, match=r"^Linear input width must be at least 1; got 0\.$"):
        as_width(0, "Linear input width")
    with pytest.raises(ArgumentError, match=r"must be a positive integer; got 2\.0\.$"):
        as_width(2.0, "Linear input width")


def test_as_numpy_keeps_the_dtype_reads_tensors_and_refuses_ragged_rows() -> None:
    assert as_numpy([[1, 2]], "ids").dtype.kind == "i"
    assert as_numpy(np.array([True]), "mask").dtype == np.bool_
    t = Tensor([1.0, 2.0])
    assert as_numpy(t, "x") is t.value
    with pytest.raises(TokenError, match=r"^ids must be a rectangular \[B, T\] integer array"):
        as_numpy([[1, 2], [3]], "ids", kind="[B, T] integer array", error=TokenError)


def test_tensor_value_recognises_tensors_without_importing_them() -> None:
    t = Tensor([1.0])
    assert tensor_value(t) is t.value
    assert tensor_value(np.ones(2)) is None and tensor_value(None) is None


@pytest.mark.parametrize(
    ("shape", "target", "fits"),
    [
        ((3,), (2, 3), True),
        ((1, 3), (2, 3), True),
        ((2, 1), (2, 3), True),
        ((), (2,), True),
        ((2,), (2, 3), False),
        ((2, 3), (3,), False),
        ((4, 3), (1, 3), False),
    ],
)
def test_broadcasts_to_agrees_with_numpy_without_enlarging(shape, target, fits) -> None:
    assert broadcasts_to(shape, target) is fits
    try:
        numpy_fits = np.broadcast_shapes(shape, target) == target
    except ValueError:
        numpy_fits = False
    assert numpy_fits is fits


def test_engine_readers_share_the_messages() -> None:
    with pytest.raises(ArgumentError, match="convertible to float64"):
        as_float_array("abc")
    with pytest.raises(ArgumentError, match=r"^exponent must be finite; got nan\.$"):
        as_real(float("nan"), "exponent")
    assert np.isnan(as_real(float("nan"), "step", allow_nan=True, finite=False))
