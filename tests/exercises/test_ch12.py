"""Chapter 12's grader: the reader's key/value head of each query head."""

import numpy as np

from llm_from_scratch.exercises.ch12 import check_kv_head_of, kv_heads_by_rule


def solution(num_heads, num_kv_heads):
    return np.arange(num_heads) // (num_heads // num_kv_heads)


def test_the_rule_against_hand_written_groupings():
    assert kv_heads_by_rule(8, 2).tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert kv_heads_by_rule(6, 3).tolist() == [0, 0, 1, 1, 2, 2]
    assert kv_heads_by_rule(4, 4).tolist() == [0, 1, 2, 3]
    assert kv_heads_by_rule(4, 1).tolist() == [0, 0, 0, 0]


def test_the_solution_passes():
    grade = check_kv_head_of(solution)
    assert grade.passed, grade.message
    assert grade.message == (
        "Every query head reads the key/value head the layer gives it, on five head counts."
    )


def test_a_list_of_ints_passes_too():
    grade = check_kv_head_of(lambda h, g: [i // (h // g) for i in range(h)])
    assert grade.passed, grade.message


def test_interleaved_heads_are_named():
    grade = check_kv_head_of(lambda h, g: np.arange(h) % g)
    assert not grade.passed
    assert grade.message == (
        "kv_head_of(8, 2)[1] is 1 for H = 8, G = 2; query head 1 reads key/value head 0. You "
        "interleaved the heads (h mod G): the layer splits the H query heads into G consecutive "
        "runs of H / G = 4, so heads 0 … 3 share key/value head 0. Divide instead: h // (H // G)."
    )


def test_dividing_by_g_is_named():
    grade = check_kv_head_of(lambda h, g: np.arange(h) // g)
    assert not grade.passed
    assert grade.message == (
        "kv_head_of(8, 2)[2] is 1 for H = 8, G = 2; query head 2 reads key/value head 0. You "
        "divided by G; each key/value head serves H / G = 4 query heads, so divide by the "
        "group size: h // (H // G)."
    )


def test_one_entry_per_key_value_head_is_the_wrong_shape():
    grade = check_kv_head_of(lambda h, g: np.arange(g))
    assert grade.message == (
        "kv_head_of(8, 2) has shape (2,) for H = 8, G = 2; it should hold one key/value head "
        "per query head, shape (8,)."
    )


def test_fractional_heads_and_errors_and_results_are_named():
    assert check_kv_head_of(lambda h, g: np.arange(h) / (h / g)).message == (
        "kv_head_of(8, 2) holds float64 values for H = 8, G = 2; each entry is a head index, "
        "a whole number."
    )
    grade = check_kv_head_of(lambda h, g: np.arange(h) // (h // (g - 2)))
    assert not grade.passed
    assert grade.message.startswith("your kv_head_of raised ZeroDivisionError on H = 8, G = 2:")
    assert check_kv_head_of(solution(8, 2)).message == (
        "pass your kv_head_of itself (the function, without calling it); got a ndarray."
    )
