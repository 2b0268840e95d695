"""Cross-entropy of next-token logits against integer targets, averaged over counted tokens.

loss = −(1/N) Σ_{counted i} log softmax(z_i)[y_i], N = the number of counted targets. It is built
from the engine's ``log_softmax`` and one product with a constant weight matrix W = one-hot(y) ⊙
counted / N, so the gradient with respect to the logits is (softmax(z_i) − one-hot(y_i)) / N on
counted rows and zero on the rest.

Logits beyond ±2²⁵⁶ take a second, equally exact chain: a row whose logits span more than
1.8e308 has log-probabilities below −1.8e308, which float64 writes as −∞ (and −∞ · 0 = NaN in the
weighted sum). There each counted row's loss is written as log Σ_j exp(z_j − m) − 2·(z_y/2 − m/2)
with m the row maximum (a constant: the loss does not depend on it), which never forms a difference
of two logits that overflows; its gradient is still (softmax − one-hot) / N. A mean loss that
itself exceeds float64 is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError, TokenError
from ..nn.module import as_tensor
from ..validate import as_integer, as_numpy, received

#: Logits within ±2²⁵⁶ take the weighted-sum chain: no log-probability there comes near −1.8e308.
WIDE_LOGITS = 2.0**256
_INT64_MAX = np.iinfo(np.int64).max


def _target_array(targets: Any, logits_shape: tuple[int, ...]) -> np.ndarray:
    expected = logits_shape[:-1]
    array = as_numpy(targets, "cross_entropy targets", kind="integer array", error=TokenError)
    if array.dtype.kind not in "iu":
        raise TokenError(
            f"cross_entropy targets must be integers (token IDs); got {received(targets)}, which "
            f"numpy reads as dtype {array.dtype}."
        )
    if array.shape != expected:
        raise ShapeError(
            f"cross_entropy needs one target per logit row: logits [..., V] of shape "
            f"{logits_shape} need targets of shape {expected}; got shape {array.shape}."
        )
    if array.dtype.kind == "u" and array.size and int(array.max()) > _INT64_MAX:
        raise TokenError(f"cross_entropy targets are token IDs below 2⁶³; got {int(array.max())}.")
    return array.astype(np.int64)


def cross_entropy(logits: Tensor, targets: Any, ignore_index: int | None = None) -> Tensor:
    """−(1/N) Σ_{yᵢ ≠ ignore} log softmax(zᵢ)[yᵢ] over logits [..., V] and targets [...]."""
    logits = as_tensor(logits, "cross_entropy logits")
    if ignore_index is not None:
        ignore_index = as_integer(
            ignore_index, "cross_entropy ignore_index", fix="Pass None or an integer such as -100."
        )
    if logits.ndim < 1 or logits.shape[-1] == 0:
        raise ShapeError(
            f"cross_entropy needs logits [..., V] with V ≥ 1 classes; got shape {logits.shape}."
        )
    vocab = logits.shape[-1]
    y = _target_array(targets, logits.shape).reshape(-1)  # (N_all,)
    counted = np.ones(y.shape, dtype=bool) if ignore_index is None else y != ignore_index
    outside = counted & ((y < 0) | (y >= vocab))
    if outside.any():
        first = int(y[outside][0])
        raise TokenError(
            f"cross_entropy targets must lie in [0, {vocab}) (or equal ignore_index="
            f"{ignore_index}); got {first}, in targets {received(targets)}."
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
    flat = logits.reshape(y.size, vocab)  # (N_all, V)
    if np.max(np.abs(logits.value)) > WIDE_LOGITS:
        return _wide_cross_entropy(flat, y, rows, count)
    weight = np.zeros((y.size, vocab))  # (N_all, V): one-hot(y) / N on counted rows
    weight[rows, y[rows]] = 1.0 / count
    log_probs = flat.log_softmax(axis=-1)  # (N_all, V)
    return -(log_probs * weight).sum()


def _wide_cross_entropy(flat: Tensor, y: np.ndarray, rows: np.ndarray, count: int) -> Tensor:
    """(1/N) Σᵢ [log Σⱼ exp(zᵢⱼ − mᵢ) − 2 (zᵢ,y/2 − mᵢ/2)], mᵢ = max_j zᵢⱼ (a constant)."""
    picked = flat[rows]  # (N, V): the counted rows
    peak = picked.value.max(axis=-1)  # (N,) row maxima, constants
    with np.errstate(over="ignore"):  # z − m below −1.8e308 is −∞, whose exp is the true 0
        shifted = picked - peak[:, None]  # (N, V), each row's maximum 0
        spread = shifted.exp().sum(axis=-1).log()  # (N,) in [0, ln V]
        gap = picked[np.arange(rows.size), y[rows]] * 0.5 - peak * 0.5  # (N,) (z_y − m)/2 ≤ 0
        loss = (spread * (1.0 / count)).sum() - (gap * (2.0 / count)).sum()
    if not np.isfinite(loss.value):
        raise ArgumentError(
            "cross_entropy: the mean loss exceeds the float64 range (above 1.8e308); got logits "
            f"from {float(picked.value.min()):.3g} to {float(peak.max()):.3g}, whose targets lie "
            "that far below their row's maximum. Logits this far apart mean the model has "
            "diverged: lower the learning rate."
        )
    return loss
