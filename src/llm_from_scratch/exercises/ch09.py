"""Chapter 9's grader: the reader composes a pre-norm block from its four parts.

The reader writes ``pre_norm_block(block, x)``: X₁ = X + Attention(LN₁(X)),
X₂ = X₁ + FFN(LN₂(X₁)), using ``block.attention_norm``, ``block.attention``, ``block.ffn_norm``
and ``block.ffn``. The truth is the package's own :class:`TransformerBlock` on the same weights,
forward and backward. Blocks are built by the grader from its own generator, with nonzero gains
and biases, so a norm used twice or a residual left out shows up; the package is left untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.nn import TransformerBlock
from llm_from_scratch.random import SplitMix64

from .grading import AnswerError, as_array, call, compare, expect, grader, require_callable

# (B, T, D), heads, FFN width, norm, FFN kind: small, batched, and RMSNorm with SwiGLU.
CASES = (
    ((1, 2, 4), 2, 16, "layer", "gelu"),
    ((2, 4, 8), 2, 16, "layer", "gelu"),
    ((2, 3, 8), 4, 12, "rms", "swiglu"),
)


def _case_name(shape: tuple[int, ...], heads: int, norm: str, ffn: str) -> str:
    """The case as the messages name it."""
    return f"X of shape {list(shape)}, {heads} heads, {norm} norm, {ffn} FFN"


def _blocks() -> list[tuple[str, TransformerBlock, np.ndarray]]:
    """The grader's blocks (every parameter nonzero and distinct) and inputs, from seed 909."""
    rng = SplitMix64(909)
    built = []
    for shape, heads, hidden, norm, ffn in CASES:
        block = TransformerBlock(shape[2], heads, hidden, norm=norm, ffn=ffn, rng=rng)
        block.load_state_dict(
            {n: v + 0.3 * rng.normal(v.shape) for n, v in block.state_dict().items()}
        )
        built.append((_case_name(shape, heads, norm, ffn), block, rng.normal(shape)))
    return built


def _wirings(block: TransformerBlock, x: Tensor) -> dict[str, np.ndarray]:
    """Plausible wrong wirings, each with the plain-words fix the message gives."""
    ln1, att, ln2, ffn = block.attention_norm, block.attention, block.ffn_norm, block.ffn

    def attend(v: Tensor) -> Tensor:
        return att(v)[0]

    x1 = x + attend(ln1(x))
    wrong = {
        "this is the post-norm order: normalize what each branch reads, LN₁(X) and LN₂(X₁), "
        "and add the branch to the raw stream": block.with_order("post")(x)[0],
        "the attention branch is not added back: X₁ = X + Attention(LN₁(X)), keep the X": (
            attend(ln1(x)) + ffn(ln2(attend(ln1(x))))
        ),
        "the FFN branch is not added back: X₂ = X₁ + FFN(LN₂(X₁)), keep the X₁": ffn(ln2(x1)),
        "the FFN reads LN₂(X), the block's input; it should read LN₂(X₁), the stream after "
        "attention was added": x1 + ffn(ln2(x)),
        "the two norms are swapped: attention reads block.attention_norm, the FFN reads "
        "block.ffn_norm": (x + attend(ln2(x))) + ffn(ln1(x + attend(ln2(x)))),
        "one norm is used for both branches: the FFN should read block.ffn_norm, not "
        "block.attention_norm": x1 + ffn(ln1(x1)),
    }
    return {fix: out.value for fix, out in wrong.items()}


def _grad(t: Tensor) -> np.ndarray:
    """A leaf's gradient, zeros where backward never reached it."""
    return np.zeros(t.shape) if t.grad is None else np.array(t.grad, dtype=float)


@grader("Chapter 9 exercise: a pre-norm block from its parts")
def grade_pre_norm_block(candidate: Callable[[TransformerBlock, Any], Any]) -> str:
    """Pass when candidate(block, x) equals block(x)[0] in value and in every gradient."""
    require_callable(candidate, "your pre_norm_block")
    for case, block, x_value in _blocks():
        before = {n: v.copy() for n, v in block.state_dict().items()}
        x = Tensor(x_value, requires_grad=True)
        try:
            got = call(candidate, block, x, what="your pre_norm_block", case=case)
        except AnswerError as failure:
            if "got (Tensor(" in str(failure):  # a (output, weights) pair used as a tensor
                raise AnswerError(
                    f"your pre_norm_block used the pair (output, weights) that block.attention "
                    f"returns as if it were a Tensor, for {case}; add only its [0] to X."
                ) from None
            raise
        expect(
            not isinstance(got, tuple),
            f"your pre_norm_block returned a tuple for {case}; return only X₂. (Attention "
            "returns (output, weights): take its [0] before adding it to X.)",
        )
        after = block.state_dict()
        for name, value in before.items():
            expect(
                np.array_equal(after[name], value),
                f"your pre_norm_block changed the parameter {name} for {case}; read the "
                "parameters, never assign to them.",
            )
        want = block(Tensor(x_value))[0].value
        got_value = as_array(got, "your block's output")
        if got_value.shape == want.shape and not np.allclose(got_value, want, atol=1e-9):
            for fix, wrong in _wirings(block, Tensor(x_value)).items():
                expect(not np.allclose(got_value, wrong, atol=1e-9), f"For {case}, {fix}.")
        compare(got_value, want, what="your block's output", case=case)
        expect(
            isinstance(got, Tensor) and got.requires_grad,
            f"your block's output is right for {case} but carries no gradient: compute it "
            "with the modules on Tensors, not on numpy arrays (.value), so backward can reach "
            "the weights.",
        )
        upstream = np.cos(np.arange(got_value.size, dtype=float)).reshape(got_value.shape)
        block.zero_grad()
        try:
            got.backward(upstream)
        except Exception as error:  # the reader's graph may be broken in any way
            raise AnswerError(
                f"backward through your block failed for {case}: {type(error).__name__}: {error}"
            ) from None
        got_grads = {n: _grad(p) for n, p in block.named_parameters()}
        got_dx = _grad(x)
        block.zero_grad()
        x_ref = Tensor(x_value, requires_grad=True)
        block(x_ref)[0].backward(upstream)
        for name, parameter in block.named_parameters():
            compare(got_grads[name], parameter.grad, what=f"the gradient of {name}", case=case)
        compare(got_dx, x_ref.grad, what="the gradient of X", case=case)
        block.zero_grad()
    return (
        f"your block matches TransformerBlock on all {len(CASES)} cases, its output and "
        "the gradient of every weight and of X."
    )
