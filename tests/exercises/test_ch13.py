"""Chapter 13's grader: the reader's Llama-family parameter count."""

from llm_from_scratch.exercises.ch13 import CASES, check_llama_parameters, declared_count


def solution(V, D, L, H, G, dh, F, tied):
    per_layer = 2 * D * H * dh + 2 * D * G * dh + 3 * D * F + 2 * D
    return V * D * (1 if tied else 2) + L * per_layer + D


def test_declared_count_against_published_numbers():
    assert declared_count(*CASES[0]) == 134_515_008  # SmolLM2-135M
    assert declared_count(*CASES[1]) == 8_030_261_248  # Llama 3.1 8B
    # Qwen3-0.6B's 596,049,920 less its QK-norm gains (two of d_h = 128 per layer)
    assert declared_count(*CASES[2]) == 596_049_920 - 28 * 2 * 128


def test_the_solution_passes():
    grade = check_llama_parameters(solution)
    assert grade.passed, grade.message


def test_full_width_keys_and_values_named():
    def wrong(V, D, L, H, G, dh, F, tied):
        return solution(V, D, L, H, H, dh, F, tied)

    grade = check_llama_parameters(wrong)
    assert not grade.passed
    assert "134,515,008" in grade.message and "they have G" in grade.message


def test_tied_head_counted_twice_named():
    def wrong(V, D, L, H, G, dh, F, tied):
        return solution(V, D, L, H, G, dh, F, False)

    grade = check_llama_parameters(wrong)
    assert not grade.passed and "count it once" in grade.message


def test_norms_forgotten_named():
    def wrong(V, D, L, H, G, dh, F, tied):
        return solution(V, D, L, H, G, dh, F, tied) - (2 * L + 1) * D

    grade = check_llama_parameters(wrong)
    assert not grade.passed and "RMSNorm gains" in grade.message


def test_head_width_from_d_over_h_named():
    def wrong(V, D, L, H, G, dh, F, tied):
        return solution(V, D, L, H, G, D // H, F, tied)

    grade = check_llama_parameters(wrong)
    assert not grade.passed and "head_dim" in grade.message and "Qwen3" in grade.message


def test_not_a_function_and_a_float_and_a_crash():
    assert "itself" in check_llama_parameters(5).message
    grade = check_llama_parameters(lambda *a: float(solution(*a)))
    assert not grade.passed and "whole number" in grade.message
    grade = check_llama_parameters(lambda *a: 1 / 0)
    assert not grade.passed and "ZeroDivisionError" in grade.message
