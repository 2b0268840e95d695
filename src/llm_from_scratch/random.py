"""SplitMix64, the package's only source of randomness, and the initialisers built on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from .errors import ArgumentError

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64: state += γ, then two xor-shift-multiply rounds."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise ArgumentError(f"SplitMix64 seed must be an integer; got {seed!r}.")
        self.state = int(seed) & _MASK

    def __repr__(self) -> str:
        return f"SplitMix64(state=0x{self.state:016x})"

    def clone(self) -> SplitMix64:
        """An independent generator at the same point of the stream."""
        twin = SplitMix64(0)
        twin.state = self.state
        return twin

    def next_u64(self) -> int:
        """Next output: z ← state + γ; z ← (z ⊕ z≫30)·M₁; z ← (z ⊕ z≫27)·M₂; z ⊕ z≫31."""
        self.state = (self.state + _GAMMA) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return z ^ (z >> 31)

    def next_float(self) -> float:
        """A float in [0, 1) from the top 53 bits: (u ≫ 11) · 2⁻⁵³."""
        return (self.next_u64() >> 11) * 2.0**-53

    def u64_array(self, count: int) -> np.ndarray:
        """The next ``count`` outputs at once, equal to ``count`` calls of ``next_u64``."""
        if count < 0:
            raise ArgumentError(f"count must be non-negative; got {count}.")
        steps = np.arange(1, count + 1, dtype=np.uint64)
        z = np.uint64(self.state) + steps * np.uint64(_GAMMA)  # wraps modulo 2⁶⁴
        z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
        z = z ^ (z >> np.uint64(31))
        self.state = (self.state + count * _GAMMA) & _MASK
        return z

    def uniform(self, low: float, high: float, shape: tuple[int, ...]) -> np.ndarray:
        """Row-major draws low + (high − low)·u, u from ``next_float``."""
        count = int(np.prod(shape, dtype=np.int64))
        unit = (self.u64_array(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        return (low + (high - low) * unit).reshape(shape)

    def normal(self, shape: tuple[int, ...]) -> np.ndarray:
        """Standard normal draws by Box–Muller on pairs of uniforms (first of each pair kept)."""
        count = int(np.prod(shape, dtype=np.int64))
        u = self.uniform(0.0, 1.0, (count, 2))
        radius = np.sqrt(-2.0 * np.log1p(-u[:, 0]))  # 1 − u ∈ (0, 1]: log is finite
        return (radius * np.cos(2.0 * np.pi * u[:, 1])).reshape(shape)

    @contextmanager
    def transaction(self) -> Iterator[SplitMix64]:
        """Draw from a copy; the copy's position is committed only if the block succeeds."""
        draft = self.clone()
        yield draft
        self.state = draft.state


def xavier_uniform(fan_in: int, fan_out: int, rng: SplitMix64) -> np.ndarray:
    """A [fan_in, fan_out] matrix drawn from U(−a, a) with a = √(6 / (fan_in + fan_out))."""
    for label, value in (("fan_in", fan_in), ("fan_out", fan_out)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
            raise ArgumentError(
                f"Xavier initialisation needs a positive integer {label}; got {value!r}. "
                "A layer with a zero-width side has nothing to initialise."
            )
    if not isinstance(rng, SplitMix64):
        raise ArgumentError(f"rng must be a SplitMix64 generator; got {type(rng).__name__}.")
    bound = float(np.sqrt(6.0 / (fan_in + fan_out)))
    return rng.uniform(-bound, bound, (int(fan_in), int(fan_out)))
