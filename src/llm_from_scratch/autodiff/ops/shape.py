"""Shape ops: reshape, permute, indexing and joining. They move values; gradients move back."""

from __future__ import annotations

import numpy as np

from ..registry import op


@op
def reshape(x, shape):
    """The same values read into ``shape``"""
    return x.reshape(shape)


@reshape.vjp
def _(grad, out, x, shape):
    return grad.reshape(x.shape)


@op
def permute(x, axes):
    """Axes reordered: result axis i is input axis axes[i]"""
    return np.transpose(x, axes)


@permute.vjp
def _(grad, out, x, axes):
    return np.transpose(grad, np.argsort(axes))


def _is_advanced(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, np.ndarray | list) for p in parts)


@op
def getitem(x, index):
    """x[index]: slices, integers, or integer arrays (a gather such as an embedding lookup)"""
    return x[index]


@getitem.vjp
def _(grad, out, x, index):
    full = np.zeros_like(x)
    if _is_advanced(index):
        np.add.at(full, index, grad)  # repeated indices add up (scatter-add)
    else:
        full[index] = grad
    return full


@op
def concat(*xs, axis):
    """The inputs joined along ``axis``"""
    return np.concatenate(xs, axis=axis)


@concat.vjp
def _(grad, out, *xs, axis):
    bounds = np.cumsum([x.shape[axis] for x in xs])[:-1]
    return tuple(np.split(grad, bounds, axis=axis))


def stack(tensors, axis=0):
    """The inputs joined along a new ``axis``: each gains a size-1 axis, then concat."""
    from ..tensor import Tensor

    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    rank = tensors[0].ndim + 1
    position = axis % rank
    expanded = [t.reshape(*t.shape[:position], 1, *t.shape[position:]) for t in tensors]
    return concat(*expanded, axis=position)
