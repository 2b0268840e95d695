"""Figures for the bug-zoo appendix: the mutant × check matrix and attention maps side by side.

- :func:`matrix_codes` / :func:`zoo_matrix_figure`: one row per mutant, one column per check, a
  cell filled where the check caught the mutant, blank where it missed it, grey where the check
  never ran the mutated piece (glyphs as well as colours, so no cell is read by colour alone);
- :func:`attention_maps_figure`: [T, T] attention maps next to each other on one colour scale,
  each titled with the variant that produced it;
- :func:`check_times_figure`: the seconds each check took, one bar per check on a log axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ArgumentError, ShapeError
from .style import INK, LIGHT, MUTED, PALETTE, BookFigure, new_figure

__all__ = [
    "STATUS_CODES",
    "attention_maps_figure",
    "causal_boundary",
    "check_times_figure",
    "matrix_codes",
    "zoo_matrix_figure",
]

STATUS_CODES = {"caught": 2, "missed": 1, "n/a": 0}  # how each status is drawn, strongest last
_FILL = {2: PALETTE.vermillion, 1: "white", 0: LIGHT}
_GLYPH = {2: "×", 1: "", 0: "–"}


def matrix_codes(statuses: Sequence[Sequence[str]]) -> np.ndarray:
    """[mutants, checks] integer codes (STATUS_CODES) for rows of status strings."""
    rows = [list(row) for row in statuses]
    if not rows or len({len(row) for row in rows}) != 1 or not rows[0]:
        raise ShapeError("matrix_codes needs a non-empty rectangle of statuses, one row each.")
    unknown = sorted({s for row in rows for s in row} - set(STATUS_CODES))
    if unknown:
        raise ArgumentError(f"statuses must be one of {list(STATUS_CODES)}; got {unknown}.")
    return np.array([[STATUS_CODES[s] for s in row] for row in rows], dtype=np.int64)


def zoo_matrix_figure(
    statuses: Sequence[Sequence[str]], mutants: Sequence[str], checks: Sequence[str]
) -> BookFigure:
    """The matrix: a filled × where the check caught the mutant, – where it cannot reach it."""
    codes = matrix_codes(statuses)
    if codes.shape != (len(mutants), len(checks)):
        raise ShapeError(
            f"statuses are {codes.shape[0]} × {codes.shape[1]}; got {len(mutants)} mutant and "
            f"{len(checks)} check labels."
        )
    fig, ax = new_figure(6.6, 0.24 * len(mutants) + 2.3)
    for (row, column), code in np.ndenumerate(codes):
        ax.add_patch(_cell(column, row, _FILL[int(code)], edge=MUTED if code == 1 else "white"))
        if _GLYPH[int(code)]:
            colour = "white" if code == 2 else INK
            ax.text(
                column + 0.5,
                row + 0.5,
                _GLYPH[int(code)],
                ha="center",
                va="center",
                fontsize=9,
                color=colour,
            )
    ax.set_xlim(0, len(checks))
    ax.set_ylim(len(mutants), 0)
    ax.set_xticks(np.arange(len(checks)) + 0.5)
    ax.set_xticklabels(checks, rotation=55, ha="left", rotation_mode="anchor", fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(len(mutants)) + 0.5)
    ax.set_yticklabels(mutants, fontsize=8)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    handles = [
        _cell(0, 0, _FILL[code], edge=MUTED if code == 1 else "white") for code in (2, 1, 0)
    ]
    ax.legend(
        handles,
        [
            "caught: the check fails",
            "missed: passes although it ran the piece",
            "n/a: never runs the piece",
        ],
        loc="upper center",
        bbox_to_anchor=(0.35, -0.01),
        ncol=1,
        fontsize=8,
        handlelength=1.0,
    )
    fig.tight_layout()
    return fig


def _cell(x: float, y: float, colour: str, *, edge: str) -> object:
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.04, y + 0.06), 0.92, 0.88, facecolor=colour, edgecolor=edge, lw=0.6)


def causal_boundary(tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of the staircase between key j = i (open) and j = i + 1 (blocked), row by row."""
    rows = np.arange(tokens)
    x = np.repeat(rows + 0.5, 2)  # the right edge of cell (i, i), twice per row
    y = np.stack([rows - 0.5, rows + 0.5], axis=1).reshape(-1)
    return x, y


def attention_maps_figure(maps: Mapping[str, np.ndarray], *, boundary: bool = True) -> BookFigure:
    """One heat map per entry (query rows, key columns), shared 0–1 scale, titled by its key.

    With ``boundary`` a dashed white staircase marks where a correct causal mask starts blocking.
    """
    if not maps:
        raise ArgumentError("attention_maps_figure needs at least one map.")
    arrays = {label: np.asarray(w, dtype=np.float64) for label, w in maps.items()}
    for label, w in arrays.items():
        if w.ndim != 2 or w.shape[0] != w.shape[1]:
            raise ShapeError(f"map {label!r} must be one [T, T] array; got shape {w.shape}.")
    fig, axes = new_figure(6.6, 2.9, ncols=len(arrays), squeeze=False)
    image = None
    for ax, (label, w) in zip(axes[0], arrays.items(), strict=True):
        image = ax.imshow(w, vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
        if boundary:
            ax.plot(*causal_boundary(w.shape[0]), color="white", ls="--", lw=1.2)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("key position", fontsize=8)
        ticks = np.arange(w.shape[0])
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.tick_params(labelsize=8)
    axes[0][0].set_ylabel("query position", fontsize=8)
    bar = fig.colorbar(image, ax=list(axes[0]), shrink=0.8, pad=0.02)
    bar.set_label("weight", fontsize=8)
    bar.ax.tick_params(labelsize=8)
    return fig


def check_times_figure(seconds: Mapping[str, float]) -> BookFigure:
    """One horizontal bar per check, in the given order (top first): its run time on a log axis."""
    if not seconds:
        raise ArgumentError("check_times_figure needs at least one check.")
    names = list(seconds)
    values = np.array([float(seconds[name]) for name in names])
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ArgumentError(f"check times must be positive seconds; got {values.tolist()}.")
    fig, ax = new_figure(6.6, 0.5 * len(names) + 1.2)
    rows = np.arange(len(names))
    ax.barh(rows, values * 1e3, color=PALETTE.blue)
    ax.set_yticks(rows, names)
    ax.invert_yaxis()  # the first check on top
    ax.set_xscale("log")
    ax.set_xlabel("milliseconds per run (this machine, this run)")
    ax.tick_params(colors=INK)
    fig.tight_layout()
    return fig
