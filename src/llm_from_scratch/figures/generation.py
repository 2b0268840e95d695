"""Figures for the generation chapter: temperature and entropy, top-k against top-p, work.

Each chart has a pure data function (tested in ``tests/figures/test_generation.py``) and a
drawing function that returns a figure and never shows it:

- :func:`temperature_sweep` / :func:`temperature_figure`: softmax(z / τ) at a few temperatures
  beside the entropy H(τ) over a range of them, with ln V (the uniform limit) drawn;
- :func:`truncation_sets` / :func:`truncation_figure`: the same probabilities sorted, with the
  tokens top-k keeps and the tokens top-p keeps;
- :func:`work_curves` / :func:`work_figure`: multiply-adds per generated token against its
  position, with and without the cache, counted from the tape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..generation.sampling import (
    entropy,
    probabilities,
    temperature_scale,
    top_k_filter,
    top_p_filter,
)
from ..generation.work import decoder_step_work
from ..nn.decoder import Decoder
from .style import CYCLE, INK, MUTED, PALETTE, BookFigure, new_figure

__all__ = [
    "TemperatureSweep",
    "TruncationSets",
    "WorkCurves",
    "temperature_figure",
    "temperature_sweep",
    "truncation_figure",
    "truncation_sets",
    "work_curves",
    "work_figure",
]


def _one_row(logits: object) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 1 or z.size < 2:
        raise ShapeError(f"these figures read one row of V >= 2 logits; got shape {z.shape}.")
    return z


@dataclass(frozen=True)
class TemperatureSweep:
    """softmax(z / τ) and its entropy H (nats) at each temperature τ."""

    temperatures: np.ndarray  # (n,)
    probabilities: np.ndarray  # (n, V)
    entropies: np.ndarray  # (n,)

    @property
    def uniform_entropy(self) -> float:
        """ln V, the entropy of the uniform distribution (the τ → ∞ limit)."""
        return float(np.log(self.probabilities.shape[1]))


def temperature_sweep(logits: object, temperatures: Sequence[float]) -> TemperatureSweep:
    """p_τ = softmax(z / τ) and H(p_τ) = −Σ p ln p for every τ in ``temperatures``."""
    z = _one_row(logits)
    taus = np.asarray(temperatures, dtype=np.float64)
    if taus.ndim != 1 or taus.size == 0:
        raise ArgumentError("temperatures must be a non-empty list of numbers > 0.")
    probs = np.concatenate([probabilities(temperature_scale(z[None], float(t))) for t in taus])
    return TemperatureSweep(taus, probs, entropy(probs))


def temperature_figure(
    sweep: TemperatureSweep, bars: TemperatureSweep, labels: Sequence[str] | None = None
) -> BookFigure:
    """Left: softmax(z / τ) at each of bars' τ; right: sweep's H(τ), bars' τ as dots, ln V."""
    fig, (left, right) = new_figure(6.7, 3.6, ncols=2)
    vocab = bars.probabilities.shape[1]
    names = list(labels) if labels is not None else [str(i) for i in range(vocab)]
    positions = np.arange(vocab)
    count = bars.temperatures.size
    width = 0.8 / count
    for i, (tau, probs) in enumerate(zip(bars.temperatures, bars.probabilities, strict=True)):
        left.bar(
            positions + (i - (count - 1) / 2) * width,
            probs,
            width,
            color=CYCLE[i % len(CYCLE)],
            label=f"τ = {tau:g}",
        )
    left.set_xticks(positions, names)
    left.set_xlabel("token")
    left.set_ylabel("probability")
    left.legend(fontsize=8)
    right.plot(sweep.temperatures, sweep.entropies, color=INK, label="H(softmax(z / τ))")
    for i, (tau, h) in enumerate(zip(bars.temperatures, bars.entropies, strict=True)):
        right.plot([tau], [h], "o", color=CYCLE[i % len(CYCLE)], markersize=6)
    right.axhline(sweep.uniform_entropy, color=MUTED, linestyle="--", label="ln V (uniform)")
    right.set_xscale("log")
    right.set_xlabel("temperature τ (log scale)")
    right.set_ylabel("entropy (nats)")
    right.set_ylim(0.0, sweep.uniform_entropy * 1.1)
    right.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class TruncationSets:
    """One distribution in descending order with the tokens top-k and top-p keep."""

    order: np.ndarray  # (V,) token IDs, most likely first
    sorted_probabilities: np.ndarray  # (V,)
    top_k_kept: np.ndarray  # (V,) bool, in the sorted order
    top_p_kept: np.ndarray  # (V,) bool, in the sorted order
    k: int
    p: float

    @property
    def kept_mass(self) -> tuple[float, float]:
        """The probability mass each rule keeps: (top-k, top-p)."""
        s = self.sorted_probabilities
        return float(s[self.top_k_kept].sum()), float(s[self.top_p_kept].sum())


def truncation_sets(logits: object, k: int, p: float) -> TruncationSets:
    """Which tokens top_k_filter(z, k) and top_p_filter(z, p) keep, in descending order."""
    z = _one_row(logits)
    order = np.argsort(-z, kind="stable")
    probs = probabilities(z[None])[0]
    kept_k = np.isfinite(top_k_filter(z[None], k)[0])
    kept_p = np.isfinite(top_p_filter(z[None], p)[0])
    return TruncationSets(order, probs[order], kept_k[order], kept_p[order], int(k), float(p))


def truncation_figure(sets: TruncationSets, labels: Sequence[str] | None = None) -> BookFigure:
    """Two panels of the sorted probabilities: kept tokens coloured, removed ones grey."""
    fig, axes = new_figure(6.7, 3.2, ncols=2, sharey=True)
    names = [labels[i] if labels is not None else str(i) for i in sets.order]
    x = np.arange(sets.order.size)
    titles = (f"top-k, k = {sets.k}", f"top-p, p = {sets.p:g}")
    for ax, kept, title, colour in zip(
        axes,
        (sets.top_k_kept, sets.top_p_kept),
        titles,
        (PALETTE.blue, PALETTE.vermillion),
        strict=True,
    ):
        ax.bar(x, sets.sorted_probabilities, color=np.where(kept, colour, "#BBBBBB"))
        ax.set_xticks(x, names)
        ax.set_title(title)
        ax.set_xlabel("token, most likely first")
    axes[0].set_ylabel("probability")
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class WorkCurves:
    """Multiply-adds to produce the token at each position, with and without the cache."""

    positions: np.ndarray  # (n,) the position whose logits are computed
    cached: np.ndarray  # (n,)
    uncached: np.ndarray  # (n,)


def work_curves(model: Decoder, lengths: Sequence[int]) -> WorkCurves:
    """decoder_step_work at each length, cached and not (counted from the tape, exact)."""
    lengths = [int(t) for t in lengths]
    if not lengths:
        raise ArgumentError("work_curves needs at least one length.")
    cached = np.array([decoder_step_work(model, t, cached=True) for t in lengths])
    uncached = np.array([decoder_step_work(model, t, cached=False) for t in lengths])
    return WorkCurves(np.array(lengths) - 1, cached, uncached)


def work_figure(
    curves: WorkCurves, measured: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
) -> BookFigure:
    """Counted multiply-adds per token against position; optionally the stored timings beside."""
    ncols = 1 if measured is None else 2
    fig, axes = new_figure(6.7, 3.4 * ncols, nrows=ncols, squeeze=False)  # stacked panels
    ax = axes[0, 0]
    ax.plot(curves.positions, curves.uncached, color=PALETTE.vermillion, label="no cache")
    ax.plot(curves.positions, curves.cached, color=PALETTE.blue, label="KV cache")
    ax.set_xlabel("position of the new token")
    ax.set_ylabel("multiply-adds per token (counted)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    if measured is not None:
        centres, cached_s, uncached_s = measured
        right = axes[1, 0]
        right.plot(
            centres, np.asarray(uncached_s) * 1e3, "o-", color=PALETTE.vermillion, label="no cache"
        )
        right.plot(centres, np.asarray(cached_s) * 1e3, "o-", color=PALETTE.blue, label="KV cache")
        right.set_xlabel("position of the new token")
        right.set_ylabel("ms per token (stored run)")
        right.set_ylim(bottom=0.0)
        right.legend(fontsize=8)
        right.tick_params(colors=INK)
    fig.tight_layout()
    return fig
