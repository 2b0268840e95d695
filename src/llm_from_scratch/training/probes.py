"""Looking inside a trained decoder: per-layer attention maps and the induction-head score."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..errors import ArgumentError, ShapeError, TokenError
from ..nn.decoder import Decoder, check_ids
from ..nn.positions import sinusoidal_encoding
from ..validate import as_numpy, received
from .data import IGNORE_INDEX


def attention_maps(model: Decoder, ids: Any) -> list[np.ndarray]:
    """One [B, H, T, T] array of attention weights per block, from the decoder's forward pass."""
    if not isinstance(model, Decoder):
        raise ArgumentError(f"attention_maps needs a Decoder; got {received(model)}.")
    array = as_numpy(ids, "attention_maps ids", kind="[B, T] integer array", error=TokenError)
    if array.dtype.kind not in "iu":
        raise TokenError(
            f"attention_maps reads token IDs, integers [B, T]; got {received(ids)} (numpy reads "
            f"it as dtype {array.dtype})."
        )
    ids = check_ids(array, model.vocab_size)
    maps = []
    with no_grad():
        x = model.embedding(ids)  # (B, T, D)
        if model.positions == "sinusoidal":
            x = x + sinusoidal_encoding(ids.shape[1], model.model_width)
        for block in model.blocks:
            stages = block.stages(x)
            maps.append(stages.weights.value)  # (B, H, T, T)
            x = stages.output
    return maps


def induction_scores(weights: np.ndarray, targets: Any) -> np.ndarray:
    """[H]: mean weight from each counted query t to key t − L + 1 (after x_t's first copy).

    ``targets`` [B, T] from :func:`induction_batch`: row b's first counted position is L_b, so the
    query at t (in the repeated half) has its earlier occurrence at t − L_b and the token to copy
    at t − L_b + 1. A score near 1 marks an induction head.
    """
    w = as_numpy(weights, "induction_scores weights", kind="array [B, H, T, T]")
    y = as_numpy(
        targets, "induction_scores targets", kind="integer array [B, T]", error=TokenError
    )
    if w.dtype.kind not in "iuf":
        raise ArgumentError(
            f"induction_scores weights must be real numbers; got dtype {w.dtype}, shape {w.shape}."
        )
    if y.dtype.kind not in "iu":
        raise TokenError(
            f"induction_scores targets must be integers (token IDs or IGNORE_INDEX); got dtype "
            f"{y.dtype} (shape {y.shape})."
        )
    if w.ndim != 4 or y.ndim != 2 or w.shape[0] != y.shape[0] or w.shape[2:] != (y.shape[1],) * 2:
        raise ShapeError(
            f"induction_scores needs weights [B, H, T, T] and targets [B, T]; got {w.shape} and "
            f"{y.shape}."
        )
    if w.size and not np.all(np.isfinite(w)):
        raise ArgumentError(
            f"induction_scores weights must be finite attention weights; got NaN or ±inf in shape "
            f"{w.shape}."
        )
    totals, count = np.zeros(w.shape[1]), 0
    for b in range(y.shape[0]):
        counted = np.flatnonzero(y[b] != IGNORE_INDEX)
        if counted.size == 0:
            continue
        length = int(counted[0])
        totals += w[b][:, counted, counted - length + 1].sum(axis=-1)  # (H,)
        count += counted.size
    if count == 0:
        raise ArgumentError("induction_scores found no counted target in the batch.")
    return totals / count
