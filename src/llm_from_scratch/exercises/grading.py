"""The grading kit: run the reader's code, compare it with the truth, say what is wrong.

A grader is a function decorated with :func:`grader`. It calls the reader's code through
:func:`call` (so an exception inside the reader's code becomes a plain message, not a traceback)
and compares what came back with an independent answer through :func:`compare` and
:func:`expect`. The first thing that is wrong ends the grading with a :class:`Grade` that names
it: which entry, which shape, which case. A grader never raises at the reader.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Grade:
    """The verdict on one exercise: passed or not, and one message saying why."""

    exercise: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        mark = "✓ passed" if self.passed else "✗ not yet"
        return f"{self.exercise}: {mark}. {self.message}"

    __str__ = __repr__


class AnswerError(Exception):
    """Raised inside a grader at the first thing that is wrong; its message is the verdict."""


def grader(exercise: str) -> Callable[[Callable[..., str]], Callable[..., Grade]]:
    """Turn ``check(candidate, ...) -> success message`` into a grader returning a Grade."""

    def decorate(check: Callable[..., str]) -> Callable[..., Grade]:
        @functools.wraps(check)
        def grade(candidate: Any, *args: Any, **kwargs: Any) -> Grade:
            try:
                message = check(candidate, *args, **kwargs)
            except AnswerError as failure:
                return Grade(exercise, False, str(failure))
            return Grade(exercise, True, message)

        grade.exercise = exercise  # type: ignore[attr-defined]
        return grade

    return decorate


def require_callable(candidate: Any, what: str) -> None:
    """Fail unless ``candidate`` is a function (the reader passed a result, not the code)."""
    if not callable(candidate):
        raise AnswerError(
            f"pass {what} itself (the function, without calling it); got "
            f"{_a(type(candidate).__name__)}."
        )


def call(
    function: Callable[..., Any], *args: Any, what: str, case: str = "", **kwargs: Any
) -> Any:
    """Run the reader's ``function``; an exception becomes an AnswerError naming the case."""
    try:
        return function(*args, **kwargs)
    except AnswerError:
        raise
    except Exception as error:  # the reader's code may raise anything
        where = f" on {case}" if case else ""
        hint = ""
        if "read-only" in str(error):
            hint = (
                " The arrays it receives are read-only, as the engine's are: compute a new "
                "array instead of changing an input in place."
            )
        message = f"{what} raised {type(error).__name__}{where}: {error}"
        raise AnswerError(message + ("." + hint if hint else "")) from None


def frozen(array: Any) -> np.ndarray:
    """A read-only float copy of ``array``, to hand to the reader's code (no in-place edits)."""
    copy = np.array(array, dtype=np.float64)
    copy.flags.writeable = False
    return copy


def as_array(value: Any, what: str) -> np.ndarray:
    """The reader's value as a float array, or an AnswerError saying what it was."""
    if value is None:
        raise AnswerError(f"{what} is None: the function returns nothing (a missing return?).")
    data = getattr(value, "value", value)  # a Tensor gives its numpy value
    try:
        array = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        raise AnswerError(
            f"{what} should be an array of numbers; got {_a(type(value).__name__)}."
        ) from None
    return array


def compare(
    got: Any,
    want: Any,
    *,
    what: str,
    case: str = "",
    atol: float = 1e-9,
    rtol: float = 1e-9,
) -> None:
    """Fail unless ``got`` has ``want``'s shape and every entry within atol + rtol·|want|."""
    got_array = as_array(got, what)
    want_array = np.asarray(want, dtype=np.float64)
    where = f" for {case}" if case else ""
    if got_array.shape != want_array.shape:
        raise AnswerError(
            f"{what} has shape {tuple(got_array.shape)}{where}; it should have shape "
            f"{tuple(want_array.shape)}."
        )
    if not np.all(np.isfinite(got_array)):
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(got_array))[0])
        raise AnswerError(
            f"{what}{list(index)} is {got_array[index]}{where}; every entry should be finite."
        )
    gap = np.abs(got_array - want_array)
    allowed = atol + rtol * np.abs(want_array)
    if np.any(gap > allowed):
        index = np.unravel_index(int(np.argmax(gap - allowed)), gap.shape)
        at = f"{list(int(i) for i in index)}" if got_array.ndim else ""
        got_text, want_text = f"{got_array[index]:.6g}", f"{want_array[index]:.6g}"
        if got_text == want_text:  # close enough to print alike: show every digit and the gap
            got_text, want_text = repr(float(got_array[index])), repr(float(want_array[index]))
            want_text += f" (they differ by {float(gap[index]):.2g}"
            dtype = getattr(getattr(got, "value", got), "dtype", None)
            if dtype is not None and dtype != np.float64:
                want_text += f"; yours is {dtype}, compute in float64"
            want_text += ")"
        raise AnswerError(f"{what}{at} is {got_text}{where}; it should be {want_text}.")


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: 'an int', 'a list'."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def expect(condition: bool, message: str) -> None:
    """Fail with ``message`` unless ``condition`` holds."""
    if not condition:
        raise AnswerError(message)
