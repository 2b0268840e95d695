"""Build and validate the JSON specs a predict-then-check widget carries to the browser."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..precision import GUARD_DIGITS, rounded
from .checker import check, format_number, format_shape, format_vector

MAX_DIGITS = 15  # beyond this a float64 has no more decimals to show
MAX_AXIS_LENGTH = 2**53  # axis lengths stay exact as JavaScript numbers


def _text(name: str, value: object) -> str:
    """A non-blank string argument, or ArgumentError."""
    if not isinstance(value, str) or value.strip() == "":
        raise ArgumentError(f"{name} must be a non-empty string; got {value!r}.")
    return value


def _real(name: str, value: object) -> float:
    """A finite real number (int, float or numpy scalar), or ArgumentError."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"{name} must be a real number; got {value!r}.")
    number = float(value)
    if not math.isfinite(number):
        raise ArgumentError(f"{name} must be finite; got {number!r}.")
    return number


def _tolerance_and_digits(tolerance: object, digits: object) -> tuple[float, int]:
    """Validate ``tolerance >= 0`` and ``0 <= digits <= MAX_DIGITS``."""
    tol = _real("tolerance", tolerance)
    if tol < 0:
        raise ArgumentError(f"tolerance must be >= 0; got {tol!r}.")
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral):
        raise ArgumentError(f"digits must be an integer; got {digits!r}.")
    if not 0 <= int(digits) <= MAX_DIGITS:
        raise ArgumentError(f"digits must be between 0 and {MAX_DIGITS}; got {digits!r}.")
    return tol, int(digits)


def _require_displayed_answer_passes(spec: dict[str, Any]) -> None:
    """The answer as displayed must itself be accepted, or the reader cannot win by copying it."""
    verdict = check(spec, spec["answer_text"])
    if verdict.status != "correct":
        raise ArgumentError(
            f"The answer is shown as {spec['answer_text']}, which a tolerance of "
            f"{spec['tolerance']!r} rejects; raise tolerance to at least half of "
            f"10**-digits or increase digits."
        )


def number_spec(
    question: str, answer: object, *, reason: str, tolerance: object = 1e-6, digits: object = 6
) -> dict[str, Any]:
    """Spec for one number, checked as |typed - answer| <= tolerance.

    The answer is stored rounded to 12 significant digits (llm_from_scratch.precision), so the
    widget state, like the prose, is the same on every CPU while an answer near 1e6 keeps the
    digits a tolerance of 1e-6 needs.
    """
    value = rounded(_real("answer", answer), GUARD_DIGITS)
    tol, places = _tolerance_and_digits(tolerance, digits)
    spec = {
        "kind": "number",
        "question": _text("question", question),
        "reason": _text("reason", reason),
        "answer": value,
        "tolerance": tol,
        "answer_text": format_number(value, places),
    }
    _require_displayed_answer_passes(spec)
    return spec


def vector_spec(
    question: str, answer: object, *, reason: str, tolerance: object = 1e-6, digits: object = 6
) -> dict[str, Any]:
    """Spec for a list of numbers (any array, flattened), each checked within the tolerance."""
    try:
        values = np.asarray(answer, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"answer must be a sequence of numbers; got {answer!r}.") from exc
    if values.size == 0:
        raise ArgumentError("answer must hold at least one number; got an empty array.")
    if not np.all(np.isfinite(values)):
        raise ArgumentError(f"answer must be finite; got {values.tolist()!r}.")
    tol, places = _tolerance_and_digits(tolerance, digits)
    floats = [rounded(float(v), GUARD_DIGITS) for v in values]  # as number_spec
    spec = {
        "kind": "vector",
        "question": _text("question", question),
        "reason": _text("reason", reason),
        "answer": floats,
        "tolerance": tol,
        "answer_text": format_vector(floats, places),
    }
    _require_displayed_answer_passes(spec)
    return spec


def shape_spec(question: str, answer: Sequence[int], *, reason: str) -> dict[str, Any]:
    """Spec for a tensor shape: a sequence of whole numbers, compared exactly."""
    if isinstance(answer, str | bytes) or not isinstance(answer, Sequence | np.ndarray):
        raise ShapeError(
            f"answer must be a sequence of axis lengths such as (4, 7, 3); got {answer!r}."
        )
    lengths: list[int] = []
    for n in answer:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise ShapeError(f"Axis lengths must be integers; got {n!r} in {answer!r}.")
        if not 0 <= int(n) <= MAX_AXIS_LENGTH:
            raise ShapeError(f"Axis lengths must be between 0 and 2**53; got {n!r}.")
        lengths.append(int(n))
    return {
        "kind": "shape",
        "question": _text("question", question),
        "reason": _text("reason", reason),
        "answer": lengths,
        "answer_text": format_shape(lengths),
    }


def choice_spec(
    question: str, options: Sequence[str], answer: str, *, reason: str
) -> dict[str, Any]:
    """Spec for picking one of at least two distinct, non-blank options."""
    if isinstance(options, str) or not isinstance(options, Sequence):
        raise ArgumentError(f"options must be a list of strings; got {options!r}.")
    labels = [_text("each option", option) for option in options]
    if len(labels) < 2:
        raise ArgumentError(f"A choice needs at least two options; got {labels!r}.")
    if len(set(labels)) != len(labels):
        raise ArgumentError(f"Options must be distinct; got {labels!r}.")
    if answer not in labels:
        raise ArgumentError(f"answer must be one of the options {labels!r}; got {answer!r}.")
    return {
        "kind": "choice",
        "question": _text("question", question),
        "reason": _text("reason", reason),
        "options": labels,
        "answer": answer,
        "answer_text": answer,
    }


def explain_spec(question: str, model_answer: str) -> dict[str, Any]:
    """Spec for a free-text explanation that unlocks a model answer."""
    return {
        "kind": "explain",
        "question": _text("question", question),
        "model_answer": _text("model_answer", model_answer),
    }
