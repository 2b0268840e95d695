"""Chapter 3's grader: the book's solution passes; plausible wrong ones fail, and say why."""

import math

from llm_from_scratch.exercises.ch03 import CASES, check_gated_width, gated_width_rule


def gated_width(model_width, multiple_of):
    hidden = int(2 * (4 * model_width) / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def test_the_rule_gives_llamas_published_widths():
    # LLaMA 7B, 13B and 33B: model widths 4096, 5120, 6656; FFN widths 11008, 13824, 17920.
    assert [gated_width_rule(d, 256) for d in (4096, 5120, 6656)] == [11008, 13824, 17920]
    assert gated_width_rule(4, 1) == 10 and gated_width_rule(6, 8) == 16


def test_the_solution_passes():
    grade = check_gated_width(gated_width)
    assert grade.passed, grade.message
    assert all(gated_width(d, m) == gated_width_rule(d, m) for d, m in CASES)


def test_rounding_down_is_named():
    grade = check_gated_width(lambda d, m: m * (8 * d // 3 // m))
    assert grade.message == (
        "for D = 4096 and multiple_of = 256 your width is 10752; it should be 11008 (10752 is a "
        "multiple of 256 below ⅔·4·D = 10922.7: round up, not down)."
    )


def test_the_dense_width_is_named():
    assert check_gated_width(lambda d, m: 4 * d).message == (
        "for D = 4096 and multiple_of = 256 your width is 16384; it should be 11008 (that is the "
        "dense width 4·D; the gated layer keeps two thirds of it)."
    )


def test_rounding_up_before_truncating_is_named():
    assert check_gated_width(lambda d, m: m * math.ceil(8 * d / 3 / m)).message == (
        "for D = 4 and multiple_of = 1 your width is 11; it should be 10 (Llama first truncates "
        "⅔·4·D = 10.6667 to whole features, 10, and only then rounds up)."
    )


def test_a_fractional_width_is_refused():
    assert check_gated_width(lambda d, m: 8 * d / 3).message == (
        "your gated_width returned 10922.666666666666 for D = 4096 and multiple_of = 256; a width "
        "is a whole number of features, here 11008."
    )
