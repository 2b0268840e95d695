"""Argument checks shared by the engine's public calls: each returns the normalised value or
raises a typed error that states the rule, the value received and the fix.

Ops run these before their forward (``@<op>.checks``), so the tape records normalised
arguments: non-negative axes, an index whose negative entries are already resolved, fresh copies
of any array a VJP will read.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ArgumentError, RankError, ShapeError

__all__ = [
    "as_axes",
    "as_axis",
    "as_flag",
    "as_float_array",
    "as_index",
    "as_integer",
    "as_permutation",
    "as_real",
    "as_shape",
    "broadcasts_to",
    "received",
]

_NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats
_F64 = np.dtype(np.float64)


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` without enlarging it."""
    offset = len(target) - len(shape)
    if offset < 0:
        return False
    tail = target[offset:]  # the axes shape lines up with, from the right
    return shape == tail or all(n == 1 or n == m for n, m in zip(shape, tail, strict=True))


def received(value: Any) -> str:
    """A short description of a received value for an error message."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if hasattr(value, "requires_grad") and hasattr(value, "value"):  # a Tensor
        return f"a Tensor of shape {value.value.shape}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def as_float_array(data: Any, what: str = "Tensor data") -> np.ndarray:
    """``data`` as a fresh float64 array: numbers, nested lists of numbers, or numeric arrays."""
    if type(data) is float:  # the common constant, e.g. x * 2.0
        return np.array(data, dtype=np.float64)
    if type(data) is np.ndarray and data.dtype is _F64:  # a float64 array: copy it
        return data.copy()
    if type(data) is int:  # also beyond int64, as long as float64 can hold it
        try:
            return np.array(float(data))
        except OverflowError:
            raise ArgumentError(
                f"{what} must fit in float64 (|x| < 1.8e308); got an integer of "
                f"{len(str(abs(data)))} digits."
            ) from None
    if data is None or isinstance(data, str | bytes):
        raise ArgumentError(
            f"{what} must be real numbers convertible to float64 (a number, nested lists of "
            f"numbers or a numeric array); got {received(data)}. Pass numbers, e.g. [1.0, 2.0]."
        )
    try:
        array = np.asarray(data)
    except (TypeError, ValueError, OverflowError) as error:
        raise ArgumentError(
            f"{what} must be a rectangular array of numbers; got {received(data)}, which numpy "
            f"cannot read as one ({error}). Give every row the same length."
        ) from error
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise ArgumentError(
            f"{what} must be real numbers convertible to float64; got {received(data)}, read "
            f"as dtype {array.dtype}. Pass real numbers (no strings, None, complex or objects)."
        )
    return np.array(array, dtype=np.float64)  # a copy: the caller may edit its array later


def as_real(value: Any, what: str, *, finite: bool = True, allow_nan: bool = False) -> float:
    """A real number (not a bool, not an array of more than one entry) as a Python float."""
    if type(value) is float and -math.inf < value < math.inf:  # the common case, checked first
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"{what} must be a real number; got {received(value)}.")
    number = float(value)
    if math.isnan(number) and not allow_nan:
        raise ArgumentError(f"{what} must be a number, not NaN; got {number}.")
    if finite and math.isinf(number):
        raise ArgumentError(f"{what} must be finite; got {number}.")
    return number


def as_flag(value: Any, what: str) -> bool:
    """``True`` or ``False`` exactly: a flag is never read by truthiness ("no" is not False)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise ArgumentError(f"{what} must be True or False; got {received(value)}.")


def as_integer(value: Any, what: str) -> int:
    """An integer (a Python or numpy int, not a bool or a float such as 4.9) as an int."""
    if type(value) is int:  # the common case, checked first: ABC checks cost ~0.5 µs
        return value
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ArgumentError(
            f"{what} must be an integer; got {received(value)}. Pass an int such as 3 "
            "(a float is not rounded for you)."
        )
    return int(value)


def as_axis(axis: Any, ndim: int, what: str) -> int:
    """One axis of an ndim-axis array, as its non-negative number (−ndim ≤ axis < ndim)."""
    number = axis if type(axis) is int else as_integer(axis, what)
    if not -ndim <= number < ndim:
        raise RankError(
            f"{what} must name an axis of a rank-{ndim} tensor, -{ndim} <= axis < {ndim}; "
            f"got {number}."
            + (" A rank-0 tensor has no axis: reduce with axis=None." if ndim == 0 else "")
        )
    return number % ndim


def as_axes(axis: Any, ndim: int, what: str) -> tuple[int, ...] | None:
    """None (every axis), one axis, or a tuple of distinct axes, normalised to a sorted tuple."""
    if axis is None:
        return None
    parts = tuple(axis) if isinstance(axis, tuple | list) else (axis,)
    axes = tuple(sorted(as_axis(a, ndim, what) for a in parts))
    if len(set(axes)) != len(axes):
        raise ArgumentError(f"{what} must name each axis once; got {axis!r}.")
    return axes


def as_permutation(axes: Any, ndim: int, what: str = "permute axes") -> tuple[int, ...]:
    """Axes that list every axis of a rank-ndim tensor once, normalised to non-negative."""
    if type(axes) is tuple and len(axes) == ndim:  # the common case: 0..ndim-1 reordered
        try:
            if sorted(axes) == list(range(ndim)) and all(type(a) is int for a in axes):
                return axes
        except (TypeError, ValueError):  # entries that do not sort: the checks below name them
            pass
    if not isinstance(axes, tuple | list):
        raise ArgumentError(f"{what} must be a sequence of axes; got {received(axes)}.")
    if len(axes) != ndim:
        raise RankError(
            f"{what} must list all {ndim} axes of the tensor once each; got {tuple(axes)} "
            f"({len(axes)} axes). Example: permute({', '.join(map(str, reversed(range(ndim))))})."
        )
    normalised = tuple(as_axis(a, ndim, what) for a in axes)
    if sorted(normalised) != list(range(ndim)):
        raise ArgumentError(
            f"{what} must list every axis once (a permutation of 0..{ndim - 1}); got "
            f"{tuple(axes)}, which repeats an axis."
        )
    return normalised


def as_shape(shape: Any, size: int, what: str = "reshape") -> tuple[int, ...]:
    """A target shape of integers (at most one −1) whose product is ``size``."""
    if not isinstance(shape, tuple | list):
        raise ArgumentError(f"{what} needs a shape (a tuple of integers); got {received(shape)}.")
    if all(type(n) is int and n > 0 for n in shape) and math.prod(shape) == size:
        return tuple(shape)  # the common case: positive sizes that fit
    dims = tuple(as_integer(n, f"{what}: each size") for n in shape)
    if dims.count(-1) > 1 or any(n < -1 for n in dims):
        raise ArgumentError(
            f"{what}: sizes must be >= 0, with at most one -1 (inferred); got {dims}."
        )
    known = math.prod(n for n in dims if n != -1)
    # With a -1, that size is size / known: it must be whole (and known not zero).
    fits = known != 0 and size % known == 0 if -1 in dims else known == size
    if not fits:
        raise ShapeError(
            f"{what} must keep the number of entries: a tensor of {size} entries cannot be read "
            f"as shape {dims}. Choose sizes whose product is {size} (one may be -1)."
        )
    return dims


def _as_index_array(part: Any, length: int, axis: int) -> np.ndarray:
    """An integer array index, range-checked and with negative entries resolved (or a mask)."""
    array = np.asarray(part)
    if array.dtype == np.bool_:
        return array.copy()
    if array.size == 0 and array.dtype.kind == "f":  # x[[]]: an empty selection
        array = array.astype(np.intp)
    if array.dtype.kind not in "iu":
        raise ArgumentError(
            f"An index array must hold integers (or Booleans, as a mask); got {received(part)}, "
            f"of dtype {array.dtype}, for axis {axis}. Convert it: np.asarray(index, dtype=int)."
        )
    if array.size and (array.min() < -length or array.max() >= length):
        bad = array[(array < -length) | (array >= length)].ravel()[0]
        raise ShapeError(
            f"Index {int(bad)} is out of range for axis {axis} of length {length}: indices "
            f"must satisfy -{length} <= i < {length}."
        )
    return np.where(array < 0, array + length, array).astype(np.intp)


def _plain(part: slice) -> bool:
    """Whether a slice's bounds are None or ints and its step is not zero."""
    return all(b is None or type(b) is int for b in (part.start, part.stop, part.step)) and (
        part.step != 0
    )


def as_index(index: Any, shape: tuple[int, ...]) -> Any:
    """``index`` with every negative entry resolved and every array copied (numpy semantics).

    The same element spelled two ways (``-1`` and ``2`` on a length-3 axis) becomes one number,
    so the gradient can tell when an entry is selected twice.
    """
    from .tensor import Tensor

    parts = index if isinstance(index, tuple) else (index,)
    if len(parts) <= len(shape) and all(type(p) is slice and _plain(p) for p in parts):
        return parts  # the common case: basic slices, which never repeat or go out of range
    if any(isinstance(p, Tensor) for p in parts):
        raise ArgumentError(
            "A Tensor cannot index a Tensor (its values are float64); got a Tensor index. "
            "Index with integers, slices or an integer numpy array (np.asarray(i, dtype=int))."
        )
    if sum(p is Ellipsis for p in parts) > 1:
        raise ArgumentError(f"An index may hold at most one '...'; got {index!r}.")
    converted = []
    for p in parts:
        if isinstance(p, list):  # a list is an index array (numpy reads it the same way)
            try:
                array = np.asarray(p) if p else np.zeros(0, dtype=np.intp)
            except ValueError:
                array = None
            if array is None or array.dtype.kind not in "biu":
                raise ArgumentError(
                    f"An index list must be a rectangular list of integers (or Booleans); got "
                    f"{received(p)}. Example: x[[0, 2]]."
                )
            p = array
        converted.append(p)
    used = sum(
        p.ndim if isinstance(p, np.ndarray) and p.dtype == np.bool_ else 1
        for p in converted
        if p is not None and p is not Ellipsis
    )
    if used > len(shape):
        raise ShapeError(
            f"Too many indices for a rank-{len(shape)} tensor of shape {shape}: got {index!r}, "
            f"which indexes {used} axes."
        )
    out: list[Any] = []
    axis = 0
    for p in converted:
        if p is None:
            out.append(None)
        elif p is Ellipsis:
            out.append(Ellipsis)
            axis += len(shape) - used
        elif isinstance(p, slice):
            for bound in (p.start, p.stop, p.step):
                if bound is not None:
                    as_integer(bound, "A slice bound")
            if p.step == 0:
                raise ArgumentError(f"A slice step cannot be zero; got {p!r}.")
            out.append(p)
            axis += 1
        elif isinstance(p, np.ndarray):
            if p.dtype == np.bool_:
                if p.shape != shape[axis : axis + p.ndim]:
                    raise ShapeError(
                        f"A Boolean index must have the shape of the axes it masks, "
                        f"{shape[axis : axis + p.ndim]}; got {p.shape}."
                    )
                out.append(p.copy())
                axis += p.ndim
            else:
                out.append(_as_index_array(p, shape[axis], axis))
                axis += 1
        else:
            number = as_integer(p, "An index")
            length = shape[axis]
            if not -length <= number < length:
                raise ShapeError(
                    f"Index {number} is out of range for axis {axis} of length {length}: "
                    f"indices must satisfy -{length} <= i < {length}."
                )
            out.append(number % length)
            axis += 1
    return tuple(out)


def as_sequence(tensors: Any, rest: Sequence[Any], what: str) -> list[Any]:
    """The one sequence of tensors that concat and stack take (as numpy and torch do)."""
    from .tensor import Tensor

    if rest or isinstance(tensors, Tensor | np.ndarray):
        count = 1 + len(rest)
        raise ArgumentError(
            f"{what} takes one sequence of tensors, as numpy and torch do; got {count} "
            f"positional argument(s) starting with {received(tensors)}. Write "
            f"{what}([a, b], axis=1), with axis by keyword."
        )
    if not isinstance(tensors, list | tuple):
        raise ArgumentError(
            f"{what} takes a list or tuple of tensors; got {received(tensors)}. "
            f"Write {what}([a, b], axis=0)."
        )
    if not tensors:
        raise ArgumentError(
            f"{what} needs at least one tensor to join; got an empty {type(tensors).__name__}."
        )
    return list(tensors)
