"""Shape ops: reshape, permute, indexing and joining. They move values; gradients move back."""

from __future__ import annotations

import numpy as np

from ..registry import op


@op
def reshape(x, shape):
    """The same values read into ``shape``"""
    return x.reshape(shape)


@reshape.vjp
def _(grad, _out, x, shape):
    return grad.reshape(x.shape)


@op
def permute(x, axes):
    """Axes reordered: result axis i is input axis axes[i]"""
    return np.transpose(x, axes)


@permute.vjp
def _(grad, _out, x, axes):
    return np.transpose(grad, np.argsort(axes))


def _may_repeat(index) -> bool:
    """Whether ``index`` can select one entry twice (then gradients must be scatter-added).

    Slices and integers never repeat. One integer array repeats only if it has duplicates; a
    permutation such as RoPE's partner swap does not, so its gradient is a plain assignment.
    """
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [np.asarray(p) for p in parts if isinstance(p, np.ndarray | list)]
    if not arrays:
        return False
    if len(arrays) == 1 and arrays[0].dtype.kind in "iu":
        flat = arrays[0].ravel()
        return np.unique(flat).size != flat.size
    return True


@op
def getitem(x, index):
    """x[index]: slices, integers, or integer arrays (a gather such as an embedding lookup)"""
    return x[index]


@getitem.vjp
def _(grad, _out, x, index):
    full = np.zeros_like(x)
    if _may_repeat(index):
        np.add.at(full, index, grad)  # repeated indices add up (scatter-add)
    else:
        full[index] = grad
    return full


@op
def concat(*xs, axis):
    """The inputs joined along ``axis``"""
    return np.concatenate(xs, axis=axis)


@concat.vjp
def _(grad, _out, *xs, axis):
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
