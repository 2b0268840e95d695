"""Figures for the training chapter: loss curves, side-by-side runs and learned attention maps.

Every chart has a pure data function (tested in ``tests/figures/test_training.py``) and a
drawing function that returns a figure and never shows it:

- :func:`moving_average` / :func:`loss_curve_figure`: per-step losses, their trailing mean,
  evaluation points and horizontal baselines (ln V, a bigram model);
- :func:`side_by_side_figure`: several runs of one budget, loss beside gradient norm, with the
  clipping threshold drawn;
- :func:`induction_targets` / :func:`attention_map_figure`: one head's attention weights for one
  sequence, with the key an induction head should read (the token after the query token's
  earlier occurrence) marked on every counted query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..validate import positive_int
from .style import CYCLE, INK, MUTED, PALETTE, BookFigure, new_figure

__all__ = [
    "Curve",
    "attention_map_figure",
    "induction_targets",
    "loss_curve_figure",
    "moving_average",
    "side_by_side_figure",
]


def moving_average(values: Sequence[float] | np.ndarray, window: int) -> np.ndarray:
    """Trailing mean: out[i] = mean(values[max(0, i − w + 1) : i + 1]), same length as values."""
    window = positive_int(window, "moving_average window")
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ShapeError(f"moving_average reads a 1-D series; got shape {x.shape}.")
    sums = np.concatenate([[0.0], np.cumsum(x)])  # (N + 1,)
    ends = np.arange(1, x.size + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)


@dataclass(frozen=True)
class Curve:
    """One run on a loss chart: per-step losses and optional (step, value) evaluations."""

    label: str
    losses: np.ndarray
    eval_steps: np.ndarray | None = None
    eval_values: np.ndarray | None = None


def _curve(
    label: str, losses: Sequence[float], evals: Sequence[tuple[int, float]] | None
) -> Curve:
    values = np.asarray(losses, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ShapeError(f"curve {label!r}: losses must be a non-empty 1-D series.")
    if not evals:
        return Curve(label, values)
    steps, points = zip(*evals, strict=True)
    return Curve(label, values, np.asarray(steps, dtype=np.int64), np.asarray(points, float))


def loss_curve_figure(
    runs: Mapping[str, Sequence[float]],
    *,
    evals: Mapping[str, Sequence[tuple[int, float]]] | None = None,
    baselines: Mapping[str, float] | None = None,
    window: int = 1,
    ylabel: str = "loss (nats per token)",
    title: str | None = None,
    log_y: bool = False,
) -> BookFigure:
    """Per-step loss of each run (faint), its trailing mean over ``window`` steps, evaluations
    as markers and each baseline as a dashed horizontal line."""
    if not runs:
        raise ArgumentError("loss_curve_figure needs at least one run.")
    evals = evals or {}
    curves = [_curve(label, losses, evals.get(label)) for label, losses in runs.items()]
    fig, ax = new_figure(6.4, 3.6)
    for colour, curve in zip(CYCLE, curves, strict=False):
        steps = np.arange(curve.losses.size)
        if window > 1:
            ax.plot(steps, curve.losses, color=colour, alpha=0.25, lw=0.8)
        ax.plot(steps, moving_average(curve.losses, window), color=colour, label=curve.label)
        if curve.eval_steps is not None:
            ax.plot(
                curve.eval_steps,
                curve.eval_values,
                "o",
                color=colour,
                markeredgecolor=INK,
                markeredgewidth=0.6,
                label=f"{curve.label}: held-out evaluation",
            )
    for (label, value), style in zip((baselines or {}).items(), ("--", ":", "-."), strict=False):
        ax.axhline(value, color=MUTED, ls=style, lw=1.2, label=label)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major")
    ax.legend(loc="best")
    fig.tight_layout()
    return fig


def side_by_side_figure(
    runs: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    clip: float | None = None,
    window: int = 1,
) -> BookFigure:
    """Two panels over the same steps: each run's loss (trailing mean) and its gradient norm
    before clipping, with the clipping threshold as a dashed line."""
    if not runs:
        raise ArgumentError("side_by_side_figure needs at least one run.")
    fig, (loss_ax, norm_ax) = new_figure(6.7, 6.4, nrows=2)  # stacked: legible in the column
    styles = ("-", "--", "-.", ":")
    for i, (label, (losses, norms)) in enumerate(runs.items()):
        colour, style = CYCLE[i % len(CYCLE)], styles[i % len(styles)]
        losses = np.asarray(losses, dtype=np.float64)
        norms = np.asarray(norms, dtype=np.float64)
        if losses.shape != norms.shape or losses.ndim != 1:
            raise ShapeError(f"run {label!r}: losses and norms must be 1-D series of one length.")
        steps = np.arange(losses.size)
        loss_ax.plot(steps, moving_average(losses, window), color=colour, ls=style, label=label)
        norm_ax.plot(steps, norms, color=colour, ls=style, lw=1.2, label=label)
    if clip is not None:
        norm_ax.axhline(clip, color=INK, ls=":", lw=1.4, label="clipping threshold")
    loss_ax.set_ylabel("training loss (nats per token)")
    norm_ax.set_ylabel("gradient norm before clipping")
    norm_ax.set_yscale("log")
    for ax in (loss_ax, norm_ax):
        ax.set_xlabel("step")
        ax.grid(True, which="major")
    loss_ax.legend(loc="upper right")
    norm_ax.legend(loc="upper right")
    fig.tight_layout()
    return fig


def induction_targets(targets: Sequence[int] | np.ndarray, ignore_index: int) -> np.ndarray:
    """[(query t, key t − L + 1)] for the counted targets of one induction row.

    The first counted position of a row is L (the start of the repeat), so the query token at t
    first occurred at t − L, and the token to copy sits one later, at key t − L + 1.
    """
    y = np.asarray(targets)
    if y.ndim != 1:
        raise ShapeError(f"induction_targets reads one row of targets [T]; got shape {y.shape}.")
    counted = np.flatnonzero(y != ignore_index)
    if counted.size == 0:
        raise ArgumentError("induction_targets found no counted target in the row.")
    length = int(counted[0])
    return np.stack([counted, counted - length + 1], axis=1)


def attention_map_figure(
    weights: np.ndarray, marks: np.ndarray | None = None, *, title: str | None = None
) -> BookFigure:
    """Heat map of one head's [T, T] weights (query rows, key columns), marks as open squares."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ShapeError(f"attention_map_figure draws one [T, T] map; got shape {w.shape}.")
    fig, ax = new_figure(5.4, 4.6)
    image = ax.imshow(w, vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
    if marks is not None and len(marks):
        m = np.asarray(marks)
        ax.plot(
            m[:, 1],
            m[:, 0],
            "s",
            markerfacecolor="none",
            markeredgecolor=PALETTE.orange,
            markersize=5,
            markeredgewidth=1.0,
            label="token after the earlier occurrence",
        )
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("key position (attended to)")
    ax.set_ylabel("query position")
    if title:
        ax.set_title(title)
    fig.colorbar(image, ax=ax, label="attention weight", shrink=0.85)
    fig.tight_layout()
    return fig
