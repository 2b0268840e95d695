"""Chapter 1's write-it-yourself graders: tanh's VJP registered as an op, and dL/dx by hand.

- :func:`check_tanh_op` takes the reader's forward ``tanh(x)`` and VJP ``(grad, out, x)`` (or
  the op the reader registered from them), compares the VJP with the closed form
  ``grad · (1 − tanh² x)``, registers both as an op under a private name exactly as ``@op``
  does, runs ``gradcheck`` (central differences) through the
  engine, and removes the op again, whatever happens.
- :func:`check_loss_gradient` takes the reader's hand-derived ``dL/dx`` of the running example
  ``L = tanh(x·w + b)·x`` and diffs it against the engine's ``backward`` at several points.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import OPS, Example, Op, Tensor, gradcheck
from ..errors import FromScratchError
from ..random import SplitMix64
from .grading import (
    AnswerError,
    as_array,
    call,
    compare,
    expect,
    frozen,
    grader,
    require_callable,
)

__all__ = ["check_loss_gradient", "check_tanh_op"]

EXERCISE_OP = "exercise_tanh"  # the private name the grader registers the reader's op under
_X = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])  # a negative, zero and positive input, both slopes
_GRAD = np.array([1.0, -2.0, 0.5, 3.0, 1.5])  # an upstream gradient that is not all ones


def _vjp_array(shares: Any, case: str) -> np.ndarray:
    """A one-input VJP's return value (a bare array or a one-element tuple) as an array."""
    if isinstance(shares, tuple | list) and len(shares) != 1:
        raise AnswerError(
            f"your VJP returned {len(shares)} gradients for {case}; tanh has one input, so "
            "return one array (grad times the local slope)."
        )
    share = shares[0] if isinstance(shares, tuple | list) else shares
    if not isinstance(share, np.ndarray | float | int) and share is not None:
        raise AnswerError(
            f"your VJP returned {type(share).__name__} for {case}; a VJP works on plain numpy "
            "arrays: return a numpy array (grad times the local slope), not a Tensor."
        )
    return as_array(share, "your VJP's gradient")


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape and equal within 1e-9 (the diagnoses of a wrong formula)."""
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-9, atol=1e-9))


@grader("Chapter 1, tanh's VJP")
def check_tanh_op(forward: Callable[..., Any], vjp: Callable[..., Any] | None = None) -> str:
    """Grade ``forward(x) = tanh x`` and ``vjp(grad, out, x) = grad·(1 − out²)``; gradcheck.

    ``forward`` may be an op the reader registered with ``@op`` (its VJP attached with
    ``@<op>.vjp``); then ``vjp`` is read from it.
    """
    if isinstance(forward, Op):
        expect(
            forward.backward is not None,
            f"your op {forward.name!r} has no VJP yet; attach one right below its forward with "
            f"@{forward.name}.vjp.",
        )
        forward, vjp = forward.forward, forward.backward
    require_callable(forward, "your forward")
    expect(
        vjp is not None,
        "no VJP given: pass the VJP as the second argument, check_tanh_op(forward, vjp), or "
        "pass the op you registered with @op and @<name>.vjp.",
    )
    require_callable(vjp, "your VJP")
    case = f"x = {_X.tolist()}"
    # Read-only inputs, as the engine passes them: an in-place edit raises and is named.
    out = call(forward, frozen(_X), what="your forward", case=case)
    compare(out, np.tanh(_X), what="forward(x)", case=case)
    tanh_x = np.tanh(_X)
    shares = call(vjp, frozen(_GRAD), frozen(tanh_x), frozen(_X), what="your VJP", case=case)
    got = _vjp_array(shares, case)
    want = _GRAD * (1.0 - tanh_x**2)
    if not _close(got, want):
        if _close(got, 1.0 - tanh_x**2):
            raise AnswerError(
                f"your VJP returns the local slope 1 − tanh² x but ignores grad (tried grad = "
                f"{_GRAD.tolist()}); a VJP returns grad times the slope."
            )
        if _close(got, _GRAD * (1.0 - _X**2)):
            raise AnswerError(
                "your VJP uses 1 − x², the slope written in the input; the derivative of tanh "
                "is 1 − tanh² x, and out already holds tanh x."
            )
        if _close(got, _GRAD * (1.0 - np.tanh(tanh_x) ** 2)):
            raise AnswerError(
                "your VJP applies tanh to out again; out is already tanh x, so the slope is "
                "1 − out²."
            )
        if _close(got, _GRAD * (1.0 + tanh_x**2)) or _close(got, _GRAD * (tanh_x**2 - 1.0)):
            raise AnswerError(
                "your VJP has the slope's sign wrong somewhere; d tanh/dx = 1 − tanh² x, which "
                "lies in (0, 1]."
            )
        compare(got, want, what="your VJP's gradient", case=f"{case}, grad = {_GRAD.tolist()}")
    return _gradcheck_registered(forward, vjp)


def _gradcheck_registered(forward: Callable[..., Any], vjp: Callable[..., Any]) -> str:
    """Register the reader's pair as an op, gradcheck it through the engine, unregister it."""
    previous = OPS.pop(EXERCISE_OP, None)
    try:
        try:

            def forward_of(x: np.ndarray) -> Any:  # a ufunc such as np.tanh has no plain signature
                return forward(x)

            registered = Op(
                forward_of,
                example=Example(lambda a: OPS[EXERCISE_OP](a), ((2, 3),), "elementwise"),
                name=EXERCISE_OP,
            )
            registered.vjp(vjp)
        except FromScratchError as error:
            raise AnswerError(f"the engine refused to register your op: {error}") from None
        inputs = SplitMix64(1).uniform(-2.0, 2.0, (2, 3))
        if not registered.reads_out:
            raise AnswerError(
                "your VJP names its second parameter _out, so the engine passes None there and "
                "may free the output first; name it out to read tanh x."
            )
        result = call(
            gradcheck, registered, [inputs], what="gradcheck of your op", case="a [2, 3] input"
        )
        expect(
            result.passed,
            f"registered as an op, yours fails gradcheck on a [2, 3] input: {result.message}",
        )
    finally:
        OPS.pop(EXERCISE_OP, None)
        if previous is not None:
            OPS[EXERCISE_OP] = previous
    return (
        "your VJP is grad·(1 − out²) on every entry, and registered as an op it passes gradcheck "
        "against central differences."
    )


_POINTS = ((1.5, -0.5, 0.25), (-2.0, 0.4, 1.1), (0.8, 1.25, -0.3), (0.5, 0.0, 0.0))


def _engine_grad_x(x: float, w: float, b: float) -> float:
    """dL/dx of L = tanh(x·w + b)·x from the engine's backward."""
    xt = Tensor(x, requires_grad=True)
    ((xt * Tensor(w) + Tensor(b)).tanh() * xt).backward()
    return float(xt.grad.item())


@grader("Chapter 1, dL/dx by hand")
def check_loss_gradient(grad_x: Callable[[float, float, float], Any]) -> str:
    """Grade the reader's dL/dx(x, w, b) of L = tanh(x·w + b)·x against the engine."""
    require_callable(grad_x, "your dL/dx")
    for x, w, b in _POINTS:
        case = f"x = {x:g}, w = {w:g}, b = {b:g}"
        got = as_array(call(grad_x, x, w, b, what="your dL/dx", case=case), "your dL/dx")
        expect(
            got.size == 1, f"your dL/dx returned shape {got.shape} for {case}; return one number."
        )
        value = float(got.reshape(()))
        engine = _engine_grad_x(x, w, b)
        if abs(value - engine) <= 1e-9 + 1e-9 * abs(engine):
            continue
        t = np.tanh(x * w + b)
        via_z = x * (1 - t * t) * w
        if abs(value - t) <= 1e-9:
            raise AnswerError(
                f"for {case} you give {value:.6g}, only the route through L = y·x (which sends "
                f"y = tanh z); x also reaches L through z = x·w + b. The engine gives "
                f"{engine:.6g}."
            )
        if abs(value - via_z) <= 1e-9:
            raise AnswerError(
                f"for {case} you give {value:.6g}, only the route through z = x·w + b; x is also "
                f"the second factor of L = y·x, which sends y = tanh z. The engine gives "
                f"{engine:.6g}."
            )
        raise AnswerError(f"for {case} your dL/dx is {value:.6g}; the engine gives {engine:.6g}.")
    return "your dL/dx matches the engine's backward at every point tried, w = 0 included."
