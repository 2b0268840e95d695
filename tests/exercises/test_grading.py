"""The grading kit: a right answer passes; each kind of wrong answer gets its own message."""

import numpy as np

from llm_from_scratch.exercises import Grade, call, compare, expect, grader, require_callable


@grader("Exercise 0.1")
def grade_double(candidate):
    require_callable(candidate, "your double")
    x = np.arange(3.0)
    got = call(candidate, x, what="your double", case="x = [0, 1, 2]")
    compare(got, 2 * np.arange(3.0), what="double(x)", case="x = [0, 1, 2]")
    expect(got is not x, "double(x) returned its input; return a new array.")
    return "it doubles every entry."


def test_a_right_answer_passes():
    grade = grade_double(lambda x: x + x)
    assert isinstance(grade, Grade) and grade.passed and bool(grade)
    assert repr(grade) == "Exercise 0.1: ✓ passed. it doubles every entry."


def test_a_wrong_entry_is_named():
    grade = grade_double(lambda x: x * x)
    assert not grade
    assert grade.message == "double(x)[1] is 1 for x = [0, 1, 2]; it should be 2."


def test_a_wrong_shape_is_named():
    assert grade_double(lambda x: x[:2]).message == (
        "double(x) has shape (2,) for x = [0, 1, 2]; it should have shape (3,)."
    )


def test_an_exception_in_the_readers_code_becomes_a_message():
    grade = grade_double(lambda x: x / "two")
    assert not grade and grade.message.startswith("your double raised TypeError on x = [0, 1, 2]:")


def test_a_result_instead_of_a_function_is_explained():
    assert grade_double(3).message == (
        "pass your double itself (the function, without calling it); got an int."
    )


def test_non_numbers_and_non_finite_entries_are_named():
    assert grade_double(lambda x: "abc").message == (
        "double(x) should be an array of numbers; got a str."
    )
    grade = grade_double(lambda x: np.where(x > 0, x, np.nan))
    assert grade.message.startswith("double(x)[0] is nan")


def test_an_extra_condition_reports_its_message():
    grade_double_in_place = grade_double(lambda x: x.__imul__(2))
    assert grade_double_in_place.message == "double(x) returned its input; return a new array."
