"""Choosing the next token from logits: greedy, temperature, top-k, top-p (nucleus).

Every function is pure on a [B, V] array of logits (one row per sequence); the only randomness
is one SplitMix64 uniform per row, drawn in ``sample``. Filters return logits with the removed
tokens at −∞, so they compose: temperature, then top-k, then top-p (the order Hugging Face's
``generate`` applies them in).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ArgumentError
from ..random import SplitMix64
from ..validate import as_flag, as_float_array, as_real, generator, positive_int

__all__ = [
    "check_temperature",
    "check_top_k",
    "check_top_p",
    "entropy",
    "greedy",
    "next_tokens",
    "probabilities",
    "sample",
    "temperature_scale",
    "top_k_filter",
    "top_p_filter",
]


def _logits(logits: Any) -> np.ndarray:
    """Logits as a float64 [B, V] array with V >= 1 (−∞ allowed, NaN and +∞ refused)."""
    z = as_float_array(logits, "logits")
    if z.ndim != 2 or z.shape[1] == 0:
        raise ArgumentError(
            f"logits must be a [B, V] array (one row of V >= 1 scores per sequence); got shape "
            f"{z.shape}. Add a batch axis with logits[None] for one sequence."
        )
    if np.isnan(z).any() or np.isposinf(z).any():
        raise ArgumentError("logits must not hold NaN or +inf; check the model's output.")
    if np.isneginf(z).all(axis=1).any():
        raise ArgumentError(
            "every row of logits needs at least one finite entry; got a row of -inf."
        )
    return z


def check_temperature(temperature: Any) -> float:
    """τ as a float > 0 (τ = 0 is greedy: call ``greedy`` instead)."""
    return as_real(
        temperature,
        "temperature",
        positive=True,
        fix="Temperature divides the logits (z / τ), so it must be > 0; for τ → 0 use greedy.",
    )


def check_top_k(k: Any) -> int:
    """k as an int >= 1 (a k at or above V keeps every token)."""
    return positive_int(k, "top_k", fix="top_k keeps the k most likely tokens; use k >= 1.")


def check_top_p(p: Any) -> float:
    """p as a float in (0, 1]."""
    mass = as_real(p, "top_p", fix="top_p is a probability mass in (0, 1]; 1 keeps all.")
    if not 0.0 < mass <= 1.0:
        raise ArgumentError(
            f"top_p must lie in (0, 1] (the probability mass the nucleus keeps); got {p!r}. "
            "Use 1.0 to keep every token."
        )
    return mass


def probabilities(logits: Any) -> np.ndarray:
    """softmax(z) per row, p_i = exp(z_i − max z) / Σ_j exp(z_j − max z); −∞ gives 0."""
    z = _logits(logits)
    e = np.exp(z - z.max(axis=1, keepdims=True))  # (B, V)
    return e / e.sum(axis=1, keepdims=True)


def entropy(probs: Any) -> np.ndarray:
    """H(p) = −Σ_i p_i ln p_i per row (the last axis), in nats (0 ln 0 = 0).

    Each row must be a probability distribution: entries >= 0 that sum to 1 (within 1e-6).
    """
    p = as_float_array(probs, "probabilities", finite=True)
    if p.ndim == 0 or p.shape[-1] == 0:
        raise ArgumentError(
            f"entropy needs probabilities [..., V] with V >= 1 (one distribution per row); got "
            f"shape {p.shape}. Pass probabilities(logits), or p[None] for one distribution."
        )
    if (p < 0).any():
        raise ArgumentError(
            f"entropy needs probabilities >= 0; got a smallest entry of {p.min()!r}. Pass "
            "probabilities(logits), not logits."
        )
    totals = p.sum(axis=-1)
    if (np.abs(totals - 1.0) > 1e-6).any():
        worst = float(totals.ravel()[np.argmax(np.abs(totals - 1.0).ravel())])
        raise ArgumentError(
            f"entropy needs each row to sum to 1 (a distribution); got a row summing to "
            f"{worst!r}. Normalise it first (p / p.sum(axis=-1, keepdims=True))."
        )
    logs = np.log(np.where(p > 0, p, 1.0))
    return -(p * logs).sum(axis=-1)


def greedy(logits: Any) -> np.ndarray:
    """[B] argmax_i z_i per row (ties: the lowest index)."""
    return np.argmax(_logits(logits), axis=1)


def temperature_scale(logits: Any, temperature: float) -> np.ndarray:
    """z / τ: τ < 1 sharpens softmax(z / τ), τ > 1 flattens it."""
    return _logits(logits) / check_temperature(temperature)


def top_k_filter(logits: Any, k: int) -> np.ndarray:
    """z with every token outside the k largest per row set to −∞ (ties: lower index kept)."""
    z = _logits(logits)
    k = check_top_k(k)
    if k >= z.shape[1]:
        return z.copy()
    order = np.argsort(-z, axis=1, kind="stable")  # (B, V), largest first, ties by index
    out = np.full_like(z, -np.inf)
    rows = np.arange(z.shape[0])[:, None]
    out[rows, order[:, :k]] = z[rows, order[:, :k]]
    return out


def top_p_filter(logits: Any, p: float) -> np.ndarray:
    """z keeping per row the fewest most-likely tokens whose softmax mass reaches p; rest −∞.

    Token i (in descending order of probability) is kept when the mass before it is < p, so the
    most likely token is always kept and p = 1 keeps every token of non-zero probability.
    """
    z = _logits(logits)
    p = check_top_p(p)
    probs = probabilities(z)  # (B, V)
    order = np.argsort(-z, axis=1, kind="stable")  # (B, V)
    rows = np.arange(z.shape[0])[:, None]
    sorted_probs = probs[rows, order]
    before = np.cumsum(sorted_probs, axis=1) - sorted_probs  # mass of the tokens ahead
    keep_sorted = before < p
    keep = np.zeros_like(keep_sorted)
    keep[rows, order] = keep_sorted
    return np.where(keep, z, -np.inf)


def sample(logits: Any, rng: SplitMix64) -> np.ndarray:
    """[B] draws from softmax(z) by inverse CDF: the first i with Σ_{j<=i} p_j > u · Σ p."""
    rng = generator(rng, "sample")
    probs = probabilities(logits)  # (B, V)
    cumulative = np.cumsum(probs, axis=1)
    u = rng.uniform(0.0, 1.0, (probs.shape[0], 1)) * cumulative[:, -1:]  # (B, 1)
    return np.minimum((cumulative <= u).sum(axis=1), probs.shape[1] - 1)


def next_tokens(
    logits: Any,
    rng: SplitMix64 | None = None,
    *,
    do_sample: bool = True,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> np.ndarray:
    """[B] next IDs: greedy, or a draw from softmax(filters(z / τ)) with top-k then top-p.

    Every option is checked, also those greedy decoding does not read; ``rng`` may be None
    only with ``do_sample=False``.
    """
    do_sample = as_flag(do_sample, "do_sample")
    check_temperature(temperature)
    if top_k is not None:
        check_top_k(top_k)
    if top_p is not None:
        check_top_p(top_p)
    if do_sample or rng is not None:
        rng = generator(rng, f"next_tokens (do_sample={do_sample})")
    if not do_sample:
        return greedy(logits)
    z = temperature_scale(logits, temperature)
    if top_k is not None:
        z = top_k_filter(z, top_k)
    if top_p is not None:
        z = top_p_filter(z, top_p)
    return sample(z, rng)
