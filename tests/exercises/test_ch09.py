"""Chapter 9's grader: the book's pre-norm block passes; plausible wrong wirings are named."""

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.exercises.ch09 import grade_pre_norm_block


def solution(block, x):
    """The book's solution: X₁ = X + Attention(LN₁(X)), X₂ = X₁ + FFN(LN₂(X₁))."""
    x1 = x + block.attention(block.attention_norm(x))[0]
    return x1 + block.ffn(block.ffn_norm(x1))


def test_the_books_solution_passes():
    grade = grade_pre_norm_block(solution)
    assert grade.passed, grade.message
    assert grade.message == (
        "your block matches TransformerBlock on all 3 cases, its output and the gradient of "
        "every weight and of X."
    )


def test_the_post_norm_order_is_named():
    def post_norm(block, x):
        x1 = block.attention_norm(x + block.attention(x)[0])
        return block.ffn_norm(x1 + block.ffn(x1))

    assert grade_pre_norm_block(post_norm).message == (
        "For X of shape [1, 2, 4], 2 heads, layer norm, gelu FFN, this is the post-norm order: "
        "normalize what each branch reads, LN₁(X) and LN₂(X₁), and add the branch to the raw "
        "stream."
    )


def test_a_missing_residual_is_named():
    def no_ffn_residual(block, x):
        x1 = x + block.attention(block.attention_norm(x))[0]
        return block.ffn(block.ffn_norm(x1))

    assert grade_pre_norm_block(no_ffn_residual).message == (
        "For X of shape [1, 2, 4], 2 heads, layer norm, gelu FFN, the FFN branch is not added "
        "back: X₂ = X₁ + FFN(LN₂(X₁)), keep the X₁."
    )


def test_one_norm_for_both_branches_is_named():
    def one_norm(block, x):
        x1 = x + block.attention(block.attention_norm(x))[0]
        return x1 + block.ffn(block.attention_norm(x1))

    assert grade_pre_norm_block(one_norm).message.endswith(
        "one norm is used for both branches: the FFN should read block.ffn_norm, not "
        "block.attention_norm."
    )


def test_forgetting_to_unpack_attention_is_explained():
    def unpacked(block, x):
        x1 = x + block.attention(block.attention_norm(x))
        return x1 + block.ffn(block.ffn_norm(x1))

    assert grade_pre_norm_block(unpacked).message == (
        "your pre_norm_block used the pair (output, weights) that block.attention returns as "
        "if it were a Tensor, for X of shape [1, 2, 4], 2 heads, layer norm, gelu FFN; add "
        "only its [0] to X."
    )


def test_a_numpy_detour_loses_the_gradient():
    def detached(block, x):
        return Tensor(solution(block, x).value)

    assert grade_pre_norm_block(detached).message == (
        "your block's output is right for X of shape [1, 2, 4], 2 heads, layer norm, gelu FFN "
        "but carries no gradient: compute it with the modules on Tensors, not on numpy arrays "
        "(.value), so backward can reach the weights."
    )


def test_the_grader_leaves_a_block_it_is_given_alone():
    def assigns(block, x):
        block.ffn.up.weight.value[...] = 0.0
        return solution(block, x)

    assert grade_pre_norm_block(assigns).message == (
        "your pre_norm_block changed the parameter block.ffn.up.weight for X of shape "
        "[1, 2, 4], 2 heads, layer norm, gelu FFN; read the parameters, never assign to them."
    )
