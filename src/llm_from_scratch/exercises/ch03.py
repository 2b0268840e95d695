"""Chapter 3's write-it-yourself grader: the gated hidden width, down to Llama's 11008.

:func:`check_gated_width` takes the reader's ``gated_width(model_width, multiple_of)``: two
thirds of the dense width 4·D, truncated to a whole number of features, then rounded *up* to a
multiple of ``multiple_of`` (the rule in Meta's Llama code). The truth is computed here in exact
integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .grading import AnswerError, call, grader, require_callable

__all__ = ["check_gated_width", "gated_width_rule"]

CASES = ((4096, 256), (5120, 256), (6656, 256), (768, 1), (4, 1), (6, 8))


def gated_width_rule(model_width: int, multiple_of: int) -> int:
    """⌈⌊2·4D/3⌋ / m⌉·m: two thirds of 4D, whole, rounded up to a multiple of m."""
    hidden = (2 * 4 * model_width) // 3
    return multiple_of * (-(-hidden // multiple_of))


@grader("Chapter 3, the gated hidden width")
def check_gated_width(gated_width: Callable[[int, int], Any]) -> str:
    """Grade ``gated_width(D, m)`` against ⌈⌊8D/3⌋ / m⌉·m on Llama's widths and small ones."""
    require_callable(gated_width, "your gated_width")
    for model_width, multiple_of in CASES:
        case = f"D = {model_width} and multiple_of = {multiple_of}"
        got = call(gated_width, model_width, multiple_of, what="your gated_width", case=case)
        want = gated_width_rule(model_width, multiple_of)
        if isinstance(got, bool) or not isinstance(got, int | float) or got != int(got):
            raise AnswerError(
                f"your gated_width returned {got!r} for {case}; a width is a whole number of "
                f"features, here {want}."
            )
        got = int(got)
        if got == want:
            continue
        two_thirds = 8 * model_width / 3
        if got == 4 * model_width:
            hint = "that is the dense width 4·D; the gated layer keeps two thirds of it"
        elif got % multiple_of == 0 and got < two_thirds:
            hint = (
                f"{got} is a multiple of {multiple_of} below ⅔·4·D = {two_thirds:.6g}: round up, "
                "not down"
            )
        elif got % multiple_of == 0 and got == multiple_of * -(
            -8 * model_width // (3 * multiple_of)
        ):
            hint = (
                f"Llama first truncates ⅔·4·D = {two_thirds:.6g} to whole features, "
                f"{8 * model_width // 3}, and only then rounds up"
            )
        elif got % multiple_of:
            hint = f"{got} is not a multiple of {multiple_of}"
        else:
            hint = f"two thirds of 4·D is {two_thirds:.6g}"
        raise AnswerError(f"for {case} your width is {got}; it should be {want} ({hint}).")
    return (
        "⌊⅔·4·D⌋ rounded up to a multiple gives Llama's 11008 for D = 4096 and every other case "
        "tried."
    )
