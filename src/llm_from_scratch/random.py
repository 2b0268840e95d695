"""SplitMix64, the package's only source of randomness, and the initialisers built on it.

Every count and shape is checked before anything is drawn (a failed call leaves the generator
where it was), and a request for more than ``validate.MAX_ELEMENTS`` values is refused with the
bytes it would need, before numpy allocates.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .errors import ArgumentError

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _count(value: Any, label: str, per_value: int = 1) -> int:
    """A non-negative integer count, refused when count · per_value exceeds MAX_ELEMENTS."""
    from .validate import MAX_ELEMENTS  # validate imports this module: look it up at call time

    if not _is_integer(value) or value < 0:
        raise ArgumentError(f"{label} must be a non-negative integer; got {value!r}.")
    count = int(value)
    if count * per_value > MAX_ELEMENTS:
        raise ArgumentError(
            f"{label} asks for {count:,} draws ({count * per_value * 8:,} bytes of 64-bit "
            f"values); the package refuses more than {MAX_ELEMENTS:,} values (2 GiB) in one "
            "request, before allocating. Draw in smaller batches."
        )
    return count


def _shape(shape: Any, label: str) -> tuple[int, ...]:
    """A shape: a tuple (or list) of non-negative integers, or one integer."""
    dims = (shape,) if _is_integer(shape) else shape
    if not isinstance(dims, tuple | list) or not all(_is_integer(n) and n >= 0 for n in dims):
        raise ArgumentError(
            f"{label} needs a shape, a tuple of non-negative integers such as (2, 3); got "
            f"{shape!r}."
        )
    return tuple(int(n) for n in dims)


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64: state += γ, then two xor-shift-multiply rounds."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        if not _is_integer(seed):
            raise ArgumentError(f"SplitMix64 seed must be an integer; got {seed!r}.")
        self._state = int(seed) & _MASK

    @property
    def state(self) -> int:
        """The 64-bit state, an int in [0, 2⁶⁴)."""
        return self._state

    @state.setter
    def state(self, value: int) -> None:
        if not _is_integer(value) or not 0 <= value <= _MASK:
            raise ArgumentError(
                f"SplitMix64 state must be an integer in [0, 2⁶⁴); got {value!r}. Copy it from "
                "another generator's .state, or start from a seed: SplitMix64(seed)."
            )
        self._state = int(value)

    def __repr__(self) -> str:
        return f"SplitMix64(state=0x{self._state:016x})"

    def clone(self) -> SplitMix64:
        """An independent generator at the same point of the stream."""
        twin = SplitMix64(0)
        twin._state = self._state
        return twin

    def next_u64(self) -> int:
        """Next output: z ← state + γ; z ← (z ⊕ z≫30)·M₁; z ← (z ⊕ z≫27)·M₂; z ⊕ z≫31."""
        self._state = (self._state + _GAMMA) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return z ^ (z >> 31)

    def next_float(self) -> float:
        """A float in [0, 1) from the top 53 bits: (u ≫ 11) · 2⁻⁵³."""
        return (self.next_u64() >> 11) * 2.0**-53

    def u64_array(self, count: int) -> np.ndarray:
        """The next ``count`` outputs at once, equal to ``count`` calls of ``next_u64``."""
        count = _count(count, "u64_array count")
        steps = np.arange(1, count + 1, dtype=np.uint64)
        z = np.uint64(self._state) + steps * np.uint64(_GAMMA)  # wraps modulo 2⁶⁴
        z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
        z = z ^ (z >> np.uint64(31))
        self._state = (self._state + count * _GAMMA) & _MASK
        return z

    def uniform(self, low: float, high: float, shape: tuple[int, ...]) -> np.ndarray:
        """Row-major draws low + (high − low)·u, u from ``next_float``, for low ≤ high."""
        bounds = []
        for label, value in (("low", low), ("high", high)):
            if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
                raise ArgumentError(f"uniform {label} must be a real number; got {value!r}.")
            try:
                number = float(value)
            except OverflowError:  # an integer beyond float64
                number = math.inf
            if not math.isfinite(number):
                raise ArgumentError(f"uniform {label} must be finite; got {value!r}.")
            bounds.append(number)
        low, high = bounds
        if low > high:
            raise ArgumentError(
                f"uniform draws from [low, high) and needs low ≤ high; got low={low!r}, "
                f"high={high!r}. Swap them."
            )
        dims = _shape(shape, "uniform")
        count = _count(math.prod(dims), f"uniform shape {dims}")
        unit = (self.u64_array(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        if math.isfinite(high - low):
            return (low + (high - low) * unit).reshape(dims)
        # high − low beyond 1.8e308: the same draw computed on halves, then doubled (exact)
        return ((low * 0.5 + (high * 0.5 - low * 0.5) * unit) * 2.0).reshape(dims)

    def normal(self, shape: tuple[int, ...]) -> np.ndarray:
        """Standard normal draws by Box–Muller on pairs of uniforms (first of each pair kept)."""
        dims = _shape(shape, "normal")
        count = _count(math.prod(dims), f"normal shape {dims}", per_value=2)
        u = self.uniform(0.0, 1.0, (count, 2))
        radius = np.sqrt(-2.0 * np.log1p(-u[:, 0]))  # 1 − u ∈ (0, 1]: log is finite
        return (radius * np.cos(2.0 * np.pi * u[:, 1])).reshape(dims)

    @contextmanager
    def transaction(self) -> Iterator[SplitMix64]:
        """Draw from a copy; the copy's position is committed only if the block succeeds."""
        draft = self.clone()
        yield draft
        self._state = draft._state


def as_generator(rng: Any, owner: str) -> SplitMix64:
    """``rng`` if it is the package's SplitMix64, else ArgumentError describing what came."""
    if isinstance(rng, SplitMix64):
        return rng
    from .validate import received  # validate imports this module: look it up at call time

    raise ArgumentError(
        f"{owner} needs a SplitMix64 rng; got {received(rng)}. All randomness in the package "
        "comes from llm_from_scratch.random.SplitMix64: pass rng=SplitMix64(seed) (a numpy "
        "Generator or None is not accepted)."
    )


def xavier_uniform(fan_in: int, fan_out: int, rng: SplitMix64) -> np.ndarray:
    """A [fan_in, fan_out] matrix drawn from U(−a, a) with a = √(6 / (fan_in + fan_out))."""
    for label, value in (("fan_in", fan_in), ("fan_out", fan_out)):
        if not _is_integer(value) or value <= 0:
            raise ArgumentError(
                f"Xavier initialisation needs a positive integer {label}; got {value!r}. "
                "A layer with a zero-width side has nothing to initialise."
            )
    rng = as_generator(rng, "xavier_uniform")
    _count(int(fan_in) * int(fan_out), f"Xavier initialisation of {fan_in} × {fan_out}")
    bound = float(np.sqrt(6.0 / (fan_in + fan_out)))
    return rng.uniform(-bound, bound, (int(fan_in), int(fan_out)))
