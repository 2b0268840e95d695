"""Reductions: sum (mean is sum scaled by the count) and the softmax family over one axis."""

from __future__ import annotations

import math

import numpy as np

from ..registry import op


@op
def sum(x, axis, keepdims):  # the op shares its name with Tensor.sum
    """Σ over ``axis`` (all axes when None)"""
    return np.sum(x, axis=axis, keepdims=keepdims)


@sum.vjp
def _(grad, _out, x, axis, keepdims):
    if axis is not None and not keepdims:
        grad = np.expand_dims(grad, axis)
    return np.broadcast_to(grad, x.shape)


def mean(x, axis=None, keepdims=False):
    """Σ / count over ``axis``: a composition of sum and a constant scale."""
    shape = x.shape
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    count = math.prod(shape[a] for a in axes)
    return sum(x, axis=axis, keepdims=keepdims) * (1.0 / count if count else math.nan)


def softmax_array(x: np.ndarray, axis: int) -> np.ndarray:
    """exp(x − max) / Σ exp(x − max) along ``axis``, on a plain array (a fresh result)."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    e /= np.sum(e, axis=axis, keepdims=True)  # e is a fresh array: normalise it in place
    return e


def softmax_vjp_array(grad: np.ndarray, out: np.ndarray, axis: int) -> np.ndarray:
    """p ⊙ (g − ⟨g, p⟩) along ``axis``: the softmax Jacobian diag(p) − p pᵀ applied to g."""
    inner = np.sum(grad * out, axis=axis, keepdims=True)
    result = grad - inner
    result *= out
    return result


@op
def softmax(x, axis):
    """exp(x − max) / Σ exp(x − max) along ``axis``"""
    return softmax_array(x, axis)


@softmax.vjp
def _(grad, out, x, axis):
    return softmax_vjp_array(grad, out, axis)


@op
def log_softmax(x, axis):
    """x − max − log Σ exp(x − max) along ``axis``"""
    if x.size == 0:  # an empty axis has nothing to normalise (and log Σ would be log 0)
        return np.zeros_like(x)
    shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@log_softmax.vjp
def _(grad, out, x, axis):
    return grad - np.exp(out) * np.sum(grad, axis=axis, keepdims=True)
