"""Chapter 11's grader: the book's temperature-and-top-k rule passes; the usual slips are named."""

import numpy as np

from llm_from_scratch.exercises.ch11 import grade_top_k_probabilities


def solution(logits, k, temperature):
    """The book's solution: divide by τ, keep the k largest (ties: lower index), softmax."""
    z = logits / temperature
    order = np.argsort(-z, axis=1, kind="stable")[:, :k]  # (B, k): ties keep the lower index
    kept = np.full_like(z, -np.inf)
    np.put_along_axis(kept, order, np.take_along_axis(z, order, axis=1), axis=1)
    e = np.exp(kept - kept.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_the_books_solution_passes():
    grade = grade_top_k_probabilities(solution)
    assert grade.passed, grade.message
    assert grade.message == (
        "your probabilities match the package's temperature and top-k on all 6 cases, ties "
        "and huge scores included."
    )


def test_multiplying_by_the_temperature_is_named():
    def times_tau(logits, k, temperature):
        return solution(logits * temperature**2, k, temperature)  # z · τ

    assert grade_top_k_probabilities(times_tau).message == (
        "For six scores, k = 2, τ = 0.5, the scores are multiplied by τ; temperature divides "
        "them, z / τ."
    )


def test_forgetting_to_renormalise_is_named():
    def unnormalised(logits, k, temperature):
        z = logits / temperature
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return np.where(solution(logits, k, temperature) > 0, p, 0.0)

    assert grade_top_k_probabilities(unnormalised).message == (
        "For six scores, k = 3, τ = 1, the kept probabilities are not renormalised: after "
        "zeroing the others, divide the kept ones by their sum (or take the softmax over the "
        "kept scores only)."
    )


def test_keeping_every_tied_token_is_named():
    def all_ties(logits, k, temperature):
        z = logits / temperature
        kth = np.sort(z, axis=1)[:, ::-1][:, min(k, z.shape[1]) - 1 : min(k, z.shape[1])]
        kept = np.where(z >= kth, z, -np.inf)
        e = np.exp(kept - kept.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    assert grade_top_k_probabilities(all_ties).message == (
        "For tied scores [1, 3, 3, 0, 3], k = 2, τ = 1, every token tied with the k-th is "
        "kept; keep exactly k, ties to the lower index."
    )


def test_a_softmax_without_its_shift_is_named():
    def unshifted(logits, k, temperature):
        z = logits / temperature
        order = np.argsort(-z, axis=1, kind="stable")[:, :k]
        kept = np.full_like(z, -np.inf)
        np.put_along_axis(kept, order, np.take_along_axis(z, order, axis=1), axis=1)
        e = np.exp(kept)
        return e / e.sum(axis=1, keepdims=True)

    assert grade_top_k_probabilities(unshifted).message == (
        "For huge scores [1000, 999, 0], k = 2, τ = 1, exp overflows: subtract each row's "
        "largest kept score before exp (softmax does not change when a constant is added to a "
        "row)."
    )


def test_returning_filtered_logits_is_explained():
    def logits_only(logits, k, temperature):
        p = solution(logits, k, temperature)
        return np.where(p > 0, logits / temperature, 0.0)

    assert grade_top_k_probabilities(logits_only).message == (
        "For six scores, k = 3, τ = 1, the rows of your probabilities sum to [3.5]; each row "
        "should sum to 1 (return probabilities, not filtered logits)."
    )


def test_a_wrong_shape_is_named():
    def one_row(logits, k, temperature):
        return solution(logits, k, temperature)[0]

    assert grade_top_k_probabilities(one_row).message == (
        "your probabilities has shape (6,) for six scores, k = 3, τ = 1; it should have shape "
        "(1, 6)."
    )
