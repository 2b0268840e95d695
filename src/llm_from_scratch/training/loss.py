"""Cross-entropy of next-token logits against integer targets, averaged over counted tokens.

loss = −(1/N) Σ_{counted i} log softmax(z_i)[y_i], N = the number of counted targets. It is built
from the engine's ``log_softmax`` (shifted by the row maximum, so finite logits of any magnitude
are safe) and one product with a constant weight matrix W = one-hot(y) ⊙ counted / N, so the
gradient with respect to the logits is (softmax(z_i) − one-hot(y_i)) / N on counted rows and zero
on the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError, TokenError
from ..nn.module import as_tensor
from ..validate import as_numpy


def _target_array(targets: Any, expected: tuple[int, ...]) -> np.ndarray:
    array = as_numpy(targets, "cross_entropy targets", kind="integer array", error=TokenError)
    if array.dtype.kind not in "iu":
        raise TokenError(f"cross_entropy targets must be integers; got dtype {array.dtype}.")
    if array.shape != expected:
        raise ShapeError(
            f"cross_entropy needs one target per logit row: logits [..., V] with leading shape "
            f"{expected} need targets of shape {expected}; got {array.shape}."
        )
    return array.astype(np.int64)


def cross_entropy(logits: Tensor, targets: Any, ignore_index: int | None = None) -> Tensor:
    """−(1/N) Σ_{yᵢ ≠ ignore} log softmax(zᵢ)[yᵢ] over logits [..., V] and targets [...]."""
    logits = as_tensor(logits, "cross_entropy logits")
    if logits.ndim < 1 or logits.shape[-1] == 0:
        raise ShapeError(
            f"cross_entropy needs logits [..., V] with V ≥ 1 classes; got shape {logits.shape}."
        )
    vocab = logits.shape[-1]
    y = _target_array(targets, logits.shape[:-1]).reshape(-1)  # (N_all,)
    counted = np.ones(y.shape, dtype=bool) if ignore_index is None else y != ignore_index
    outside = counted & ((y < 0) | (y >= vocab))
    if outside.any():
        first = int(y[outside][0])
        raise TokenError(
            f"cross_entropy targets must lie in [0, {vocab}) (or equal ignore_index="
            f"{ignore_index}); got {first}."
        )
    count = int(counted.sum())
    if count == 0:
        raise ArgumentError(
            "cross_entropy has no target to average over: every target equals ignore_index="
            f"{ignore_index}. Count at least one token (a mean over none is undefined)."
        )
    if not np.all(np.isfinite(logits.value)):
        raise ArgumentError(
            "cross_entropy needs finite logits; got NaN or ±inf (the model has diverged: lower "
            "the learning rate or clip the gradient norm)."
        )
    rows = np.flatnonzero(counted)  # (N,)
    weight = np.zeros((y.size, vocab))  # (N_all, V): one-hot(y) / N on counted rows
    weight[rows, y[rows]] = 1.0 / count
    log_probs = logits.reshape(y.size, vocab).log_softmax(axis=-1)  # (N_all, V)
    return -(log_probs * weight).sum()
