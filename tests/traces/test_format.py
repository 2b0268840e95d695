"""The trace text format (llm_from_scratch.traces.format): writing, parsing, typed fields."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.precision import SIGNIFICANT
from llm_from_scratch.traces import (
    TRACE_TOLERANCE,
    Trace,
    fixed,
    fixed_list,
    format_value,
    parse_trace,
    read_records,
    shape_text,
    trace_gaps,
)
from llm_from_scratch.traces.format import decimals_for
from tools.notebook_outputs import significant_digits


def test_fixed_six_decimals_and_no_negative_zero() -> None:
    assert fixed(5.5) == "5.500000"
    assert fixed(-0.5) == "-0.500000"
    assert fixed(-0.0) == "0.000000"
    assert fixed(-1e-9) == "0.000000"


def test_fixed_never_shows_more_significant_digits_than_the_policy() -> None:
    """From 1e4 up fewer decimals, from 1e10 up an exponent: at most 10 digits, read back close."""
    assert fixed(9999.5) == "9999.500000"
    assert fixed(12345.6789123456) == "12345.67891"
    assert fixed(-1234567.891234) == "-1234567.891"
    assert fixed(3e12) == "3.000000000e+12"
    assert decimals_for(0.001) == 6 and decimals_for(1e9) == 0
    for value in (0.123456789, 98765.4321987, 1e8 / 3, -7e11 / 3, 1e15 / 7):
        text = fixed(value)
        assert significant_digits(text) <= SIGNIFICANT, text
        assert math.isclose(float(text), value, rel_tol=1e-9, abs_tol=TRACE_TOLERANCE)
    assert fixed(float("nan")) == "nan" and fixed(float("-inf")) == "-inf"


def test_fixed_list_and_shape_text() -> None:
    assert fixed_list([[1, -0.5]]) == "[1.000000,-0.500000]"
    assert fixed_list([]) == "[]"
    assert shape_text((1, 2, 2)) == "[1,2,2]"
    assert shape_text(()) == "[]"


def test_format_value_kinds() -> None:
    assert format_value(True) == "true"
    assert format_value(np.bool_(False)) == "false"
    assert format_value(3) == "3"
    assert format_value(np.int64(3)) == "3"
    assert format_value(0.25) == "0.250000"
    assert format_value((1, 2, 3)) == "[1,2,3]"
    assert format_value(np.array([1.0, 2.0])) == "[1.000000,2.000000]"
    assert format_value("feature") == "feature"


@pytest.mark.parametrize("bad", ["", "two words"])
def test_format_value_rejects_blank_or_spaced_text(bad: str) -> None:
    with pytest.raises(ArgumentError):
        format_value(bad)


def test_trace_round_trip() -> None:
    trace = Trace("demo-v1").line("FIXTURE", input_width=2, bias=True, input_shape=(1, 2, 2))
    trace.line("INPUT", values=[1.0, 2.0], scale=0.5)
    text = str(trace)
    assert text == (
        "TRACE demo-v1 BEGIN\n"
        "FIXTURE input-width=2 bias=true input-shape=[1,2,2]\n"
        "INPUT values=[1.000000,2.000000] scale=0.500000\n"
        "TRACE demo-v1 END\n"
    )
    name, records = parse_trace(text)
    assert name == "demo-v1"
    assert [r.kind for r in records] == ["FIXTURE", "INPUT"]
    fixture, values = records
    assert fixture.fields == {"input-width": "2", "bias": "true", "input-shape": "[1,2,2]"}
    assert fixture.integer("input-width") == 2
    assert fixture.flag("bias") is True
    assert fixture.integers("input-shape") == (1, 2, 2)
    np.testing.assert_array_equal(values.numbers("values"), [1.0, 2.0])
    assert values.number("scale") == 0.5


def test_record_fields_name_what_is_missing_or_malformed() -> None:
    _, (record,) = parse_trace(str(Trace("demo-v1").line("AXES", preserved=1, shape=())))
    assert record.integers("shape") == ()
    with pytest.raises(ArgumentError, match=r"The AXES line needs a field mixed-axis=\.\.\."):
        record.text("mixed-axis")
    with pytest.raises(ArgumentError, match="must be true or false; got '1'"):
        record.flag("preserved")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "INPUT values=[1]\n",
        "TRACE a BEGIN\nX k=1\nTRACE b END\n",
        "TRACE a BEGIN\n",
        "TRACE a BEGIN\nX k\nTRACE a END\n",
    ],
)
def test_parse_trace_rejects_unframed_text(text: str) -> None:
    with pytest.raises(ArgumentError):
        parse_trace(text)


def test_read_records_groups_by_kind_and_checks_name_and_kinds() -> None:
    text = str(Trace("demo-v1").line("ROW", i=0).line("ROW", i=1).line("END-NOTE", ok=True))
    lines = read_records(text, "demo-v1", ["ROW"])
    assert [r.integer("i") for r in lines["ROW"]] == [0, 1]
    with pytest.raises(ArgumentError, match="Expected a TRACE other-v1; got TRACE demo-v1"):
        read_records(text, "other-v1", [])
    with pytest.raises(ArgumentError, match="needs FIXTURE, AXES lines"):
        read_records(text, "demo-v1", ["ROW", "FIXTURE", "AXES"])


@dataclass(frozen=True)
class _Demo:
    name: str
    values: np.ndarray
    flags: np.ndarray


def test_trace_gaps_bound_floats_and_require_everything_else_equal() -> None:
    exact = _Demo("a", np.array([1.0, 2.0]), np.array([True, False]))
    gaps = trace_gaps(exact, _Demo("a", np.array([1.0, 2.0000004]), np.array([True, False])))
    assert gaps["name"] == gaps["flags"] == 0.0
    assert math.isclose(gaps["values"], 4e-7, rel_tol=1e-6)
    assert trace_gaps(exact, _Demo("b", exact.values, exact.flags))["name"] == math.inf
    assert trace_gaps(exact, _Demo("a", exact.values[:1], exact.flags))["values"] == math.inf
    assert trace_gaps(exact, _Demo("a", exact.values, ~exact.flags))["flags"] == math.inf
    with pytest.raises(ArgumentError, match="one dataclass type"):
        trace_gaps(exact, {"name": "a"})
