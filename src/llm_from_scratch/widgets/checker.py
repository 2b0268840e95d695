"""Parse a reader's prediction and check it against an answer the package computed.

This module is pure Python (no widgets, no numpy) and is mirrored line for line by
``checker.js``, which runs the same check in the browser. A test feeds both the same table of
cases and requires identical verdicts, so any change here must be made there too.

A *spec* is a JSON-ready dict built by :mod:`llm_from_scratch.widgets.specs`:

- ``{"kind": "number", "answer": float, "tolerance": float, "answer_text": str, ...}``
- ``{"kind": "vector", "answer": [float, ...], "tolerance": float, "answer_text": str, ...}``
- ``{"kind": "shape", "answer": [int, ...], "answer_text": str, ...}``
- ``{"kind": "choice", "options": [str, ...], "answer": str, "answer_text": str, ...}``
- ``{"kind": "explain", "model_answer": str, ...}``

Numbers are compared with an absolute tolerance, ``|typed - answer| <= tolerance``; axis lengths
and choices exactly. Messages never repeat a number the reader typed in reformatted form (only the
raw token, quoted), so Python and JavaScript produce the same text.

A wrong answer says what kind of wrong it is where that can be told (a flipped sign, a factor of
two, an axis swap, an off-by-one) and, on the reader's first wrong try (``tries=0``), offers
another try instead of the answer (status ``"retry"``); from the second wrong try on it shows the
answer (status ``"wrong"``). :func:`answer` is what the "Show the answer" button shows. Input that
cannot be read (``"invalid"``) is not a try.

What a person types and means is accepted: ``1/2``; ``0,5`` for one number (a decimal comma, unless
it could be a thousands separator such as ``1,000``, which is asked about); a typographic minus
or dash for ``-``; ``(2, 3)``, ``[2, 3]``, ``2x3`` or ``torch.Size([2, 3])`` for a shape; unusual
spaces (NBSP, em space, ...) as spaces. An invisible character (zero-width space, byte-order mark,
a control) is named in the message, with its position. Every pattern is linear-time and the input
is capped at ``MAX_INPUT`` code points, so no answer can stall the page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["correct", "retry", "wrong", "invalid", "revealed"]

# Whitespace is this explicit set in both languages (Python's and JavaScript's \s differ): ASCII
# blanks, NBSP, the Ogham space, U+2000-U+200A (en quad ... hair space), line and paragraph
# separators, the narrow NBSP, the medium mathematical space and the ideographic space.
_WS_CLASS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
WHITESPACE = " \t\n\r\f\v\u00a0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)
_WS_RUN = re.compile(f"[{_WS_CLASS}]+")
# Linear-time: after the digits only ".", "e" or the end can follow, so no split is ever retried.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_AXIS = re.compile(r"[0-9]+")
_SHAPE_TIMES = re.compile("[xX\u00d7]")
_SHAPE_PREFIX = re.compile(r"^(?:torch\.)?Size(?=\()")  # torch.Size([2, 3]) reads as ([2, 3])
# Hyphen, non-breaking hyphen, figure dash, en dash, em dash, minus sign, small and full-width
# hyphen-minus: what a reader may type or copy from rendered math for "-".
_MINUS_SIGNS = re.compile("[\u2010-\u2014\u2212\ufe63\uff0d]")
_DECIMAL_COMMA = re.compile(r"([+-]?)([0-9]+),([0-9]+)")
# Invisible characters: C0 and C1 controls (not the blanks above), soft hyphen, combining
# grapheme joiner, Arabic letter mark, Mongolian vowel separator and variation selectors,
# zero-width and direction marks, word joiner and invisible operators, variation selectors, BOM.
_INVISIBLE = re.compile(
    "[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]"
)
INVISIBLE_NAMES = {
    0x00AD: "soft hyphen",
    0x200B: "zero-width space",
    0x200C: "zero-width non-joiner",
    0x200D: "zero-width joiner",
    0x200E: "left-to-right mark",
    0x200F: "right-to-left mark",
    0x2060: "word joiner",
    0xFEFF: "byte-order mark",
}
MAX_INPUT = 2000  # code points; no prediction needs more
_BRACKET_PAIRS = {")": "(", "]": "["}
_MAX_QUOTED = 24  # code points of a bad token echoed back in a message
_MAX_LISTED = 5  # positions named in a "these entries differ" message

EMPTY_MESSAGES = {
    "number": "Type a number first, then press Check.",
    "vector": "Type your numbers first, then press Check.",
    "shape": "Type a shape first, such as (4, 7, 3), then press Check.",
    "choice": "Pick an option first, then press Check.",
    "explain": "Write your explanation first, then press Check.",
}
BRACKETS_MESSAGE = "The brackets do not match: close each ( with ) and each [ with ]."
EMPTY_ENTRY_MESSAGE = "There is an empty entry between commas; remove the extra comma."
UNKNOWN_OPTION_MESSAGE = "Pick one of the listed options."
EXPLAIN_MESSAGE = "Compare your explanation with this model answer:"
MODEL_ANSWER_MESSAGE = "Here is a model answer:"
RETRY = "Try again, or show the answer."
SIGN_FLIPPED = "the sign is flipped"
TWICE = "that is twice the answer"
HALF = "that is half the answer"
OFF_BY_ONE = "that is off by one"
EVERY_SIGN_FLIPPED = "every sign is flipped"
EVERY_TWICE = "every entry is twice the answer's"
EVERY_HALF = "every entry is half the answer's"
REVERSED = "the entries are in reverse order"
PERMUTED = "the axis lengths are right but in another order"


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: a status and a plain sentence for the reader."""

    status: Status
    message: str


def format_number(value: float, digits: int) -> str:
    """Fixed-point with ``digits`` decimals, trailing zeros dropped: 5.5 -> '5.5', -0.0 -> '0'."""
    text = f"{value:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def format_vector(values: Sequence[float], digits: int) -> str:
    """A list of numbers as the reader would type it: '[0.5, 0.25]'."""
    return "[" + ", ".join(format_number(v, digits) for v in values) + "]"


def format_shape(shape: Sequence[int]) -> str:
    """A shape the way Python prints a tuple: '(4, 7, 3)', '(4,)', '()'."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(n) for n in shape) + ")"


def strip_blank(text: str) -> str:
    """Remove leading and trailing whitespace (the explicit set shared with JavaScript)."""
    return text.strip(WHITESPACE)


def _quote(token: str) -> str:
    """The token in double quotes, shortened to a readable length."""
    if len(token) > _MAX_QUOTED:
        token = token[:_MAX_QUOTED] + "\u2026"
    return f'"{token}"'


def _join_positions(positions: Sequence[int]) -> str:
    """'2', '0 and 2', '0, 1 and 3', or '0, 1, 2, 3, 4 and 3 more'."""
    words = [str(p) for p in positions]
    if len(words) > _MAX_LISTED + 1:
        return ", ".join(words[:_MAX_LISTED]) + f" and {len(words) - _MAX_LISTED} more"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


def _plural(count: int, singular: str, plural: str) -> str:
    """'1 axis', '3 axes'."""
    return f"{count} {singular if count == 1 else plural}"


def _code_point(char: str) -> str:
    """'U+200B' for a character."""
    return f"U+{ord(char):04X}"


def _invisible(text: str) -> Verdict | None:
    """A message naming the first invisible character in ``text`` and its position, or None."""
    found = _INVISIBLE.search(text)
    if found is None:
        return None
    char = found.group()
    name = INVISIBLE_NAMES.get(ord(char), "an invisible control or format character")
    message = (
        f"Your answer contains an invisible character, {_code_point(char)} ({name}), at "
        f"position {found.start() + 1}. Delete it (retype the answer by hand), then press Check."
    )
    return Verdict("invalid", message)


def _too_long(text: str) -> Verdict | None:
    """A plain message when ``text`` has more than ``MAX_INPUT`` code points, else None."""
    if len(text) <= MAX_INPUT:
        return None
    message = f"That answer is {len(text)} characters long; type at most {MAX_INPUT}."
    return Verdict("invalid", message)


def split_entries(text: str, kind: str) -> list[str] | Verdict:
    """Split '[4, 7, 3]', '4,7,3', '(4, 7, 3)', '4 7 3' or '[]' into tokens, or explain why not."""
    text = _MINUS_SIGNS.sub("-", text)
    if kind == "shape":
        text = _SHAPE_PREFIX.sub("", strip_blank(text))
        text = _SHAPE_TIMES.sub(",", text)
    text = strip_blank(text)
    if text == "":
        return Verdict("invalid", EMPTY_MESSAGES[kind])
    stack: list[str] = []
    for char in text:
        if char in "([":
            stack.append(char)
        elif char in ")]" and (not stack or stack.pop() != _BRACKET_PAIRS[char]):
            return Verdict("invalid", BRACKETS_MESSAGE)
    if stack:
        return Verdict("invalid", BRACKETS_MESSAGE)
    inner = re.sub(r"[\[\]()]", " ", text)
    pieces = inner.split(",")
    has_comma = len(pieces) > 1
    if has_comma and strip_blank(pieces[-1]) == "":
        pieces.pop()  # one trailing comma is fine, as in the 1-tuple (4,)
    tokens: list[str] = []
    for piece in pieces:
        words = [word for word in _WS_RUN.split(piece) if word != ""]
        if not words and has_comma:
            return Verdict("invalid", EMPTY_ENTRY_MESSAGE)
        tokens.extend(words)
    return tokens


def parse_number(token: str) -> float | Verdict:
    """Parse '0.25', '-3', '1e-4' or '1/3' into a finite float, or explain why not."""
    parts = token.split("/")
    if len(parts) > 2 or not all(_NUMBER.fullmatch(part) for part in parts):
        message = f"{_quote(token)} is not a number; write numbers like 0.25, -3, 1e-4 or 1/3."
        return Verdict("invalid", message)
    value = float(parts[0])
    if len(parts) == 2:
        denominator = float(parts[1])
        if denominator == 0:
            return Verdict("invalid", f"{_quote(token)} divides by zero.")
        value = value / denominator
    if not math.isfinite(value):
        return Verdict("invalid", f"{_quote(token)} is too large to be a finite number.")
    return value


def _parse_numbers(text: str, kind: str) -> list[float] | Verdict:
    """Tokens of ``text`` parsed as numbers, or the first problem found."""
    tokens = split_entries(text, kind)
    if isinstance(tokens, Verdict):
        return tokens
    values: list[float] = []
    for token in tokens:
        value = parse_number(token)
        if isinstance(value, Verdict):
            return value
        values.append(value)
    return values


def _decimal_comma(text: str) -> str | Verdict:
    """'0,5' → '0.5' for a single number; '1,000' could be a thousands separator: ask."""
    bare = strip_blank(_MINUS_SIGNS.sub("-", text))
    found = _DECIMAL_COMMA.fullmatch(bare)
    if found is None:
        return text
    sign, whole, fraction = found.groups()
    if len(fraction) == 3 and whole.lstrip("0") != "":
        message = (
            f"{_quote(bare)} could mean {sign}{whole}{fraction} (a thousands separator) or "
            f"{sign}{whole}.{fraction} (a decimal comma); type it without the comma, with a "
            "point for decimals."
        )
        return Verdict("invalid", message)
    return f"{sign}{whole}.{fraction}"


def _check_number(spec: Mapping[str, Any], text: str, tries: int) -> Verdict:
    """One number within the tolerance."""
    text = _decimal_comma(text)
    if isinstance(text, Verdict):
        return text
    values = _parse_numbers(text, "number")
    if isinstance(values, Verdict):
        return values
    if len(values) == 0:
        return Verdict("invalid", EMPTY_MESSAGES["number"])
    if len(values) > 1:
        return Verdict("invalid", f"Type one number, not {len(values)}.")
    typed, answer, tolerance = values[0], spec["answer"], spec["tolerance"]
    if abs(typed - answer) <= tolerance:
        return Verdict("correct", f"Right. The answer is {spec['answer_text']}.")
    return _wrong(_number_mistake(typed, answer, tolerance), spec, tries)


def _number_mistake(typed: float, answer: float, tolerance: float) -> str:
    """What kind of wrong ``typed`` is: a flipped sign, a factor of 2, an off-by-one, or ''."""
    if abs(typed + answer) <= tolerance:
        return SIGN_FLIPPED
    if abs(typed - 2 * answer) <= tolerance:
        return TWICE
    if abs(typed - answer / 2) <= tolerance:
        return HALF
    if answer == math.floor(answer) and min(abs(typed - answer - 1), abs(typed - answer + 1)) <= (
        tolerance
    ):
        return OFF_BY_ONE
    return ""


def _wrong(mistake: str, spec: Mapping[str, Any], tries: int) -> Verdict:
    """'Not quite: <mistake>.' then another try (the first time) or the answer (after that)."""
    head = f"Not quite: {mistake}." if mistake else "Not quite."
    if tries == 0:
        return Verdict("retry", f"{head} {RETRY}")
    return Verdict("wrong", f"{head} {_answer_sentence(spec)}")


def _answer_sentence(spec: Mapping[str, Any]) -> str:
    """'The answer is 5.5.' ('The shape is (4, 7, 3).' for a shape)."""
    noun = "shape" if spec["kind"] == "shape" else "answer"
    return f"The {noun} is {spec['answer_text']}."


def _check_vector(spec: Mapping[str, Any], text: str, tries: int) -> Verdict:
    """Every entry within the tolerance; a wrong count is a typing problem, not a wrong answer."""
    values = _parse_numbers(text, "vector")
    if isinstance(values, Verdict):
        return values
    answer = spec["answer"]
    if len(values) != len(answer):
        count = _plural(len(answer), "number", "numbers")
        return Verdict("invalid", f"The answer has {count}; you typed {len(values)}.")
    tolerance = spec["tolerance"]
    differ = [
        i
        for i, (v, a) in enumerate(zip(values, answer, strict=True))
        if not abs(v - a) <= tolerance
    ]
    if not differ:
        return Verdict("correct", f"Right. The answer is {spec['answer_text']}.")
    return _wrong(_vector_mistake(values, answer, tolerance, differ), spec, tries)


def _vector_mistake(
    values: Sequence[float], answer: Sequence[float], tolerance: float, differ: Sequence[int]
) -> str:
    """A pattern over the whole list (signs, factor 2, order), else which entries differ."""

    def every(close: Any) -> bool:
        return all(close(v, a) for v, a in zip(values, answer, strict=True))

    if every(lambda v, a: abs(v + a) <= tolerance):
        return EVERY_SIGN_FLIPPED
    if every(lambda v, a: abs(v - 2 * a) <= tolerance):
        return EVERY_TWICE
    if every(lambda v, a: abs(v - a / 2) <= tolerance):
        return EVERY_HALF
    if all(abs(v - a) <= tolerance for v, a in zip(values, reversed(answer), strict=True)):
        return REVERSED
    flipped = all(abs(values[i] + answer[i]) <= tolerance for i in differ)
    if len(differ) == 1:
        return f"the entry at index {differ[0]} {'has the wrong sign' if flipped else 'differs'}"
    where = f"the entries at indices {_join_positions(differ)}"
    return f"{where} {'have the wrong sign' if flipped else 'differ'}"


def _check_shape(spec: Mapping[str, Any], text: str, tries: int) -> Verdict:
    """Exact axis lengths, compared as digit strings so no precision is lost in JavaScript."""
    tokens = split_entries(text, "shape")
    if isinstance(tokens, Verdict):
        return tokens
    typed: list[str] = []
    for token in tokens:
        if not _AXIS.fullmatch(token):
            message = f"{_quote(token)} is not an axis length; use whole numbers such as 4."
            return Verdict("invalid", message)
        typed.append(token.lstrip("0") or "0")
    answer = [str(n) for n in spec["answer"]]
    answer_text = spec["answer_text"]
    if len(typed) != len(answer):
        has = _plural(len(answer), "axis", "axes")
        return _wrong(f"the answer has {has}, you gave {len(typed)}", spec, tries)
    differ = [i for i, (t, a) in enumerate(zip(typed, answer, strict=True)) if t != a]
    if not differ:
        return Verdict("correct", f"Right. The shape is {answer_text}.")
    return _wrong(_shape_mistake(typed, answer, differ), spec, tries)


def _shape_mistake(typed: Sequence[str], answer: Sequence[str], differ: Sequence[int]) -> str:
    """Two axes swapped (a transpose), any reordering, an axis off by one, or which differ."""
    if len(differ) == 2:
        i, j = differ
        if typed[i] == answer[j] and typed[j] == answer[i]:
            return f"axes {i} and {j} are swapped, as in a transposed shape"
    if sorted(typed) == sorted(answer):
        return PERMUTED
    if len(differ) == 1:
        i = differ[0]
        # Digit strings, so compare lengths near 2**53 without floats: only short ones are +-1.
        if len(typed[i]) < 16 and len(answer[i]) < 16 and abs(int(typed[i]) - int(answer[i])) == 1:
            return f"axis {i} is off by one"
        return f"axis {i} differs"
    return f"axes {_join_positions(differ)} differ"


def _check_choice(spec: Mapping[str, Any], text: str, tries: int) -> Verdict:
    """The picked option, compared exactly."""
    if text == "":
        return Verdict("invalid", EMPTY_MESSAGES["choice"])
    if text not in spec["options"]:
        return Verdict("invalid", UNKNOWN_OPTION_MESSAGE)
    if text == spec["answer"]:
        return Verdict("correct", f"Right. The answer is {spec['answer_text']}.")
    return _wrong("", spec, tries)


def _check_explain(spec: Mapping[str, Any], text: str, tries: int) -> Verdict:
    """Any non-blank explanation unlocks the model answer; nothing is graded."""
    if strip_blank(text) == "":
        return Verdict("invalid", EMPTY_MESSAGES["explain"])
    return Verdict("revealed", EXPLAIN_MESSAGE)


_CHECKS = {
    "number": _check_number,
    "vector": _check_vector,
    "shape": _check_shape,
    "choice": _check_choice,
    "explain": _check_explain,
}


def check(spec: Mapping[str, Any], text: str, tries: int = 0) -> Verdict:
    """Check ``text`` against ``spec`` after ``tries`` wrong tries; bad input: a plain message."""
    problem = _too_long(text)
    if problem is None and spec["kind"] in ("number", "vector", "shape"):
        problem = _invisible(text)
    return problem if problem is not None else _CHECKS[spec["kind"]](spec, text, tries)


def answer(spec: Mapping[str, Any]) -> Verdict:
    """What "Show the answer" shows: the answer (or, to explain, a model answer follows)."""
    if spec["kind"] == "explain":
        return Verdict("revealed", MODEL_ANSWER_MESSAGE)
    return Verdict("revealed", _answer_sentence(spec))
