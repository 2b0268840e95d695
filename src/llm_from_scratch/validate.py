"""Argument checks shared by the whole package, from the engine's ops to the layers: written once.

Each helper returns the checked value in its plain form (``int``, ``bool``, ``float``, a float64
array, a normalised axis) or raises a :class:`~llm_from_scratch.errors.FromScratchError` subclass
whose message states the rule, the value received and, where useful, the fix. Nothing is read by
truthiness and nothing is coerced silently: ``2.0`` is not an integer, ``"no"`` is not a flag, and
a ragged list is not an array. The caller picks the error class (a width check raises a
``WidthError``, a token ID a ``TokenError``), so one helper serves every module.

This module sits below the engine: ``autodiff`` imports it, so it never imports ``Tensor``. It
recognises a tensor by the two fields every Tensor (and Parameter) has, a ``value`` array and
``requires_grad`` (:func:`tensor_value`); ``nn.module.as_tensor`` builds tensors from arrays.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import ArgumentError, FromScratchError, RankError, ShapeError, WidthError
from .random import SplitMix64

__all__ = [
    "MAX_ELEMENTS",
    "as_axes",
    "as_axis",
    "as_flag",
    "as_float_array",
    "as_index",
    "as_integer",
    "as_numpy",
    "as_permutation",
    "as_real",
    "as_sequence",
    "as_shape",
    "as_width",
    "broadcasts_to",
    "element_count",
    "generator",
    "non_negative_int",
    "positive_int",
    "received",
    "tensor_value",
]

#: The most float64 values one array may hold (2²⁸ values, 2 GiB). Larger requests are refused
#: before numpy allocates, with a message naming the size: a textbook layer never needs more.
MAX_ELEMENTS = 2**28

ErrorType = type[FromScratchError]

_NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats
_F64 = np.dtype(np.float64)


# --- describing what was received ----------------------------------------------------------------


def tensor_value(value: Any) -> np.ndarray | None:
    """A Tensor's (or Parameter's) array, or None for anything that is not a tensor."""
    if hasattr(value, "requires_grad") and isinstance(getattr(value, "value", None), np.ndarray):
        return value.value
    return None


def received(value: Any) -> str:
    """A short description of a received value for an error message: its kind and shape."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if tensor_value(value) is not None:
        return f"a Tensor of shape {value.value.shape}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def _shown(value: Any) -> str:
    """repr(value), shortened: a message quotes what it got without printing a whole array."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _plain(value: Any) -> str:
    """' (repr)' for None, a number or a string; '' for objects (a repr may hold an address)."""
    plain = value is None or isinstance(value, int | float | str | bytes)
    return f" ({_shown(value)})" if plain else ""


def _fix(fix: str | None) -> str:
    return f" {fix}" if fix else ""


# --- numbers and flags ---------------------------------------------------------------------------


def as_integer(
    value: Any,
    label: str,
    *,
    minimum: int | None = None,
    error: ErrorType = ArgumentError,
    range_error: ErrorType | None = None,
    unit: str = "",
    fix: str | None = None,
) -> int:
    """``value`` as an int if it is a Python or numpy integer (not a bool) ≥ ``minimum``."""
    if type(value) is not int and (  # the common case, int, skips the ABC checks (~0.5 µs)
        isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral)
    ):
        kind = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(
            minimum, f"an integer ≥ {minimum}"
        )
        raise error(f"{label} must be {kind}; got {_shown(value)}.{_fix(fix)}")
    if minimum is not None and value < minimum:
        what = f"at least {minimum} {unit}" if unit else f"at least {minimum}"
        what = "a non-negative integer" if minimum == 0 and not unit else what
        raise (range_error or error)(f"{label} must be {what}; got {_shown(value)}.{_fix(fix)}")
    return int(value)


def positive_int(value: Any, label: str, **options: Any) -> int:
    """``value`` as an int ≥ 1 (see :func:`as_integer` for the options)."""
    return as_integer(value, label, minimum=1, **options)


def non_negative_int(value: Any, label: str, **options: Any) -> int:
    """``value`` as an int ≥ 0 (see :func:`as_integer` for the options)."""
    return as_integer(value, label, minimum=0, **options)


def as_width(value: Any, label: str, **options: Any) -> int:
    """A feature width: an int ≥ 1, ``ArgumentError`` if not an integer, ``WidthError`` below 1."""
    return as_integer(value, label, minimum=1, range_error=WidthError, **options)


def as_flag(value: Any, label: str, *, error: ErrorType = ArgumentError) -> bool:
    """``value`` if it is exactly True or False (numpy's bool too); never read by truthiness."""
    if not isinstance(value, bool | np.bool_):
        raise error(
            f"{label} must be True or False; got {_shown(value)}. Flags are not read by "
            "truthiness: pass True or False rather than a string or a number."
        )
    return bool(value)


def as_real(
    value: Any,
    label: str,
    *,
    finite: bool = True,
    allow_nan: bool = False,
    minimum: float | None = None,
    positive: bool = False,
    error: ErrorType = ArgumentError,
    fix: str | None = None,
) -> float:
    """A real number (not a bool, not an array of more entries than one) as a Python float."""
    if type(value) is float and -math.inf < value < math.inf and minimum is None and not positive:
        return value  # the common case, checked first
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise error(f"{label} must be a real number; got {_shown(value)}.{_fix(fix)}")
    number = float(value)
    if math.isnan(number) and not allow_nan:
        rule = "finite" if finite else "a number, not NaN"
        raise error(f"{label} must be {rule}; got {_shown(value)}.{_fix(fix)}")
    if finite and math.isinf(number):
        raise error(f"{label} must be finite; got {_shown(value)}.{_fix(fix)}")
    if positive and not number > 0:
        raise error(f"{label} must be greater than 0; got {_shown(value)}.{_fix(fix)}")
    if minimum is not None and number < minimum:
        raise error(f"{label} must be at least {minimum:g}; got {_shown(value)}.{_fix(fix)}")
    return number


def generator(rng: Any, owner: str, *, error: ErrorType = ArgumentError) -> SplitMix64:
    """``rng`` if it is the package's SplitMix64 (the only source of randomness)."""
    if not isinstance(rng, SplitMix64):
        raise error(
            f"{owner} needs a SplitMix64 rng; got {type(rng).__name__}{_plain(rng)}. All "
            "randomness in the package comes from llm_from_scratch.random.SplitMix64: pass "
            "rng=SplitMix64(seed) (a numpy Generator or None is not accepted)."
        )
    return rng


# --- arrays --------------------------------------------------------------------------------------


def element_count(shape: Any, label: str, *, error: ErrorType = ArgumentError) -> int:
    """Π shape in exact integers; refuse more than :data:`MAX_ELEMENTS` values before numpy."""
    count = math.prod(int(n) for n in shape)
    if count > MAX_ELEMENTS:
        dims = " × ".join(str(int(n)) for n in shape)
        raise error(
            f"{label} would hold {dims} = {count:,} float64 values ({count * 8:,} bytes); "
            f"the package refuses more than {MAX_ELEMENTS:,} values (2 GiB) in one request, "
            "before allocating. Use smaller widths or lengths."
        )
    return count


def as_numpy(
    value: Any, label: str, *, kind: str = "array", error: ErrorType = ArgumentError
) -> np.ndarray:
    """numpy's own reading of ``value`` (a tensor's array for a tensor), refused if ragged.

    No dtype is imposed: integer IDs stay integers and Boolean masks stay Boolean. ``kind``
    names what the caller expects, for the message: "rectangular {kind}".
    """
    array = tensor_value(value)
    if array is not None:
        return array
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as failure:  # ragged rows
        raise error(
            f"{label} must be a rectangular {kind}; got {_shown(value)} ({failure})."
        ) from failure


def as_float_array(
    data: Any,
    what: str = "Tensor data",
    *,
    finite: bool = False,
    error: ErrorType = ArgumentError,
) -> np.ndarray:
    """A fresh float64 copy of a number, nested lists of numbers, a numeric array or a tensor.

    With ``finite=True`` NaN and ±inf entries are refused too.
    """
    if type(data) is float:  # the common constant, e.g. x * 2.0
        array = np.array(data, dtype=np.float64)
    elif type(data) is np.ndarray and data.dtype is _F64:  # a float64 array: copy it
        array = data.copy()
    else:
        array = _read_float_array(data, what, error)
    if finite and array.size and not np.isfinite(array).all():
        raise error(
            f"{what} must hold finite numbers; got {int(array.size - np.isfinite(array).sum())}"
            f" NaN or infinite entries in shape {array.shape}."
        )
    return array


def _read_float_array(data: Any, what: str, error: ErrorType) -> np.ndarray:
    """The slow path of :func:`as_float_array`: anything but a float or a float64 array."""
    tensor = tensor_value(data)
    if tensor is not None:
        return tensor.copy()
    if type(data) is int:  # also beyond int64, as long as float64 can hold it
        try:
            return np.array(float(data))
        except OverflowError:
            raise error(
                f"{what} must fit in float64 (|x| < 1.8e308); got an integer of "
                f"{len(str(abs(data)))} digits."
            ) from None
    if data is None or isinstance(data, str | bytes):
        raise error(
            f"{what} must be an array of numbers; got {_shown(data)}. Pass real numbers "
            "convertible to float64: a number, nested lists of numbers or a numeric array."
        )
    try:
        array = np.asarray(data)
    except (TypeError, ValueError, OverflowError) as failure:
        raise error(
            f"{what} must be a rectangular array of numbers; got {_shown(data)} ({failure}). "
            "Give every row the same length."
        ) from failure
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise error(
            f"{what} must be a rectangular array of real numbers; got {_shown(data)} (numpy "
            f"reads it as dtype {array.dtype}). Check for ragged rows, None, strings or "
            "complex numbers."
        )
    return np.array(array, dtype=np.float64)  # a copy: the caller may edit its array later


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` without enlarging it."""
    offset = len(target) - len(shape)
    if offset < 0:
        return False
    tail = target[offset:]  # the axes shape lines up with, from the right
    return shape == tail or all(n == 1 or n == m for n, m in zip(shape, tail, strict=True))


# --- axes, shapes and indices (the engine's reductions and shape ops) ---------------------------

_NOT_ROUNDED = "Pass an int such as 3 (a float is not rounded for you)."


def as_axis(axis: Any, ndim: int, what: str) -> int:
    """One axis of an ndim-axis array, as its non-negative number (−ndim ≤ axis < ndim)."""
    number = axis if type(axis) is int else as_integer(axis, what, fix=_NOT_ROUNDED)
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
    dims = tuple(as_integer(n, f"{what}: each size", fix=_NOT_ROUNDED) for n in shape)
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


def _plain_slice(part: slice) -> bool:
    """Whether a slice's bounds are None or ints and its step is not zero."""
    return all(b is None or type(b) is int for b in (part.start, part.stop, part.step)) and (
        part.step != 0
    )


def as_index(index: Any, shape: tuple[int, ...]) -> Any:
    """``index`` with every negative entry resolved and every array copied (numpy semantics).

    The same element spelled two ways (``-1`` and ``2`` on a length-3 axis) becomes one number,
    so the gradient can tell when an entry is selected twice.
    """
    parts = index if isinstance(index, tuple) else (index,)
    if len(parts) <= len(shape) and all(type(p) is slice and _plain_slice(p) for p in parts):
        return parts  # the common case: basic slices, which never repeat or go out of range
    if any(tensor_value(p) is not None for p in parts):
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
                    as_integer(bound, "A slice bound", fix=_NOT_ROUNDED)
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
            number = as_integer(p, "An index", fix=_NOT_ROUNDED)
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
    if rest or isinstance(tensors, np.ndarray) or tensor_value(tensors) is not None:
        count = 1 + len(rest)
        raise ArgumentError(
            f"{what} takes one sequence of tensors, as numpy and torch do; got {count} "
            f"positional argument(s) starting with {received(tensors)}. Write "
            f"{what}([a, b], axis=1) or {what}([a, b], 1)."
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
