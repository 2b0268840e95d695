"""Chapter 6's graders: the book's head split and causal mask pass; wrong ones are named."""

import numpy as np

from llm_from_scratch.exercises.ch06 import check_causal_mask, check_split_heads


def split_heads(x, num_heads):
    """The book's solution: [B, T, D] → [B, T, H, d_h] → [B, H, T, d_h]."""
    batch, tokens, width = x.shape
    return x.reshape(batch, tokens, num_heads, width // num_heads).transpose(0, 2, 1, 3)


def causal_mask(tokens):
    """The book's solution: True above the diagonal, where key j comes after query i."""
    return np.triu(np.ones((tokens, tokens), dtype=bool), k=1)


def test_the_books_solutions_pass():
    assert repr(check_split_heads(split_heads)) == (
        "Chapter 6, the head split: ✓ passed. Every head of every token holds its own slice of "
        "the token's row, on three shapes."
    )
    assert repr(check_causal_mask(causal_mask)) == (
        "Chapter 6, the causal mask: ✓ passed. True exactly where a key comes after its query, "
        "for T = 4, 1 and 6."
    )


def test_a_split_without_the_axis_swap_is_named():
    def no_swap(x, num_heads):
        batch, tokens, width = x.shape
        return x.reshape(batch, tokens, num_heads, width // num_heads)

    assert check_split_heads(no_swap).message == (
        "split_heads(x, num_heads) has shape (2, 3, 4, 2) for x of shape (2, 3, 8) with "
        "num_heads = 4, that is [B, T, H, d_h]: the token's row is split into heads, but the "
        "head axis must come before the token axis, [B, H, T, d_h] = (2, 4, 3, 2). Swap axes 1 "
        "and 2 (transpose(0, 2, 1, 3))."
    )


def test_a_straight_reshape_is_named():
    def straight(x, num_heads):
        batch, tokens, width = x.shape
        return x.reshape(batch, num_heads, tokens, width // num_heads)

    assert check_split_heads(straight).message == (
        "split_heads(x, num_heads)[0, 0, 1] is [2.0, 3.0] for x of shape (2, 3, 8) with "
        "num_heads = 4; head 0 of token 1 should hold coordinates 0 … 1 of that token, "
        "x[0, 1, 0:2] = [8.0, 9.0]. You reshaped straight to [B, H, T, d_h]; a reshape keeps "
        "the memory order, so it cuts the sequence's rows into H runs instead of cutting each "
        "token's row into H slices. Reshape to [B, T, H, d_h] first, then swap axes 1 and 2."
    )


def test_strided_heads_are_named():
    def strided(x, num_heads):
        batch, tokens, width = x.shape
        return x.reshape(batch, tokens, width // num_heads, num_heads).transpose(0, 3, 1, 2)

    assert check_split_heads(strided).message == (
        "split_heads(x, num_heads)[0, 0, 0] is [0.0, 4.0] for x of shape (2, 3, 8) with "
        "num_heads = 4; head 0 of token 0 should hold coordinates 0 … 1 of that token, "
        "x[0, 0, 0:2] = [0.0, 1.0]."
    )


def test_a_mask_that_blocks_the_diagonal_is_named():
    def blocks_self(tokens):
        return np.triu(np.ones((tokens, tokens), dtype=bool), k=0)

    assert check_causal_mask(blocks_self).message == (
        "causal_mask(4)[0, 0] is True; it should be False: query 0 must see its own key: a "
        "causal mask lets each token attend to itself and to every earlier token, and blocks "
        "only keys j > i (np.triu with k=1, not k=0)."
    )


def test_a_transposed_mask_is_named():
    def transposed(tokens):
        return np.tril(np.ones((tokens, tokens), dtype=bool), k=-1)

    assert check_causal_mask(transposed).message == (
        "causal_mask(4)[0, 1] is False; it should be True: query 0 can see key 1, which comes "
        "after it; block every key j > i."
    )


def test_the_opposite_convention_and_a_float_mask_are_named():
    assert check_causal_mask(lambda tokens: ~causal_mask(tokens)).message == (
        "causal_mask(4) is True where attention is allowed and False where it is blocked: this "
        "book's mask marks the *blocked* entries True. Return its negation."
    )
    assert check_causal_mask(lambda tokens: causal_mask(tokens).astype(float)).message == (
        "causal_mask(4) has dtype float64; it should be a boolean array (True = blocked), e.g. "
        "built with np.triu(np.ones((T, T), dtype=bool), k=1)."
    )


def test_a_ragged_none_or_tensor_mask_gets_a_plain_message():
    from llm_from_scratch.autodiff import Tensor

    ragged = check_causal_mask(lambda T: [[j > i for j in range(i + 1, T)] for i in range(T)])
    assert ragged.message == (
        "causal_mask(4) has rows of different lengths; it should be a [T, T] array, one row per "
        "query and one column per key."
    )
    assert check_causal_mask(lambda T: None).message == (
        "causal_mask(4) is None: the function returns nothing."
    )
    tensor = check_causal_mask(lambda T: Tensor(np.triu(np.ones((T, T)), k=1)))
    assert tensor.message == (
        "causal_mask(4) is Tensor; return a plain numpy boolean array (a mask is a constant, not "
        "a Tensor)."
    )
