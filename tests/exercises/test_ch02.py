"""Chapter 2's grader: the book's solution passes; plausible wrong ones fail, and say why."""

import numpy as np

from llm_from_scratch.exercises.ch02 import check_linear_backward


def backward(X, W, G):
    dX = G @ W.T
    X2, G2 = X.reshape(-1, X.shape[-1]), G.reshape(-1, G.shape[-1])
    return dX, X2.T @ G2, G2.sum(axis=0)


def test_the_solution_passes():
    grade = check_linear_backward(backward)
    assert grade.passed, grade.message


def test_a_transposed_weight_gradient_is_named():
    def transposed(X, W, G):
        dX, dW, db = backward(X, W, G)
        return dX, dW.T, db

    assert check_linear_backward(transposed).message == (
        "dW has shape (3, 2) for X of shape (1, 2, 2), the shape of Wᵀ; a gradient has its "
        "parameter's shape (2, 3): sum Xᵀ G over positions, not Gᵀ X."
    )


def test_a_bias_gradient_kept_per_position_is_named():
    def per_position(X, W, G):
        dX, dW, _ = backward(X, W, G)
        return dX, dW, G

    assert check_linear_backward(per_position).message == (
        "db has shape (1, 2, 3) for X of shape (1, 2, 2), one row per position; the bias is "
        "shared by every position, so its gradient sums G over all leading axes, shape (3,)."
    )


def test_an_averaged_bias_gradient_is_named():
    def averaged(X, W, G):
        dX, dW, _ = backward(X, W, G)
        return dX, dW, G.reshape(-1, G.shape[-1]).mean(axis=0)

    assert check_linear_backward(averaged).message == (
        "db is the mean of G over the 2 positions for X of shape (1, 2, 2); a shared parameter "
        "receives the sum of their gradients, not the average."
    )


def test_a_weight_gradient_that_pairs_the_wrong_positions_names_the_entry():
    def mispaired(X, W, G):
        dX, _, db = backward(X, W, G)
        X2, G2 = X.reshape(-1, X.shape[-1]), G.reshape(-1, G.shape[-1])
        return dX, X2.T @ G2[::-1], db  # position p's input times another position's gradient

    assert check_linear_backward(mispaired).message == (
        "dW[0, 1] is 2 for X of shape (1, 2, 2); it should be -2."
    )


def test_the_wrong_number_of_gradients_is_named():
    assert check_linear_backward(lambda X, W, G: (G @ W.T, X)).message == (
        "your backward should return three arrays (dX, dW, db) for X of shape (1, 2, 2); got 2."
    )


def test_the_textbook_two_axis_formulas_get_the_flattening_hint():
    grade = check_linear_backward(lambda X, W, G: (G @ W.T, X.T @ G, G.sum(axis=0)))
    assert grade.message.startswith("your backward raised ValueError on X of shape (1, 2, 2):")
    assert grade.message.endswith(
        "X has leading axes (batch, positions): flatten them into rows first, "
        "X.reshape(-1, X.shape[-1]), and G likewise."
    )


def test_a_vector_case_failure_gets_the_vector_hint():
    def rows_only(X, W, G):
        if X.ndim == 1:
            return G @ W.T, np.outer(X, G), G.sum()
        return backward(X, W, G)

    assert check_linear_backward(rows_only).message == (
        "db has shape () for a single vector X of shape (2,); it should have shape (3,). A vector "
        "has no leading axes: treat it as one row (X.reshape(1, -1)) and give dX the vector's own "
        "shape."
    )
