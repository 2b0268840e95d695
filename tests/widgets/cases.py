"""One table of checker cases, shared by the Python tests and the Python-versus-JavaScript test."""

from __future__ import annotations

import random
from typing import Any

from llm_from_scratch.widgets.specs import (
    choice_spec,
    explain_spec,
    number_spec,
    shape_spec,
    vector_spec,
)

NUMBER = number_spec("What is y0?", 5.5, reason="2 * 2 + 1.5.")
SIGMOID = number_spec("sigmoid(1)?", 0.7310585786300049, reason="1 / (1 + e^-1).")
TINY = number_spec("A tiny number?", -1e-7, reason="Below the tolerance.")
COUNT = number_spec("How many parameters?", 64, reason="8 * 8.")
VECTOR = vector_spec("Softmax of [0, ln 2, ...]?", [0.5, 0.25, 0.125, 1.0], reason="Halves.")
SINGLE = vector_spec("One entry?", [2.0], reason="Just one.")
LONG = vector_spec("Eight entries?", [float(i) for i in range(8)], reason="0..7.")
SHAPE = shape_spec("Shape of y?", (4, 7, 3), reason="Linear changes the last axis.")
SCALAR = shape_spec("Shape of a sum?", (), reason="A full sum is a scalar.")
ONE_AXIS = shape_spec("Shape of b?", (4,), reason="One bias per output.")
CHOICE = choice_spec(
    "Which axis does softmax normalise?", ["rows", "columns", "both"], "columns", reason="dim=-2."
)
EXPLAIN = explain_spec("Why scale by 1/sqrt(d)?", "To keep the scores' variance near one.")

# (spec, typed text, expected status) on a first try: every status and every message path appears
# at least once. A wrong answer is "retry" here; on a second try (tries=1) it is "wrong".
CASES: list[tuple[dict[str, Any], str, str]] = [
    (NUMBER, "5.5", "correct"),
    (NUMBER, " 5.5 ", "correct"),
    (NUMBER, "5.5\n", "correct"),
    (NUMBER, "5.500000", "correct"),
    (NUMBER, "5.5000009", "correct"),
    (NUMBER, "5.500002", "retry"),
    (NUMBER, "5.51", "retry"),
    (NUMBER, "11/2", "correct"),
    (NUMBER, "+5.5", "correct"),
    (NUMBER, "55e-1", "correct"),
    (NUMBER, "\u22125.5", "retry"),
    (NUMBER, "-5.5", "retry"),
    (NUMBER, "[5.5]", "correct"),
    (NUMBER, "(5.5)", "correct"),
    (NUMBER, "5.5,", "correct"),
    (NUMBER, "5.5\u00a0", "correct"),
    (NUMBER, "abc", "invalid"),
    (NUMBER, "", "invalid"),
    (NUMBER, "   ", "invalid"),
    (NUMBER, "[]", "invalid"),
    (NUMBER, "1,,2", "invalid"),
    (NUMBER, ",5.5", "invalid"),
    (NUMBER, ",", "invalid"),
    (NUMBER, "1, 2", "invalid"),
    (NUMBER, "5,5", "correct"),  # a decimal comma
    (NUMBER, "5.5 6", "invalid"),
    (NUMBER, "nan", "invalid"),
    (NUMBER, "NaN", "invalid"),
    (NUMBER, "inf", "invalid"),
    (NUMBER, "-inf", "invalid"),
    (NUMBER, "Infinity", "invalid"),
    (NUMBER, "1e999", "invalid"),
    (NUMBER, "-1e999", "invalid"),
    (NUMBER, "1e308/1e-308", "invalid"),
    (NUMBER, "1/0", "invalid"),
    (NUMBER, "0/0", "invalid"),
    (NUMBER, "1/2/3", "invalid"),
    (NUMBER, "/2", "invalid"),
    (NUMBER, "1e", "invalid"),
    (NUMBER, "e5", "invalid"),
    (NUMBER, ".5", "retry"),
    (NUMBER, "5.", "retry"),
    (NUMBER, ".", "invalid"),
    (NUMBER, "-", "invalid"),
    (NUMBER, "0x10", "invalid"),
    (NUMBER, "1_0", "invalid"),
    (NUMBER, "5.5.5", "invalid"),
    (NUMBER, "[5.5", "invalid"),
    (NUMBER, "5.5]", "invalid"),
    (NUMBER, "([5.5)]", "invalid"),
    (NUMBER, "{5.5}", "invalid"),
    (NUMBER, "\u0665", "invalid"),
    (NUMBER, "\uff15", "invalid"),
    (NUMBER, "5.5\u2003", "correct"),  # an em space is a space
    (NUMBER, "x" * 100, "invalid"),
    (NUMBER, "\U0001f600" * 30, "invalid"),
    (NUMBER, "<b>5</b>", "invalid"),
    # what a person types and means
    (NUMBER, "11/2", "correct"),
    (NUMBER, "5,500", "invalid"),  # 5500 or 5.5? asked, never guessed
    (NUMBER, "\u20135.5", "retry"),  # en dash
    (NUMBER, "\u2014 5.5", "invalid"),
    (NUMBER, "\u22125,5", "retry"),
    (NUMBER, "0,5", "retry"),
    (NUMBER, "-0,5", "retry"),
    (NUMBER, " 5,5 ", "correct"),
    (NUMBER, "5,5,5", "invalid"),
    (NUMBER, "1,000", "invalid"),  # a thousands separator or a decimal comma: asked
    (NUMBER, "0,000", "retry"),
    (NUMBER, "5\u200b.5", "invalid"),
    (NUMBER, "\ufeff5.5", "invalid"),
    (NUMBER, "5.5\u200d", "invalid"),
    (NUMBER, "\U0001f600\u200b5", "invalid"),  # position counted in code points
    (NUMBER, "5.5\x00", "invalid"),
    (NUMBER, "5.5\u00ad", "invalid"),
    (NUMBER, "5.5\u3000", "correct"),
    (NUMBER, "\u202f5.5\u2009", "correct"),
    (NUMBER, "1" * 1999 + "x", "invalid"),
    (NUMBER, "1" * 2001, "invalid"),
    (NUMBER, "\U0001f600" * 1500, "invalid"),  # 1500 code points, 3000 UTF-16 units: allowed
    (NUMBER, "\U0001f600" * 2001, "invalid"),
    (SHAPE, "Size([4, 7, 3])", "correct"),
    (SHAPE, " torch.Size([4, 7, 3]) ", "correct"),
    (SHAPE, "torch.Size([4, 7])", "retry"),
    (SHAPE, "torch.Size[4, 7, 3]", "invalid"),
    (SHAPE, "torch.size([4, 7, 3])", "invalid"),
    (SHAPE, "(4,\u200b7, 3)", "invalid"),
    (SHAPE, "[4, 7, 3]", "correct"),
    (VECTOR, "[0.5, 0.25, 0.125, 1]\u200b", "invalid"),
    (VECTOR, "0,5 0,25 0,125 1", "invalid"),
    (VECTOR, "\u22120.5, 0.25, 0.125, 1", "retry"),
    (CHOICE, "columns\u200b", "invalid"),
    (EXPLAIN, "x" * 2001, "invalid"),
    (EXPLAIN, "why\u200b not", "revealed"),
    (SIGMOID, "0.731059", "correct"),
    (SIGMOID, "0.7310586", "correct"),
    (SIGMOID, "0.73106", "retry"),
    (SIGMOID, "0.73", "retry"),
    (TINY, "0", "correct"),
    (TINY, "-0", "correct"),
    (COUNT, "64", "correct"),
    (COUNT, "6.4e1", "correct"),
    (COUNT, "63", "retry"),
    (VECTOR, "[0.5, 0.25, 0.125, 1]", "correct"),
    (VECTOR, "0.5 0.25 0.125 1", "correct"),
    (VECTOR, "0.5,0.25,0.125,1", "correct"),
    (VECTOR, "(0.5, 0.25, 0.125, 1)", "correct"),
    (VECTOR, "[[0.5, 0.25], [0.125, 1]]", "correct"),
    (VECTOR, "[0.5, 0.25][0.125, 1]", "correct"),
    (VECTOR, "1/2 1/4 1/8 1", "correct"),
    (VECTOR, "0.5, 0.25, 0.125, 1,", "correct"),
    (VECTOR, " \t0.5 ,\n0.25 , 0.125 , 1 ", "correct"),
    (VECTOR, "[0.5, 0.25, 0.125]", "invalid"),
    (VECTOR, "[0.5, 0.25, 0.125, 1, 2]", "invalid"),
    (VECTOR, "[]", "invalid"),
    (VECTOR, "", "invalid"),
    (VECTOR, "0.5,,0.25,0.125,1", "invalid"),
    (VECTOR, ",0.5,0.25,0.125,1", "invalid"),
    (VECTOR, "0.5, 0.25, 0.125, 1,,", "invalid"),
    (VECTOR, "0.5, 0.3, 0.125, 2", "retry"),
    (VECTOR, "0.5, 0.25, 0.125, 2", "retry"),
    (VECTOR, "1 1 1 1", "retry"),
    (VECTOR, "a, b, c, d", "invalid"),
    (VECTOR, "0.5, 0.25, nan, 1", "invalid"),
    (VECTOR, "[0.5, 0.25, 0.125, 1", "invalid"),
    (VECTOR, "0.5; 0.25; 0.125; 1", "invalid"),
    (SINGLE, "2", "correct"),
    (SINGLE, "[2]", "correct"),
    (SINGLE, "2, 3", "invalid"),
    (LONG, "0 1 2 3 4 5 6 7", "correct"),
    (LONG, "1 2 3 4 5 6 7 8", "retry"),
    (LONG, "1 2 3 4 5 6 6 7", "retry"),
    (LONG, "0 1 2 3 4 5 7 8", "retry"),
    (SHAPE, "[4, 7, 3]", "correct"),
    (SHAPE, "4,7,3", "correct"),
    (SHAPE, "(4, 7, 3)", "correct"),
    (SHAPE, "4 7 3", "correct"),
    (SHAPE, "4x7x3", "correct"),
    (SHAPE, "4 \u00d7 7 \u00d7 3", "correct"),
    (SHAPE, "(4, 7, 3,)", "correct"),
    (SHAPE, "004, 7, 3", "correct"),
    (SHAPE, "torch.Size([4, 7, 3])", "correct"),
    (SHAPE, "(4, 7)", "retry"),
    (SHAPE, "(4, 7, 3, 1)", "retry"),
    (SHAPE, "(4, 3, 7)", "retry"),
    (SHAPE, "(3, 7, 4)", "retry"),
    (SHAPE, "(4, 7, 4)", "retry"),
    (SHAPE, "(1, 1, 1)", "retry"),
    (SHAPE, "[]", "retry"),
    (SHAPE, "4.0, 7, 3", "invalid"),
    (SHAPE, "-4, 7, 3", "invalid"),
    (SHAPE, "B, T, D", "invalid"),
    (SHAPE, "1e3, 7, 3", "invalid"),
    (SHAPE, "", "invalid"),
    (SHAPE, "4,,7,3", "invalid"),
    (SHAPE, "((4, 7, 3)", "invalid"),
    (SHAPE, "4, 7, 3]", "invalid"),
    (SHAPE, "99999999999999999999, 7, 3", "retry"),
    (SHAPE, "9007199254740997, 7, 3", "retry"),
    (SCALAR, "()", "correct"),
    (SCALAR, "[]", "correct"),
    (SCALAR, " ( ) ", "correct"),
    (SCALAR, "", "invalid"),
    (SCALAR, "1", "retry"),
    (SCALAR, "(,)", "invalid"),
    (ONE_AXIS, "4", "correct"),
    (ONE_AXIS, "(4,)", "correct"),
    (ONE_AXIS, "[4]", "correct"),
    (ONE_AXIS, "4,", "correct"),
    (ONE_AXIS, "(4, 1)", "retry"),
    (ONE_AXIS, "0", "retry"),
    (CHOICE, "columns", "correct"),
    (CHOICE, "rows", "retry"),
    (CHOICE, "both", "retry"),
    (CHOICE, "", "invalid"),
    (CHOICE, "Columns", "invalid"),
    (CHOICE, "columns ", "invalid"),
    (EXPLAIN, "", "invalid"),
    (EXPLAIN, "   \n\t", "invalid"),
    (EXPLAIN, "\u00a0", "invalid"),
    (EXPLAIN, "because the variance grows with d", "revealed"),
    (EXPLAIN, "\u2003", "invalid"),
]

# (spec, typed text, tries, expected message): what kind of wrong, then the answer on a second try.
MISTAKES: list[tuple[dict[str, Any], str, int, str]] = [
    (NUMBER, "-5.5", 0, "Not quite: the sign is flipped. Try again, or show the answer."),
    (NUMBER, "11", 0, "Not quite: that is twice the answer. Try again, or show the answer."),
    (NUMBER, "2.75", 0, "Not quite: that is half the answer. Try again, or show the answer."),
    (NUMBER, "6.5", 0, "Not quite. Try again, or show the answer."),  # 5.5 is no whole number
    (NUMBER, "6", 1, "Not quite. The answer is 5.5."),
    (NUMBER, "-5.5", 1, "Not quite: the sign is flipped. The answer is 5.5."),
    (NUMBER, "-5.5", 2, "Not quite: the sign is flipped. The answer is 5.5."),
    (COUNT, "65", 0, "Not quite: that is off by one. Try again, or show the answer."),
    (COUNT, "63", 1, "Not quite: that is off by one. The answer is 64."),
    (COUNT, "62", 0, "Not quite. Try again, or show the answer."),
    (SIGMOID, "-0.731059", 0, "Not quite: the sign is flipped. Try again, or show the answer."),
    (
        VECTOR,
        "-0.5 -0.25 -0.125 -1",
        0,
        "Not quite: every sign is flipped. Try again, or show the answer.",
    ),
    (
        VECTOR,
        "1 0.5 0.25 2",
        0,
        "Not quite: every entry is twice the answer's. Try again, or show the answer.",
    ),
    (
        VECTOR,
        "1/4 1/8 1/16 1/2",
        0,
        "Not quite: every entry is half the answer's. Try again, or show the answer.",
    ),
    (
        VECTOR,
        "1 0.125 0.25 0.5",
        0,
        "Not quite: the entries are in reverse order. Try again, or show the answer.",
    ),
    (
        VECTOR,
        "0.5 0.25 0.125 -1",
        0,
        "Not quite: the entry at index 3 has the wrong sign. Try again, or show the answer.",
    ),
    (
        VECTOR,
        "0.5 -0.25 0.125 -1",
        1,
        "Not quite: the entries at indices 1 and 3 have the wrong sign. "
        "The answer is [0.5, 0.25, 0.125, 1].",
    ),
    (
        VECTOR,
        "0.5 0.3 0.125 2",
        1,
        "Not quite: the entries at indices 1 and 3 differ. The answer is [0.5, 0.25, 0.125, 1].",
    ),
    (
        SHAPE,
        "4, 3, 7",
        0,
        "Not quite: axes 1 and 2 are swapped, as in a transposed shape. "
        "Try again, or show the answer.",
    ),
    (
        SHAPE,
        "3, 7, 4",
        1,
        "Not quite: axes 0 and 2 are swapped, as in a transposed shape. The shape is (4, 7, 3).",
    ),
    (
        SHAPE,
        "7, 3, 4",
        0,
        "Not quite: the axis lengths are right but in another order. "
        "Try again, or show the answer.",
    ),
    (SHAPE, "4, 7, 4", 0, "Not quite: axis 2 is off by one. Try again, or show the answer."),
    (SHAPE, "4, 7, 2", 1, "Not quite: axis 2 is off by one. The shape is (4, 7, 3)."),
    (SHAPE, "4, 7, 5", 0, "Not quite: axis 2 differs. Try again, or show the answer."),
    (SHAPE, "5, 8, 3", 0, "Not quite: axes 0 and 1 differ. Try again, or show the answer."),
    (
        SHAPE,
        "4, 7",
        0,
        "Not quite: the answer has 3 axes, you gave 2. Try again, or show the answer.",
    ),
    (SHAPE, "4, 7", 1, "Not quite: the answer has 3 axes, you gave 2. The shape is (4, 7, 3)."),
    (
        SHAPE,
        "9007199254740997, 7, 3",
        0,
        "Not quite: axis 0 differs. Try again, or show the answer.",
    ),
    (ONE_AXIS, "5", 0, "Not quite: axis 0 is off by one. Try again, or show the answer."),
    (CHOICE, "rows", 0, "Not quite. Try again, or show the answer."),
    (CHOICE, "rows", 1, "Not quite. The answer is columns."),
]

SPECS = [
    NUMBER,
    SIGMOID,
    TINY,
    COUNT,
    VECTOR,
    SINGLE,
    LONG,
    SHAPE,
    SCALAR,
    ONE_AXIS,
    CHOICE,
    EXPLAIN,
]
_ALPHABET = [
    *"0123456789012345.,,;-+eE/()[]xX ",
    "\t",
    "\n",
    "\u00a0",
    "\u2212",
    "\u00d7",
    "a",
    "n",
    "i",
    "f",
    "\u2003",
    "\u2013",
    "\u200b",
    "\ufeff",
    "\U0001f600",
    "torch.Size(",
    "rows",
]


def fuzz_cases(count: int, seed: int = 0) -> list[tuple[dict[str, Any], str]]:
    """Random typed texts over the characters the parser treats specially (seeded)."""
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 30)))
        cases.append((SPECS[i % len(SPECS)], text))
    return cases
