"""Reductions: sum (mean is sum scaled by the count) and the softmax family over one axis."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import ArgumentError
from ...validate import as_axes, as_axis, as_flag
from ..registry import Example, op
from ..tensor import Tensor


@op(
    example=Example(lambda a: sum(a, axis=1, keepdims=False), ((2, 3),), "over axis 1"),
)
def sum(x, axis, keepdims):  # the op shares its name with Tensor.sum
    """Σ over ``axis`` (all axes when None)"""
    return np.sum(x, axis=axis, keepdims=keepdims)


@sum.checks
def _(x, axis, keepdims):
    return {"axis": as_axes(axis, x.ndim, "sum's axis"), "keepdims": as_flag(keepdims, "keepdims")}


@sum.vjp
def _(grad, _out, _x, axis, keepdims):
    if axis is not None and not keepdims:
        grad = np.expand_dims(grad, axis)
    return np.broadcast_to(grad, _x.shape)


def mean(x, axis=None, keepdims=False):
    """Σ / count over ``axis``: a composition of sum and a constant scale."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    shape = x.shape
    axes = as_axes(axis, x.ndim, "mean's axis")
    count = math.prod(shape[a] for a in (range(len(shape)) if axes is None else axes))
    return sum(x, axis=axis, keepdims=keepdims) * (1.0 / count if count else math.nan)


def softmax_array(x: np.ndarray, axis: int, row_max: np.ndarray | None = None) -> np.ndarray:
    """exp(x − max) / Σ exp(x − max) along ``axis``, on a plain array (a fresh result).

    ``row_max`` is the maximum along ``axis`` (keepdims) when the caller has it already.
    """
    if row_max is None:
        row_max = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    with np.errstate(over="ignore"):  # x − max below −1.8e308 is −∞, whose exp is 0 exactly
        e = np.exp(x - row_max)
    e /= np.sum(e, axis=axis, keepdims=True)  # e is a fresh array: normalise it in place
    return e


def _open_rows_max(x: np.ndarray, axis: int, name: str) -> np.ndarray:
    """The maximum along ``axis`` (keepdims), after refusing a row whose entries are all −∞.

    Such a row is 0/0 in a softmax. Attention defines it (all-zero weights: nothing to read); a
    plain softmax refuses it with this error.
    """
    row_max = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    if x.shape[axis] and np.isneginf(row_max).any():
        raise ArgumentError(
            f"{name} of a row whose entries are all -inf is 0/0; got "
            f"{int(np.isneginf(row_max).sum())} such row(s) along axis {axis} of an input of "
            f"shape {x.shape}. Leave at least one entry finite, or use attention's masks, which "
            "give a fully blocked row all-zero weights."
        )
    return row_max


def _axis_check(name: str) -> Any:
    def check(x: np.ndarray, axis: Any) -> dict[str, int]:
        return {"axis": as_axis(axis, x.ndim, f"{name}'s axis")}

    return check


def softmax_vjp_array(grad: np.ndarray, out: np.ndarray, axis: int) -> np.ndarray:
    """p ⊙ (g − ⟨g, p⟩) along ``axis``: the softmax Jacobian diag(p) − p pᵀ applied to g."""
    inner = np.sum(grad * out, axis=axis, keepdims=True)
    result = grad - inner
    result *= out
    return result


@op(
    example=Example(lambda a: softmax(a, axis=-1), ((2, 3),), "over the last axis"),
    method=True,
)
def softmax(x, axis=-1):
    """exp(x − max) / Σ exp(x − max) along ``axis``"""
    return softmax_array(x, axis, _open_rows_max(x, axis, "softmax"))


softmax.checks(_axis_check("softmax"))


@softmax.vjp
def _(grad, out, _x, axis):
    return softmax_vjp_array(grad, out, axis)


@op(
    example=Example(lambda a: log_softmax(a, axis=-1), ((2, 3),), "over the last axis"),
    method=True,
)
def log_softmax(x, axis=-1):
    """x − max − log Σ exp(x − max) along ``axis``"""
    if x.size == 0:  # an empty axis has nothing to normalise (and log Σ would be log 0)
        return np.zeros_like(x)
    row_max = _open_rows_max(x, axis, "log_softmax")
    with np.errstate(over="ignore"):  # x − max below −1.8e308 is −∞: log-probability −∞
        shifted = x - row_max
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


log_softmax.checks(_axis_check("log_softmax"))


@log_softmax.vjp
def _(grad, out, _x, axis):
    return grad - np.exp(out) * np.sum(grad, axis=axis, keepdims=True)
