"""Shape ops: reshape, permute, indexing and joining. They move values; gradients move back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import ArgumentError, ShapeError
from ...validate import (
    as_axis,
    as_index,
    as_integer,
    as_permutation,
    as_sequence,
    as_shape,
    received,
    tensor_value,
)
from ..registry import Example, op
from ..tensor import Tensor


@op(
    example=Example(lambda a: reshape(a, shape=(3, 2)), ((2, 3),), "[2, 3] → [3, 2]"),
)
def reshape(x, shape):
    """The same values read into ``shape``"""
    return x.reshape(shape)


@reshape.checks
def _(x, shape):
    return {"shape": as_shape(shape, x.size)}


@reshape.vjp
def _(grad, _out, _x, shape):
    return grad.reshape(_x.shape)


@op(
    example=Example(lambda a: permute(a, axes=(2, 0, 1)), ((2, 3, 2),), "axes (2, 0, 1)"),
)
def permute(x, axes):
    """Axes reordered: result axis i is input axis axes[i]"""
    return np.transpose(x, axes)


@permute.checks
def _(x, axes):
    return {"axes": as_permutation(axes, x.ndim)}  # non-negative: argsort inverts them


@permute.vjp
def _(grad, _out, _x, axes):
    return np.transpose(grad, np.argsort(axes))


def _may_repeat(index) -> bool:
    """Whether ``index`` can select one entry twice (then gradients must be scatter-added).

    Slices and integers never repeat. One integer array repeats only if it has duplicates; a
    permutation such as RoPE's partner swap does not, so its gradient is a plain assignment.
    The index has been normalised (:func:`~..checks.as_index`), so ``-1`` and ``n − 1`` are
    already one number here.
    """
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [p for p in parts if isinstance(p, np.ndarray)]
    if not arrays:
        return False
    if len(arrays) == 1 and arrays[0].dtype.kind in "iu":
        flat = arrays[0].ravel()
        return np.unique(flat).size != flat.size
    return True


@op(
    example=Example(
        lambda a: getitem(a, index=np.array([2, 0, 2])), ((3, 2),), "rows [2, 0, 2]: repeats add"
    ),
)
def getitem(x, index):
    """x[index]: slices, integers, or integer arrays (a gather such as an embedding lookup)"""
    return x[index]


@getitem.checks
def _(x, index):
    return {"index": as_index(index, x.shape)}


@getitem.vjp
def _(grad, _out, x, index):
    full = np.zeros_like(x)
    if _may_repeat(index):
        np.add.at(full, index, grad)  # repeated indices add up (scatter-add)
    else:
        full[index] = grad
    return full


@op(
    name="concat",
    example=Example(lambda a, b: join(a, b, axis=1), ((2, 1), (2, 2)), "along axis 1"),
)
def join(*xs, axis):
    """The inputs joined along ``axis``"""
    return np.concatenate(xs, axis=axis)


@join.checks
def _(*xs, axis):
    first = xs[0]
    if first.ndim == 0:
        raise ShapeError("concat joins along an existing axis; got a rank-0 input. Use stack.")
    axis = as_axis(axis, first.ndim, "concat's axis")
    for x in xs[1:]:
        if x.ndim != first.ndim or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, first.shape, strict=True)) if i != axis
        ):
            shapes = ", ".join(str(t.shape) for t in xs)
            raise ShapeError(
                f"concat along axis {axis} needs inputs of one rank whose other sizes agree; got "
                f"shapes {shapes}."
            )
    return {"axis": axis}


@join.vjp
def _(grad, _out, *xs, axis):
    bounds = np.cumsum([x.shape[axis] for x in xs])[:-1]
    return tuple(np.split(grad, bounds, axis=axis))


def _joined(tensors: Sequence[Any], rest: Sequence[Any], what: str) -> list[Tensor]:
    """The one sequence concat and stack take, each entry a Tensor (arrays become constants)."""
    return [t if isinstance(t, Tensor) else Tensor(t) for t in as_sequence(tensors, rest, what)]


_AXIS_UNSET: Any = object()  # concat's and stack's axis when neither spelling gave one


def _is_axis_like(value: Any) -> bool:
    """Not a tensor, an array or a sequence: what a second positional argument means as an axis."""
    return not (isinstance(value, np.ndarray | list | tuple) or tensor_value(value) is not None)


def _sequence_and_axis(
    tensors: Sequence[Any], rest: Sequence[Any], axis: Any, what: str
) -> tuple[list[Tensor], Any]:
    """One sequence and its axis, by keyword or positionally (``concat([a, b], 1)``, as numpy)."""
    if len(rest) == 1 and isinstance(tensors, list | tuple) and _is_axis_like(rest[0]):
        if axis is not _AXIS_UNSET:
            raise ArgumentError(
                f"{what} got its axis twice: {rest[0]!r} positionally and axis={axis!r}. "
                f"Give it once: {what}([a, b], 1) or {what}([a, b], axis=1)."
            )
        rest, axis = (), rest[0]
    return _joined(tensors, rest, what), 0 if axis is _AXIS_UNSET else axis


def concat(tensors: Sequence[Any], *rest: Any, axis: int = _AXIS_UNSET) -> Tensor:
    """The tensors joined along an existing axis: ``concat([a, b], 1)`` or ``axis=1``."""
    tensors, axis = _sequence_and_axis(tensors, rest, axis, "concat")
    for t in tensors:
        if t.ndim == 0:
            raise ShapeError(
                f"concat joins along an existing axis; got a rank-0 input ({received(t)}). "
                "Use stack to join scalars."
            )
    return join(*tensors, axis=axis)


def stack(tensors: Sequence[Any], *rest: Any, axis: int = _AXIS_UNSET) -> Tensor:
    """The tensors joined along a new axis (``stack([a, b], 1)``): each gains a size-1 axis."""
    tensors, axis = _sequence_and_axis(tensors, rest, axis, "stack")
    shapes = {t.shape for t in tensors}
    if len(shapes) != 1:
        raise ShapeError(
            f"stack needs tensors of one shape; got shapes {[t.shape for t in tensors]}."
        )
    position = as_axis(axis, tensors[0].ndim + 1, "stack's axis")
    expanded = [t.reshape(*t.shape[:position], 1, *t.shape[position:]) for t in tensors]
    return join(*expanded, axis=position)


# --- heads: the reshape-and-permute pairs of multi-head attention, one tape entry each ---------


@op(example=Example(lambda a: split_heads(a, heads=2), ((2, 3, 4),), "[2, 3, 4] → [2, 2, 3, 2]"))
def split_heads(x, heads):
    """x [B,T,D] read as [B,T,H,D/H], axes (0, 2, 1, 3) → [B,H,T,D/H]: reshape, then permute"""
    batch, tokens, width = x.shape
    return x.reshape(batch, tokens, heads, width // heads).transpose(0, 2, 1, 3)


@split_heads.checks
def _(x, heads):
    heads = as_integer(heads, "split_heads' heads")
    if x.ndim != 3 or heads < 1 or x.shape[-1] % heads:
        raise ShapeError(
            f"split_heads needs [B, T, D] with D a multiple of heads >= 1; got shape {x.shape} "
            f"and heads = {heads}."
        )
    return {"heads": heads}


@split_heads.vjp
def _(grad, _out, _x, heads):
    return grad.transpose(0, 2, 1, 3).reshape(_x.shape)  # the permute's and reshape's VJPs


@op(example=Example(lambda a: merge_heads(a), ((2, 2, 3, 2),), "[2, 2, 3, 2] → [2, 3, 4]"))
def merge_heads(x):
    """x [B,H,T,d_h], axes (0, 2, 1, 3) → [B,T,H,d_h], read as [B,T,H·d_h]: split's inverse"""
    batch, heads, tokens, head_width = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, tokens, heads * head_width)


@merge_heads.checks
def _(x):
    if x.ndim != 4:
        raise ShapeError(f"merge_heads needs [B, H, T, d_h] (rank 4); got shape {x.shape}.")
    return {}


@merge_heads.vjp
def _(grad, _out, _x):
    b, h, t, d = _x.shape
    return grad.reshape(b, t, h, d).transpose(0, 2, 1, 3)
