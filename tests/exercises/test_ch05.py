"""Chapter 5's grader: the book's LayerNorm VJP passes; plausible wrong ones are named."""

import numpy as np

from llm_from_scratch.exercises.ch05 import check_layer_norm_vjp


def solution(x, grad):
    """The book's solution: (g − mean(g) − x̃ (g · x̃) / D) / std(x), over the last axis."""
    mean = x.mean(axis=-1, keepdims=True)
    std = x.std(axis=-1, keepdims=True)
    pattern = (x - mean) / std  # x̃
    along = (grad * pattern).mean(axis=-1, keepdims=True)  # (g · x̃) / D
    return (grad - grad.mean(axis=-1, keepdims=True) - pattern * along) / std


def test_the_books_solution_passes():
    grade = check_layer_norm_vjp(solution)
    assert grade.passed, grade.message
    assert repr(grade) == (
        "Chapter 5, LayerNorm's VJP: ✓ passed. It sends the all-ones direction and x̃ to zero "
        "and matches central differences in every entry, for one token and for a batch."
    )


def test_a_missing_mean_subtraction_is_named():
    def no_mean(x, grad):
        std = x.std(axis=-1, keepdims=True)
        pattern = (x - x.mean(axis=-1, keepdims=True)) / std
        return (grad - pattern * (grad * pattern).mean(axis=-1, keepdims=True)) / std

    assert check_layer_norm_vjp(no_mean).message == (
        "layer_norm_vjp(x, ones)[0] is 0.604122 for a token of width 5; every entry should be 0. "
        "Adding the same constant to every coordinate of x leaves LayerNorm's output unchanged, "
        "so a gradient that pushes every output up equally reaches nothing: subtract the mean of "
        "grad over the token."
    )


def test_a_missing_pattern_term_is_named():
    def no_pattern(x, grad):
        return (grad - grad.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)

    assert check_layer_norm_vjp(no_pattern).message == (
        "layer_norm_vjp(x, x̃)[3] is 0.948905, where x̃ = (x − μ)/std(x); every entry should be "
        "0. Scaling x by a positive number leaves LayerNorm's output unchanged, so no gradient "
        "reaches the token's own direction: subtract x̃ · (grad · x̃) / D."
    )


def test_a_missing_division_by_std_is_named():
    def no_division(x, grad):
        return solution(x, grad) * x.std(axis=-1, keepdims=True)

    assert check_layer_norm_vjp(no_division).message == (
        "layer_norm_vjp(x, grad) is std(x) times the right gradient for one token of width 5 "
        "with a random grad: the projection is right, but the result must also be divided by "
        "std(x)."
    )


def test_statistics_over_the_whole_array_are_named():
    def whole_array(x, grad):
        return solution(x.reshape(1, -1), grad.reshape(1, -1)).reshape(x.shape)

    assert check_layer_norm_vjp(whole_array).message == (
        "layer_norm_vjp(x, grad) treats the whole array as one token for a batch x of shape "
        "(2, 3, 4): compute the mean, std(x) and the sums over the last axis only (axis=-1, "
        "keepdims=True), one token at a time."
    )


def test_a_wrong_shape_and_an_in_place_change_are_named():
    assert check_layer_norm_vjp(lambda x, grad: solution(x, grad)[..., :-1]).message == (
        "layer_norm_vjp(x, grad) has shape (4,) for one token of width 5 with grad = all ones; "
        "it should have x's shape (5,) (one gradient entry per input coordinate). Reduce over "
        "the last axis with keepdims=True so the statistics broadcast back."
    )

    def in_place(x, grad):
        grad -= grad.mean(axis=-1, keepdims=True)
        return solution(x, grad)

    assert check_layer_norm_vjp(in_place).message.startswith(
        "layer_norm_vjp changed its input x or grad in place on one token of width 5 with grad ="
    )


def test_the_grader_leaves_its_token_unchanged():
    from llm_from_scratch.exercises import ch05

    before = ch05.WIDE_TOKEN.copy()
    check_layer_norm_vjp(solution)
    assert np.array_equal(ch05.WIDE_TOKEN, before)
