"""Sampling from a decoder: next token from softmax(logits / τ), drawn with SplitMix64."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..errors import ArgumentError
from ..nn.decoder import Decoder, check_ids
from ..random import SplitMix64


def _check_temperature(temperature: Any) -> None:
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not np.isfinite(temperature)
        or temperature < 0
    ):
        raise ArgumentError(f"temperature must be a finite number ≥ 0; got {temperature!r}.")


def sample_next(logits: np.ndarray, temperature: float, rng: SplitMix64) -> np.ndarray:
    """[B] IDs: argmax when τ = 0, else the first i with Σ_{j ≤ i} p_j > u, p = softmax(z/τ)."""
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2 or logits.shape[1] == 0 or not np.all(np.isfinite(logits)):
        raise ArgumentError(
            f"sample_next needs finite logits [B, V] with V ≥ 1; got shape {logits.shape}."
        )
    _check_temperature(temperature)
    if not isinstance(rng, SplitMix64):
        raise ArgumentError(f"rng must be a SplitMix64 generator; got {type(rng).__name__}.")
    if temperature == 0:
        return np.argmax(logits, axis=-1)
    scaled = logits / temperature
    p = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)  # (B, V)
    u = rng.uniform(0.0, 1.0, (logits.shape[0], 1))  # (B, 1)
    cumulative = np.cumsum(p, axis=-1)
    return np.minimum((cumulative <= u).sum(axis=-1), logits.shape[-1] - 1)


def generate(
    model: Decoder,
    ids: Any,
    max_new_tokens: int,
    rng: SplitMix64,
    *,
    temperature: float = 1.0,
    context: int | None = None,
) -> np.ndarray:
    """[B, T + n]: append n tokens, each sampled from the last ``context`` positions' logits."""
    if not isinstance(model, Decoder):
        raise ArgumentError(f"generate needs a Decoder; got {type(model).__name__}.")
    out = check_ids(ids, model.vocab_size)
    if out.shape[1] == 0:
        raise ArgumentError("generate needs a prompt of at least one token per row.")
    if (
        isinstance(max_new_tokens, bool)
        or not isinstance(max_new_tokens, int)
        or max_new_tokens < 0
    ):
        raise ArgumentError(f"max_new_tokens must be an integer ≥ 0; got {max_new_tokens!r}.")
    _check_temperature(temperature)
    if context is not None and (not isinstance(context, int) or context < 1):
        raise ArgumentError(f"context must be a positive integer or None; got {context!r}.")
    if not isinstance(rng, SplitMix64):
        raise ArgumentError(f"rng must be a SplitMix64 generator; got {type(rng).__name__}.")
    with no_grad():
        for _ in range(max_new_tokens):
            window = out if context is None else out[:, -context:]
            logits = model(window).value[:, -1]  # (B, V)
            out = np.concatenate([out, sample_next(logits, temperature, rng)[:, None]], axis=1)
    return out
