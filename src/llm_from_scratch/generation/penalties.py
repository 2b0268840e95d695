"""A repetition penalty on logits: make the tokens a row already holds less likely.

Keskar et al. (CTRL, 2019) divide the logit of every token that already occurs in the sequence
by θ > 1 before the softmax. Dividing a negative logit by θ would raise it, so Hugging Face's
``RepetitionPenaltyLogitsProcessor`` multiplies negative logits by θ instead; this function
does the same. It is pure: it returns new logits and reads the rows' tokens, and composes with
the filters of :mod:`.sampling` (apply it first, then temperature, top-k, top-p).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ArgumentError, TokenError
from ..validate import as_integer, as_real
from .sampling import _logits

__all__ = ["repetition_penalty"]


def _seen_tokens(previous: Any, batch: int, vocab_size: int) -> list[np.ndarray]:
    """Each row's tokens as distinct int64 IDs in [0, V); one row of IDs per logits row."""
    if isinstance(previous, np.ndarray) and previous.ndim == 2:
        previous = list(previous)
    if not isinstance(previous, Sequence | np.ndarray) or isinstance(previous, str):
        raise ArgumentError(
            f"previous must be a list of token-ID sequences, one per row of logits; got "
            f"{type(previous).__name__}."
        )
    if len(previous) != batch:
        raise ArgumentError(
            f"previous must hold one token sequence per row of logits ({batch} rows); got "
            f"{len(previous)}."
        )
    rows = []
    for b, row in enumerate(previous):
        if isinstance(row, str) or not isinstance(row, Sequence | np.ndarray):
            raise ArgumentError(
                f"previous[{b}] must be a sequence of token IDs; got {type(row).__name__}."
            )
        ids = [as_integer(t, f"previous[{b}] token", minimum=0, error=TokenError) for t in row]
        if any(t >= vocab_size for t in ids):
            raise TokenError(
                f"previous[{b}] holds the token {max(ids)}, outside the vocabulary [0, "
                f"{vocab_size}) of the logits."
            )
        rows.append(np.unique(np.array(ids, dtype=np.int64)))
    return rows


def repetition_penalty(logits: Any, previous: Any, penalty: float) -> np.ndarray:
    """[B, V] logits with z_v → z_v / θ (z_v > 0) or z_v · θ (z_v ≤ 0) for each v already seen."""
    z = _logits(logits)  # (B, V), a fresh copy
    theta = as_real(
        penalty,
        "penalty",
        positive=True,
        fix="The penalty θ divides positive logits and multiplies negative ones: θ > 1 "
        "discourages repeats, θ = 1 changes nothing.",
    )
    for b, seen in enumerate(_seen_tokens(previous, z.shape[0], z.shape[1])):
        row = z[b, seen]  # (n_seen,)
        z[b, seen] = np.where(row > 0, row / theta, row * theta)
    return z
