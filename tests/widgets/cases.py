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

# (spec, typed text, expected status): every status and every message path appears at least once.
CASES: list[tuple[dict[str, Any], str, str]] = [
    (NUMBER, "5.5", "correct"),
    (NUMBER, " 5.5 ", "correct"),
    (NUMBER, "5.5\n", "correct"),
    (NUMBER, "5.500000", "correct"),
    (NUMBER, "5.5000009", "correct"),
    (NUMBER, "5.500002", "wrong"),
    (NUMBER, "5.51", "wrong"),
    (NUMBER, "11/2", "correct"),
    (NUMBER, "+5.5", "correct"),
    (NUMBER, "55e-1", "correct"),
    (NUMBER, "\u22125.5", "wrong"),
    (NUMBER, "-5.5", "wrong"),
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
    (NUMBER, ".5", "wrong"),
    (NUMBER, "5.", "wrong"),
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
    (NUMBER, "\u20135.5", "wrong"),  # en dash
    (NUMBER, "\u2014 5.5", "invalid"),
    (NUMBER, "\u22125,5", "wrong"),
    (NUMBER, "0,5", "wrong"),
    (NUMBER, "-0,5", "wrong"),
    (NUMBER, " 5,5 ", "correct"),
    (NUMBER, "5,5,5", "invalid"),
    (NUMBER, "1,000", "invalid"),  # a thousands separator or a decimal comma: asked
    (NUMBER, "0,000", "wrong"),
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
    (SHAPE, "torch.Size([4, 7])", "wrong"),
    (SHAPE, "torch.Size[4, 7, 3]", "invalid"),
    (SHAPE, "torch.size([4, 7, 3])", "invalid"),
    (SHAPE, "(4,\u200b7, 3)", "invalid"),
    (SHAPE, "[4, 7, 3]", "correct"),
    (VECTOR, "[0.5, 0.25, 0.125, 1]\u200b", "invalid"),
    (VECTOR, "0,5 0,25 0,125 1", "invalid"),
    (VECTOR, "\u22120.5, 0.25, 0.125, 1", "wrong"),
    (CHOICE, "columns\u200b", "invalid"),
    (EXPLAIN, "x" * 2001, "invalid"),
    (EXPLAIN, "why\u200b not", "revealed"),
    (SIGMOID, "0.731059", "correct"),
    (SIGMOID, "0.7310586", "correct"),
    (SIGMOID, "0.73106", "wrong"),
    (SIGMOID, "0.73", "wrong"),
    (TINY, "0", "correct"),
    (TINY, "-0", "correct"),
    (COUNT, "64", "correct"),
    (COUNT, "6.4e1", "correct"),
    (COUNT, "63", "wrong"),
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
    (VECTOR, "0.5, 0.3, 0.125, 2", "wrong"),
    (VECTOR, "0.5, 0.25, 0.125, 2", "wrong"),
    (VECTOR, "1 1 1 1", "wrong"),
    (VECTOR, "a, b, c, d", "invalid"),
    (VECTOR, "0.5, 0.25, nan, 1", "invalid"),
    (VECTOR, "[0.5, 0.25, 0.125, 1", "invalid"),
    (VECTOR, "0.5; 0.25; 0.125; 1", "invalid"),
    (SINGLE, "2", "correct"),
    (SINGLE, "[2]", "correct"),
    (SINGLE, "2, 3", "invalid"),
    (LONG, "0 1 2 3 4 5 6 7", "correct"),
    (LONG, "1 2 3 4 5 6 7 8", "wrong"),
    (LONG, "1 2 3 4 5 6 6 7", "wrong"),
    (LONG, "0 1 2 3 4 5 7 8", "wrong"),
    (SHAPE, "[4, 7, 3]", "correct"),
    (SHAPE, "4,7,3", "correct"),
    (SHAPE, "(4, 7, 3)", "correct"),
    (SHAPE, "4 7 3", "correct"),
    (SHAPE, "4x7x3", "correct"),
    (SHAPE, "4 \u00d7 7 \u00d7 3", "correct"),
    (SHAPE, "(4, 7, 3,)", "correct"),
    (SHAPE, "004, 7, 3", "correct"),
    (SHAPE, "torch.Size([4, 7, 3])", "correct"),
    (SHAPE, "(4, 7)", "wrong"),
    (SHAPE, "(4, 7, 3, 1)", "wrong"),
    (SHAPE, "(4, 3, 7)", "wrong"),
    (SHAPE, "(3, 7, 4)", "wrong"),
    (SHAPE, "(4, 7, 4)", "wrong"),
    (SHAPE, "(1, 1, 1)", "wrong"),
    (SHAPE, "[]", "wrong"),
    (SHAPE, "4.0, 7, 3", "invalid"),
    (SHAPE, "-4, 7, 3", "invalid"),
    (SHAPE, "B, T, D", "invalid"),
    (SHAPE, "1e3, 7, 3", "invalid"),
    (SHAPE, "", "invalid"),
    (SHAPE, "4,,7,3", "invalid"),
    (SHAPE, "((4, 7, 3)", "invalid"),
    (SHAPE, "4, 7, 3]", "invalid"),
    (SHAPE, "99999999999999999999, 7, 3", "wrong"),
    (SHAPE, "9007199254740997, 7, 3", "wrong"),
    (SCALAR, "()", "correct"),
    (SCALAR, "[]", "correct"),
    (SCALAR, " ( ) ", "correct"),
    (SCALAR, "", "invalid"),
    (SCALAR, "1", "wrong"),
    (SCALAR, "(,)", "invalid"),
    (ONE_AXIS, "4", "correct"),
    (ONE_AXIS, "(4,)", "correct"),
    (ONE_AXIS, "[4]", "correct"),
    (ONE_AXIS, "4,", "correct"),
    (ONE_AXIS, "(4, 1)", "wrong"),
    (ONE_AXIS, "0", "wrong"),
    (CHOICE, "columns", "correct"),
    (CHOICE, "rows", "wrong"),
    (CHOICE, "both", "wrong"),
    (CHOICE, "", "invalid"),
    (CHOICE, "Columns", "invalid"),
    (CHOICE, "columns ", "invalid"),
    (EXPLAIN, "", "invalid"),
    (EXPLAIN, "   \n\t", "invalid"),
    (EXPLAIN, "\u00a0", "invalid"),
    (EXPLAIN, "because the variance grows with d", "revealed"),
    (EXPLAIN, "\u2003", "invalid"),
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
