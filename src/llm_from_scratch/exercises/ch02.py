"""Chapter 2's write-it-yourself grader: a Linear layer's backward pass (dX, dW, db) by hand.

:func:`check_linear_backward` takes the reader's ``backward(X, W, G) -> (dX, dW, db)`` for
``Y = X W + b`` and compares each gradient with what the package's own ``Linear`` layer gets from
the engine's ``backward(seed=G)``, on a single position, on the chapter's [1, 2, 2] input and on a
batch with several leading axes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..nn import Linear
from ..random import SplitMix64
from .grading import AnswerError, as_array, call, compare, grader, require_callable

__all__ = ["check_linear_backward"]


def _cases() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, X, W, G): the chapter's two positions, a [2, 3] batch, then a single vector."""
    rng = SplitMix64(2)
    weight = np.array([[1.0, 0.0, -1.0], [2.0, 0.5, 1.0]])
    return [
        (
            "X of shape (1, 2, 2)",
            np.array([[[1.0, 2.0], [-1.0, 3.0]]]),
            weight,
            np.array([[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]]),
        ),
        (
            "X of shape (2, 3, 4) with W of shape (4, 5)",
            rng.uniform(-1.0, 1.0, (2, 3, 4)),
            rng.uniform(-1.0, 1.0, (4, 5)),
            rng.uniform(-1.0, 1.0, (2, 3, 5)),
        ),
        (VECTOR_CASE, np.array([1.0, 2.0]), weight, np.array([1.0, 0.0, -1.0])),
    ]


VECTOR_CASE = "a single vector X of shape (2,)"
LEADING_HINT = (
    " X has leading axes (batch, positions): flatten them into rows first, "
    "X.reshape(-1, X.shape[-1]), and G likewise."
)
VECTOR_HINT = (
    " A vector has no leading axes: treat it as one row (X.reshape(1, -1)) and give dX the "
    "vector's own shape."
)


def _engine(x: np.ndarray, weight: np.ndarray, upstream: np.ndarray) -> tuple[np.ndarray, ...]:
    """dX, dW, db of the package's Linear layer for upstream gradient G, from backward()."""
    layer = Linear.from_parameters(weight, np.linspace(-0.5, 0.5, weight.shape[1]))
    inputs = Tensor(x, requires_grad=True)
    layer(inputs).backward(seed=upstream)
    return inputs.grad, layer.weight.grad, layer.bias.grad


@grader("Chapter 2, a Linear layer's backward")
def check_linear_backward(backward: Callable[..., Any]) -> str:
    """Grade ``backward(X, W, G) -> (dX, dW, db)`` of Y = XW + b against the package's Linear."""
    require_callable(backward, "your backward")
    for case, x, weight, upstream in _cases():
        try:
            _check_case(backward, case, x, weight, upstream)
        except AnswerError as failure:
            if case == VECTOR_CASE:
                raise AnswerError(f"{failure}{VECTOR_HINT}") from None
            if str(failure).startswith("your backward raised"):
                raise AnswerError(f"{failure}{LEADING_HINT}") from None
            raise
    return (
        "dX = G Wᵀ, dW = Σ Xᵀ G and db = Σ G match the engine on two positions, a [2, 3] batch "
        "and a single vector."
    )


def _check_case(
    backward: Callable[..., Any],
    case: str,
    x: np.ndarray,
    weight: np.ndarray,
    upstream: np.ndarray,
) -> None:
    """Fail at the first gradient of ``backward`` that differs from the layer's on one case."""
    got = call(backward, x.copy(), weight.copy(), upstream.copy(), what="your backward", case=case)
    if not isinstance(got, tuple | list) or len(got) != 3:
        raise AnswerError(
            f"your backward should return three arrays (dX, dW, db) for {case}; got "
            f"{len(got) if isinstance(got, tuple | list) else type(got).__name__}."
        )
    dx, dw, db = (as_array(g, name) for g, name in zip(got, ("dX", "dW", "db"), strict=True))
    want_dx, want_dw, want_db = _engine(x, weight, upstream)
    if dw.shape == want_dw.shape[::-1] and dw.shape != want_dw.shape:
        raise AnswerError(
            f"dW has shape {dw.shape} for {case}, the shape of Wᵀ; a gradient has its "
            f"parameter's shape {want_dw.shape}: sum Xᵀ G over positions, not Gᵀ X."
        )
    if db.shape == upstream.shape and upstream.ndim > 1:
        raise AnswerError(
            f"db has shape {db.shape} for {case}, one row per position; the bias is shared by "
            f"every position, so its gradient sums G over all leading axes, shape "
            f"{want_db.shape}."
        )
    positions = max(1, upstream.size // upstream.shape[-1])
    if positions > 1 and db.shape == want_db.shape and np.allclose(db, want_db / positions):
        raise AnswerError(
            f"db is the mean of G over the {positions} positions for {case}; a shared "
            "parameter receives the sum of their gradients, not the average."
        )
    compare(dx, want_dx, what="dX", case=case)
    compare(dw, want_dw, what="dW", case=case)
    compare(db, want_db, what="db", case=case)
