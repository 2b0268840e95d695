"""Chapter 5's exercise: LayerNorm's vector-Jacobian product, written by the reader.

The reader writes ``layer_norm_vjp(x, grad)``: the gradient that reaches a token x [..., D]
through a unit-gain LayerNorm with ε = 0, given the upstream gradient ``grad`` of the same shape.
The grader checks the two directions LayerNorm removes (the all-ones vector and the token's own
standardized pattern) and then every entry against central differences of the formula.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..random import SplitMix64
from .grading import AnswerError, as_array, call, compare, expect, grader, require_callable

__all__ = ["check_layer_norm_vjp", "layer_norm_reference", "numerical_vjp"]

WIDE_TOKEN = np.array([2.0, -1.0, 0.5, 4.0, 1.5])  # D = 5: wide enough to show every direction
STEP = 1e-6  # central-difference step
TOLERANCE = 1e-6  # central differences at this step agree with the exact VJP to about 1e-9


def layer_norm_reference(x: np.ndarray) -> np.ndarray:
    """(x − μ) / std(x) over the last axis, population variance, ε = 0: [..., D] → [..., D]."""
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True))


def numerical_vjp(x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Σ_k grad_k ∂LN(x)_k/∂x_c by central differences, one coordinate c at a time: [..., D]."""
    result = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += STEP
        down[index] -= STEP
        change = (layer_norm_reference(up) - layer_norm_reference(down)) / (2 * STEP)
        result[index] = float((grad * change).sum())
    return result


def _run(candidate: Callable[..., Any], x: np.ndarray, grad: np.ndarray, case: str) -> np.ndarray:
    """The reader's VJP on copies of x and grad, refusing a changed input or a wrong shape."""
    x_copy, grad_copy = x.copy(), grad.copy()
    got = as_array(
        call(candidate, x_copy, grad_copy, what="your layer_norm_vjp", case=case),
        "layer_norm_vjp(x, grad)",
    )
    expect(
        np.array_equal(x_copy, x) and np.array_equal(grad_copy, grad),
        f"layer_norm_vjp changed its input x or grad in place on {case}; compute the result in "
        "new arrays and leave the inputs as they were.",
    )
    if got.shape != x.shape:
        raise AnswerError(
            f"layer_norm_vjp(x, grad) has shape {got.shape} for {case}; it should have x's "
            f"shape {x.shape} (one gradient entry per input coordinate). Reduce over the last "
            "axis with keepdims=True so the statistics broadcast back."
        )
    return got


@grader("Chapter 5, LayerNorm's VJP")
def check_layer_norm_vjp(candidate: Any) -> str:
    """Grade ``layer_norm_vjp(x, grad)``: the all-ones and x̃ directions, then every entry."""
    require_callable(candidate, "your layer_norm_vjp")
    x = WIDE_TOKEN
    width = x.shape[-1]
    pattern = layer_norm_reference(x)

    ones = _run(candidate, x, np.ones(width), "one token of width 5 with grad = all ones")
    worst = int(np.argmax(np.abs(ones)))
    expect(
        np.abs(ones).max() < TOLERANCE,
        f"layer_norm_vjp(x, ones)[{worst}] is {ones[worst]:.6g} for a token of width {width}; "
        "every entry should be 0. Adding the same constant to every coordinate of x leaves "
        "LayerNorm's output unchanged, so a gradient that pushes every output up equally "
        "reaches nothing: subtract the mean of grad over the token.",
    )
    along = _run(candidate, x, pattern, "one token of width 5 with grad = x̃ (its own pattern)")
    worst = int(np.argmax(np.abs(along)))
    expect(
        np.abs(along).max() < TOLERANCE,
        f"layer_norm_vjp(x, x̃)[{worst}] is {along[worst]:.6g}, where x̃ = (x − μ)/std(x); "
        "every entry should be 0. Scaling x by a positive number leaves LayerNorm's output "
        "unchanged, so no gradient reaches the token's own direction: subtract "
        "x̃ · (grad · x̃) / D.",
    )
    rng = SplitMix64(5)
    cases = [
        (x, rng.normal((width,)), "one token of width 5 with a random grad"),
        (rng.normal((2, 3, 4)) * 3.0 + 1.0, rng.normal((2, 3, 4)), "a batch x of shape (2, 3, 4)"),
    ]
    for inputs, upstream, case in cases:
        got = _run(candidate, inputs, upstream, case)
        want = numerical_vjp(inputs, upstream)
        spread = np.sqrt(((inputs - inputs.mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1))
        expect(
            not np.allclose(got, want * spread[..., None], atol=TOLERANCE),
            f"layer_norm_vjp(x, grad) is std(x) times the right gradient for {case}: the "
            "projection is right, but the result must also be divided by std(x).",
        )
        flat = numerical_vjp(inputs.reshape(1, -1), upstream.reshape(1, -1)).reshape(got.shape)
        expect(
            inputs.ndim == 1 or not np.allclose(got, flat, atol=TOLERANCE),
            f"layer_norm_vjp(x, grad) treats the whole array as one token for {case}: compute "
            "the mean, std(x) and the sums over the last axis only (axis=-1, keepdims=True), "
            "one token at a time.",
        )
        compare(
            got,
            want,
            what="layer_norm_vjp(x, grad)",
            case=case,
            atol=TOLERANCE,
            rtol=TOLERANCE,
        )
    return (
        "It sends the all-ones direction and x̃ to zero and matches central differences in "
        "every entry, for one token and for a batch."
    )
