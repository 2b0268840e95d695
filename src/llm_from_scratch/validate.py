"""Argument checks shared by every public constructor and forward: written once, typed errors.

Each helper returns the checked value in its plain form (``int``, ``bool``, ``float``, a float64
array) or raises a :class:`~llm_from_scratch.errors.FromScratchError` subclass whose message
states the rule, the value received and, where useful, the fix. Nothing is read by truthiness and
nothing is coerced silently: ``2.0`` is not an integer, ``"no"`` is not a flag, and a ragged list
is not an array. The caller picks the error class (a width check raises a ``WidthError``, a token
ID a ``TokenError``), so one helper serves every module without a class per message.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .autodiff import Tensor
from .errors import ArgumentError, FromScratchError
from .random import SplitMix64

#: The most float64 values one array may hold (2²⁸ values, 2 GiB). Larger requests are refused
#: before numpy allocates, with a message naming the size: a textbook layer never needs more.
MAX_ELEMENTS = 2**28

ErrorType = type[FromScratchError]


def _fix(fix: str | None) -> str:
    return f" {fix}" if fix else ""


def _shown(value: Any) -> str:
    """repr(value), shortened: a message quotes what it got without printing a whole array."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _plain(value: Any) -> str:
    """' (repr)' for None, a number or a string; '' for objects (a repr may hold an address)."""
    plain = value is None or isinstance(value, int | float | str | bytes)
    return f" ({_shown(value)})" if plain else ""


def integer(
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
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
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
    """``value`` as an int ≥ 1 (see :func:`integer` for the options)."""
    return integer(value, label, minimum=1, **options)


def non_negative_int(value: Any, label: str, **options: Any) -> int:
    """``value`` as an int ≥ 0 (see :func:`integer` for the options)."""
    return integer(value, label, minimum=0, **options)


def boolean(value: Any, label: str, *, error: ErrorType = ArgumentError) -> bool:
    """``value`` if it is exactly True or False (numpy's bool too); never read by truthiness."""
    if not isinstance(value, bool | np.bool_):
        raise error(
            f"{label} must be True or False; got {_shown(value)}. Flags are not read by "
            f"truthiness: write {label}=False rather than a string or a number."
        )
    return bool(value)


def generator(rng: Any, owner: str, *, error: ErrorType = ArgumentError) -> SplitMix64:
    """``rng`` if it is the package's SplitMix64 (the only source of randomness)."""
    if not isinstance(rng, SplitMix64):
        raise error(
            f"{owner} needs a SplitMix64 rng; got {type(rng).__name__}{_plain(rng)}. All "
            "randomness in the package comes from llm_from_scratch.random.SplitMix64: pass "
            "rng=SplitMix64(seed) (a numpy Generator or None is not accepted)."
        )
    return rng


def finite_float(
    value: Any,
    label: str,
    *,
    minimum: float | None = None,
    positive: bool = False,
    error: ErrorType = ArgumentError,
    fix: str | None = None,
) -> float:
    """``value`` as a float if it is a finite real (not a bool), ≥ minimum or > 0 if asked."""
    if isinstance(value, bool | np.bool_) or not isinstance(
        value, int | float | np.integer | np.floating
    ):
        raise error(f"{label} must be a real number; got {_shown(value)}.{_fix(fix)}")
    number = float(value)
    if not math.isfinite(number):
        raise error(f"{label} must be finite; got {_shown(value)}.{_fix(fix)}")
    if positive and not number > 0:
        raise error(f"{label} must be greater than 0; got {_shown(value)}.{_fix(fix)}")
    if minimum is not None and number < minimum:
        raise error(f"{label} must be at least {minimum:g}; got {_shown(value)}.{_fix(fix)}")
    return number


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


def array(
    value: Any,
    label: str,
    *,
    error: ErrorType = ArgumentError,
    finite: bool = True,
) -> np.ndarray:
    """A float64 copy of a Tensor or rectangular array-like of real numbers (finite by default)."""
    if isinstance(value, Tensor):
        data = value.value.copy()
    else:
        if value is None or isinstance(value, str | bytes):
            raise error(f"{label} must be an array of numbers; got {_shown(value)}.")
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError) as failure:
            raise error(
                f"{label} must be a rectangular array of numbers; got {_shown(value)} ({failure})."
            ) from failure
        if raw.dtype == object or raw.dtype.kind not in "biuf":
            raise error(
                f"{label} must be a rectangular array of real numbers; got {_shown(value)} "
                f"(numpy reads it as dtype {raw.dtype}). Check for ragged rows, None or strings."
            )
        data = np.array(raw, dtype=np.float64)
    if finite and data.size and not np.isfinite(data).all():
        raise error(
            f"{label} must hold finite numbers; got {int(np.size(data) - np.isfinite(data).sum())}"
            f" NaN or infinite entries in shape {data.shape}."
        )
    return data


def tensor(value: Any, label: str, *, error: ErrorType = ArgumentError) -> Tensor:
    """``value`` if it is a Tensor, else a constant Tensor of :func:`array` (NaN allowed)."""
    if isinstance(value, Tensor):
        return value
    return Tensor(array(value, label, error=error, finite=False))


__all__ = [
    "MAX_ELEMENTS",
    "array",
    "boolean",
    "element_count",
    "finite_float",
    "generator",
    "integer",
    "non_negative_int",
    "positive_int",
    "tensor",
]
