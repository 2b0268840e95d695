"""Chapter 8's grader: the book's top-k gate passes; plausible wrong ones are named."""

import numpy as np

from llm_from_scratch.exercises.ch08 import check_top_k_gate


def top_k_gate(probabilities, k):
    """The book's solution: a stable sort by −p, the first k, their p divided by its sum."""
    selected = np.argsort(-probabilities, axis=-1, kind="stable")[:, :k]  # (N, k)
    kept = np.take_along_axis(probabilities, selected, axis=-1)
    return selected, kept / kept.sum(axis=-1, keepdims=True)


def test_the_books_solution_passes():
    assert repr(check_top_k_gate(top_k_gate)) == (
        "Chapter 8, the top-k gate: ✓ passed. Each token keeps its k most probable experts, most "
        "probable first, with gates that are their probabilities divided by their sum."
    )


def test_the_smallest_probabilities_are_named():
    def smallest(probabilities, k):
        return top_k_gate(-probabilities, k)[0], top_k_gate(probabilities, k)[1]

    assert check_top_k_gate(smallest).message == (
        "row 0 selects expert 2 (p = 0.05) for one token, p = (0.1, 0.6, 0.05, 0.25), k = 2, "
        "but expert 1 has the larger p = 0.6 and is not selected: keep the 2 largest "
        "probabilities (sort by −p)."
    )


def test_gates_that_are_not_renormalized_are_named():
    def raw(probabilities, k):
        selected = top_k_gate(probabilities, k)[0]
        return selected, np.take_along_axis(probabilities, selected, axis=-1)

    assert check_top_k_gate(raw).message == (
        "the gates of row 0 sum to 0.85 for one token, p = (0.1, 0.6, 0.05, 0.25), k = 2; they "
        "should sum to 1: divide the k kept probabilities by their sum."
    )


def test_a_softmax_of_probabilities_is_named():
    def softmax_again(probabilities, k):
        selected = top_k_gate(probabilities, k)[0]
        kept = np.exp(np.take_along_axis(probabilities, selected, axis=-1))
        return selected, kept / kept.sum(axis=-1, keepdims=True)

    assert check_top_k_gate(softmax_again).message == (
        "your gates are a softmax of the kept probabilities for one token, p = (0.1, 0.6, 0.05, "
        "0.25), k = 2; they are already probabilities, so renormalize them by division: "
        "g_e = p_e / Σ p (kept)."
    )


def test_a_tie_broken_towards_the_higher_index_is_named():
    def unstable(probabilities, k):
        selected = np.argsort(probabilities, axis=-1)[:, ::-1][:, :k]
        kept = np.take_along_axis(probabilities, selected, axis=-1)
        return selected, kept / kept.sum(axis=-1, keepdims=True)

    assert check_top_k_gate(unstable).message == (
        "row 0 selects expert 1 but not expert 0 for three tokens, k = 2 (token 0 has a tie); "
        "both have p = 0.2, and a tie keeps the lower index (np.argsort(-p, kind='stable') "
        "does)."
    )


def test_a_wrong_return_value_and_an_unsorted_row_are_named():
    assert check_top_k_gate(lambda p, k: top_k_gate(p, k)[1]).message == (
        "top_k_gate should return a pair (selected, gates); got ndarray on one token, "
        "p = (0.1, 0.6, 0.05, 0.25), k = 2."
    )

    def ascending(probabilities, k):
        selected, gates = top_k_gate(probabilities, k)
        return selected[:, ::-1], gates[:, ::-1]

    assert check_top_k_gate(ascending).message == (
        "row 0 selects [3, 1] for one token, p = (0.1, 0.6, 0.05, 0.25), k = 2; it should list "
        "the same experts as [1, 3]: most probable first, and a tie keeps the lower index first "
        "(np.argsort(-p, kind='stable'))."
    )
