"""Why attention divides its scores by √d_k: measured with the engine's own ops.

:func:`score_scale_study` draws queries and keys with independent unit-variance coordinates
(SplitMix64), forms the dot-product scores with the engine's ``matmul``, and for each head width
d_k measures, with and without the 1/√d_k factor,

- the variance of the scores (it grows like d_k without the factor and stays near 1 with it);
- the mean largest softmax weight of a row (it approaches 1 as an unscaled softmax saturates);
- the mean norm of the gradient of a fixed random linear read-out of the weights with respect to
  the logits fed to the softmax (it vanishes as the softmax saturates), by ``backward``.

:func:`score_scale_figure` draws the three measurements side by side. The numbers are tested in
``tests/figures/test_scaled_attention.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError
from ..random import SplitMix64
from ..validate import as_integer
from .style import PALETTE, BookFigure, new_figure

__all__ = ["ScaleStudy", "score_scale_figure", "score_scale_study"]


@dataclass(frozen=True)
class ScaleStudy:
    """Per head width: score variance, mean largest weight, mean logit-gradient norm."""

    widths: tuple[int, ...]
    variance: dict[str, np.ndarray]  # "unscaled" / "scaled" -> one value per width
    max_weight: dict[str, np.ndarray]
    gradient_norm: dict[str, np.ndarray]


def _row_measures(logits: np.ndarray, upstream: np.ndarray) -> tuple[float, float]:
    """Mean largest softmax weight and mean ‖∂(Σ upstream ⊙ softmax)/∂logits‖ per row."""
    leaf = Tensor(logits, requires_grad=True)  # (rows, 1, keys)
    weights = leaf.softmax(axis=-1)
    (weights * Tensor(upstream)).sum().backward()
    largest = float(weights.value.max(axis=-1).mean())
    gradient = float(np.linalg.norm(leaf.grad, axis=-1).mean())
    return largest, gradient


def score_scale_study(widths: Sequence[int], keys: int, rows: int, seed: int) -> ScaleStudy:
    """Measure scores q·k (and q·k/√d_k) for ``rows`` queries against ``keys`` keys per width."""
    keys = as_integer(keys, "keys", minimum=2)
    rows = as_integer(rows, "rows", minimum=2)
    seed = as_integer(seed, "seed", minimum=0)
    widths = tuple(int(d) for d in widths)
    if not widths or min(widths) < 1:
        raise ArgumentError(f"widths must be positive head widths; got {widths!r}.")
    rng = SplitMix64(seed)
    upstream = rng.normal((rows, 1, keys))  # one fixed read-out of each row's weights
    variance = {"unscaled": [], "scaled": []}
    max_weight = {"unscaled": [], "scaled": []}
    gradient_norm = {"unscaled": [], "scaled": []}
    for width in widths:
        q = Tensor(rng.normal((rows, 1, width)))  # (rows, 1, d_k)
        k = Tensor(rng.normal((rows, keys, width)))  # (rows, S, d_k)
        scores = (q @ k.transpose(-1, -2)).value  # (rows, 1, S), the engine's matmul
        for label, factor in (("unscaled", 1.0), ("scaled", 1.0 / math.sqrt(width))):
            logits = scores * factor
            variance[label].append(float(logits.var()))
            largest, gradient = _row_measures(logits, upstream)
            max_weight[label].append(largest)
            gradient_norm[label].append(gradient)

    def arrays(table: dict[str, list[float]]) -> dict[str, np.ndarray]:
        return {label: np.array(values) for label, values in table.items()}

    return ScaleStudy(widths, arrays(variance), arrays(max_weight), arrays(gradient_norm))


_STYLE = {
    "unscaled": {"color": PALETTE.vermillion, "marker": "s", "ls": "--", "label": "q·k"},
    "scaled": {"color": PALETTE.blue, "marker": "o", "ls": "-", "label": "q·k / √d_k"},
}


def score_scale_figure(study: ScaleStudy) -> BookFigure:
    """Three stacked panels against d_k (log axis): score variance, largest weight, gradient."""
    fig, axes = new_figure(6.7, 7.8, nrows=3, sharex=True)  # stacked: legible in the column
    panels = (
        (study.variance, "variance of the scores", True),
        (study.max_weight, "mean largest weight in a row", False),
        (study.gradient_norm, "mean ‖gradient at the logits‖", False),
    )
    for ax, (table, ylabel, log_y) in zip(axes, panels, strict=True):
        for label, values in table.items():
            ax.plot(study.widths, values, **_STYLE[label])
        ax.set_xscale("log", base=2)
        if log_y:
            ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major")
    axes[-1].set_xlabel("head width d_k")
    axes[1].set_ylim(0.0, 1.05)
    axes[2].set_ylim(bottom=0.0)
    axes[0].legend(loc="upper left")
    fig.tight_layout()
    return fig
