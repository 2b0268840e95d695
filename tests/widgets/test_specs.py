"""Building a widget validates its arguments with typed errors that say what to fix."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.widgets import (
    predict_choice,
    predict_explain,
    predict_number,
    predict_shape,
    predict_vector,
)


def test_number_spec_holds_the_computed_answer_and_its_text() -> None:
    spec = predict_number("y?", np.float64(0.7310585786300049), reason="sigmoid(1).").spec
    assert spec == {
        "kind": "number",
        "question": "y?",
        "reason": "sigmoid(1).",
        "answer": 0.731058578630,  # sigmoid(1) at 12 significant digits: the same on every CPU
        "tolerance": 1e-6,
        "answer_text": "0.731059",
    }


def test_vector_spec_flattens_arrays() -> None:
    spec = predict_vector("v?", np.array([[1.0, 0.5], [0.25, 2.0]]), reason="r.").spec
    assert spec["answer"] == [1.0, 0.5, 0.25, 2.0]
    assert spec["answer_text"] == "[1, 0.5, 0.25, 2]"


def test_shape_spec_accepts_tuples_lists_and_numpy_integers() -> None:
    assert predict_shape("s?", np.zeros((4, 7, 3)).shape, reason="r.").spec["answer"] == [4, 7, 3]
    assert predict_shape("s?", [np.int64(2), 3], reason="r.").spec["answer_text"] == "(2, 3)"
    assert predict_shape("s?", (), reason="r.").spec["answer_text"] == "()"


@pytest.mark.parametrize(
    "make",
    [
        lambda: predict_number("q?", float("nan"), reason="r."),
        lambda: predict_number("q?", float("inf"), reason="r."),
        lambda: predict_number("q?", "5.5", reason="r."),
        lambda: predict_number("q?", True, reason="r."),
        lambda: predict_number("", 1.0, reason="r."),
        lambda: predict_number("q?", 1.0, reason="  "),
        lambda: predict_number("q?", 1.0, reason="r.", tolerance=-1.0),
        lambda: predict_number("q?", 1.0, reason="r.", digits=2.5),
        lambda: predict_number("q?", 1.0, reason="r.", digits=16),
        lambda: predict_number("q?", 0.123456789, reason="r.", tolerance=1e-9, digits=3),
        lambda: predict_vector("q?", [], reason="r."),
        lambda: predict_vector("q?", [1.0, float("nan")], reason="r."),
        lambda: predict_vector("q?", ["a", "b"], reason="r."),
        lambda: predict_vector("q?", [1 / 3, 2.0], reason="r.", tolerance=1e-12, digits=2),
        lambda: predict_choice("q?", ["a", "b"], "c", reason="r."),
        lambda: predict_choice("q?", ["a"], "a", reason="r."),
        lambda: predict_choice("q?", ["a", "a"], "a", reason="r."),
        lambda: predict_choice("q?", ["a", " "], "a", reason="r."),
        lambda: predict_choice("q?", "ab", "a", reason="r."),
        lambda: predict_explain("q?", ""),
        lambda: predict_explain("", "model"),
    ],
)
def test_bad_arguments_raise_argument_error(make: object) -> None:
    with pytest.raises(ArgumentError):
        make()  # type: ignore[operator]


@pytest.mark.parametrize("answer", [(4, -1), (4.0, 7), (True, 2), "4,7", 4, (2**60,)])
def test_bad_shapes_raise_shape_error(answer: object) -> None:
    with pytest.raises(ShapeError):
        predict_shape("s?", answer, reason="r.")  # type: ignore[arg-type]


def test_choice_outside_options_names_the_options() -> None:
    with pytest.raises(ArgumentError, match=r"one of the options \['rows', 'columns'\]"):
        predict_choice("q?", ["rows", "columns"], "both", reason="r.")


def test_tolerance_too_small_for_the_displayed_digits_says_how_to_fix_it() -> None:
    with pytest.raises(ArgumentError, match="raise tolerance"):
        predict_number("q?", 1 / 3, reason="r.", tolerance=1e-9)


def test_errors_are_value_errors_for_callers_that_catch_those() -> None:
    with pytest.raises(ValueError):
        predict_choice("q?", ["a", "b"], "c", reason="r.")
