"""Figures for the SwiGLU chapter, drawn from the ``swiglu-feed-forward-v1`` trace.

The trace figures take a :class:`~llm_from_scratch.traces.GatedEvidence`, the trace read back by
:func:`~llm_from_scratch.traces.read_swiglu_trace`; none of them parses text. Each figure has a
pure function computing what it shows (tested without drawing) and a drawing function returning
a matplotlib ``Figure``:

- :func:`branch_rows` / :func:`branch_table_figure` — per position: X, g = XW_g, SiLU(g),
  u = XW_u, h = SiLU(g) ⊙ u and Y;
- :func:`independence_rows` / :func:`independence_figure` — one position's input replaced, every
  output row compared before and after;
- :func:`gradient_panels` / :func:`gradient_figure` — each position's local reverse gradients
  beside the three shared weight gradients, which sum over positions;
- :func:`activation_curves` / :func:`activation_figure` — SiLU against tanh and ReLU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from ..autodiff import Tensor
from ..traces.swiglu import GatedEvidence
from .style import FIGURE_DPI, INK, MUTED, PALETTE, BookFigure, styled
from .tables import markdown_table

__all__ = [
    "ActivationCurves",
    "GradientPanels",
    "IndependenceRow",
    "activation_curves",
    "activation_figure",
    "branch_rows",
    "branch_table_figure",
    "gradient_figure",
    "gradient_panels",
    "independence_figure",
    "independence_rows",
    "markdown_table",
    "vector_text",
]

# Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
_BLUE, _ORANGE, _GREEN, _PINK, _SKY, _GREY = (
    PALETTE.blue,
    PALETTE.orange,
    PALETTE.bluish_green,
    PALETTE.reddish_purple,
    PALETTE.sky_blue,
    "#BBBBBB",
)


def number_text(value: float) -> str:
    """Six decimals with trailing zeros dropped: 0.731059, 2, -0.268941 (never -0)."""
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def vector_text(values: np.ndarray) -> str:
    """A row as [-0.268941, 0, 0.731059]."""
    return "[" + ", ".join(number_text(v) for v in np.ravel(values)) + "]"


# --- per-position branch table -------------------------------------------------------------------

_BRANCH_STAGES = [
    ("X", "input X_p", "X"),
    ("A", "gate g = X_p W_g", "A"),
    ("S", "SiLU(g)", "S"),
    ("U", "up u = X_p W_u", "U"),
    ("H", "h = SiLU(g) ⊙ u", "H"),
    ("Y", "output Y_p = h W_2", "Y"),
]


def branch_rows(evidence: GatedEvidence) -> list[tuple[str, list[np.ndarray]]]:
    """(stage label, [row at position 0, row at position 1, ...]) in forward order."""
    return [
        (label, [getattr(evidence, field)[p] for p in range(evidence.positions)])
        for _, label, field in _BRANCH_STAGES
    ]


def _text_table(
    ax: Axes,
    header: list[str],
    rows: list[list[str]],
    colours: list[str] | None = None,
    widths: list[float] | None = None,
) -> None:
    ax.axis("off")
    table = ax.table(
        cellText=rows,
        colLabels=header,
        cellLoc="center",
        loc="center",
        colWidths=widths,
    )
    table.auto_set_font_size(False)
    table.set_fontsize(8.5)
    table.scale(1.0, 1.45)
    for (r, _c), cell in table.get_celld().items():
        cell.set_edgecolor(MUTED)
        if r == 0:
            cell.set_facecolor("#EEEEEE")
            cell.set_text_props(weight="bold")
        elif colours is not None:
            cell.set_facecolor(colours[r - 1])


@styled
def branch_table_figure(evidence: GatedEvidence) -> BookFigure:
    """A table: one row per stage, one column per position."""
    rows = branch_rows(evidence)
    header = ["stage"] + [f"position {p}" for p in range(evidence.positions)]
    cells = [[label] + [vector_text(v) for v in values] for label, values in rows]
    tint = {"X": _SKY, "A": _ORANGE, "S": _ORANGE, "U": _GREEN, "H": _PINK, "Y": _BLUE}
    colours = [tint[key] + "40" for key, _, _ in _BRANCH_STAGES]
    width = 2.2 + 2.6 * evidence.positions
    fig = BookFigure(figsize=(width, 3.0), dpi=FIGURE_DPI)
    _text_table(fig.add_subplot(), header, cells, colours)
    fig.suptitle("Each position through both branches, with the same three weights", fontsize=10)
    return fig


# --- independence probe --------------------------------------------------------------------------


@dataclass(frozen=True)
class IndependenceRow:
    """One position before and after the probe."""

    position: int
    input_before: np.ndarray
    input_after: np.ndarray
    output_before: np.ndarray
    output_after: np.ndarray
    input_changed: bool
    output_unchanged: bool  # exact equality


def independence_rows(evidence: GatedEvidence) -> list[IndependenceRow]:
    """Every position's input and output before and after replacing the changed position."""
    x_after = evidence.X.copy()
    x_after[evidence.changed_position] = evidence.replacement
    return [
        IndependenceRow(
            position=p,
            input_before=evidence.X[p],
            input_after=x_after[p],
            output_before=evidence.Y[p],
            output_after=evidence.Y_after[p],
            input_changed=bool(np.any(x_after[p] != evidence.X[p])),
            output_unchanged=bool(evidence.unchanged[p]),
        )
        for p in range(evidence.positions)
    ]


@styled
def independence_figure(evidence: GatedEvidence) -> BookFigure:
    """A table: input and output of every position, before and after the replacement."""
    rows = independence_rows(evidence)
    header = ["position", "input before", "input after", "output before", "output after", "output"]
    cells, colours = [], []
    for row in rows:
        verdict = "exactly unchanged" if row.output_unchanged else "changed"
        cells.append(
            [
                str(row.position),
                vector_text(row.input_before),
                vector_text(row.input_after),
                vector_text(row.output_before),
                vector_text(row.output_after),
                verdict,
            ]
        )
        colours.append((_ORANGE if row.input_changed else _GREEN) + "40")
    fig = BookFigure(figsize=(9.0, 0.9 + 0.45 * len(rows)), dpi=FIGURE_DPI)
    widths = [0.09, 0.14, 0.14, 0.22, 0.22, 0.19]
    _text_table(fig.add_subplot(), header, cells, colours, widths)
    fig.suptitle(
        f"Replace position {evidence.changed_position}'s input; compare every output row",
        fontsize=10,
    )
    return fig


# --- local gradients and shared sums -------------------------------------------------------------


@dataclass(frozen=True)
class GradientPanels:
    """What the gradient figure shows: local rows per position, shared matrices with formulas."""

    local_labels: list[str]  # G, dH, dA, dU, dX
    local: list[list[np.ndarray]]  # [position][label] row vectors
    shared: list[tuple[str, str, np.ndarray]]  # (parameter name, Σ formula, gradient)


def gradient_panels(evidence: GatedEvidence) -> GradientPanels:
    """Per-position G, dH, dA, dU, dX; then dW_g = Σ XᵀdA, dW_u = Σ XᵀdU, dW_2 = Σ HᵀG."""
    labels = ["G", "dH", "dA", "dU", "dX"]
    local = [
        [evidence.G[p], evidence.dH[p], evidence.dA[p], evidence.dU[p], evidence.dX[p]]
        for p in range(evidence.positions)
    ]
    formulas = ["Σ_p X_pᵀ dA_p", "Σ_p X_pᵀ dU_p", "Σ_p H_pᵀ G_p"]
    shared = [
        (name, formula, grad)
        for (name, grad), formula in zip(evidence.weight_gradients.items(), formulas, strict=True)
    ]
    return GradientPanels(local_labels=labels, local=local, shared=shared)


_CELL_W, _CELL_H = 1.7, 0.6  # data units of one matrix cell
_INCH_PER_UNIT = 0.55  # sized so two positions (or the shared sums) fit the 672 px column


def _draw_matrix(
    ax: Axes, x0: float, y0: float, values: np.ndarray, title: str, colour: str
) -> float:
    """Draw a labelled matrix with its top-left corner at (x0, y0); return its height."""
    values = np.atleast_2d(values)
    rows, cols = values.shape
    ax.text(x0, y0 - 0.12, title, fontsize=8, va="bottom", ha="left")
    for r in range(rows):
        for c in range(cols):
            x, y = x0 + c * _CELL_W, y0 + r * _CELL_H
            ax.add_patch(
                Rectangle(
                    (x, y),
                    _CELL_W,
                    _CELL_H,
                    facecolor=colour,
                    edgecolor=INK,
                    alpha=0.3,
                    lw=0.8,
                )
            )
            ax.text(
                x + _CELL_W / 2,
                y + _CELL_H / 2,
                number_text(values[r, c]),
                ha="center",
                va="center",
                fontsize=8,
            )
    return rows * _CELL_H


@styled
def gradient_figure(evidence: GatedEvidence) -> BookFigure:
    """Top: each position's local reverse gradients. Below: the three shared weight sums."""
    panels = gradient_panels(evidence)
    colours = [_BLUE, _PINK, _ORANGE, _GREEN, _SKY]
    widest = max(
        [len(row) for rows in panels.local for row in rows]
        + [g.shape[1] for _, _, g in panels.shared]
    )
    column = widest * _CELL_W + 0.8
    columns = max(len(panels.local), 1)
    step = _CELL_H + 0.75
    local_height = len(panels.local_labels) * step
    # The shared sums sit below the local gradients, in the same columns, row by row.
    shared_at, y, row_height = [], local_height + 1.4, 0.0
    for i, (_, _, grad) in enumerate(panels.shared):
        if i and i % columns == 0:
            y, row_height = y + row_height + 1.1, 0.0
        shared_at.append(((i % columns) * column, y))
        row_height = max(row_height, grad.shape[0] * _CELL_H)
    height = y + row_height + 0.3
    width = columns * column
    fig = BookFigure(
        figsize=(_INCH_PER_UNIT * width + 0.3, _INCH_PER_UNIT * (height + 1.0) + 0.5),
        dpi=FIGURE_DPI,
    )
    ax = fig.add_subplot()
    for p, rows in enumerate(panels.local):
        for k, (label, row) in enumerate(zip(panels.local_labels, rows, strict=True)):
            _draw_matrix(
                ax, p * column, 0.5 + k * step, row, f"{label} at position {p}", colours[k]
            )
    for (name, formula, grad), (x, y) in zip(panels.shared, shared_at, strict=True):
        _draw_matrix(ax, x, y, grad, f"{name} = {formula}", _GREY)
    ax.axhline(local_height + 0.55, color=MUTED, lw=0.8, ls="--")
    ax.set_xlim(-0.2, width)
    ax.set_ylim(height + 0.3, -0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.92)
    fig.suptitle(
        "Local reverse gradients per position (top);\nshared weight gradients sum them (below)",
        fontsize=10,
    )
    return fig


# --- activations ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActivationCurves:
    """z and the three activations evaluated on it by the engine's ops."""

    z: np.ndarray
    silu: np.ndarray
    tanh: np.ndarray
    relu: np.ndarray

    @property
    def silu_minimum(self) -> tuple[float, float]:
        """(z, SiLU(z)) at the sampled minimum of SiLU."""
        k = int(np.argmin(self.silu))
        return float(self.z[k]), float(self.silu[k])


def activation_curves(low: float = -6.0, high: float = 6.0, count: int = 241) -> ActivationCurves:
    """SiLU, tanh and ReLU on ``count`` evenly spaced points of [low, high]."""
    z = np.linspace(low, high, count)
    t = Tensor(z)
    return ActivationCurves(z=z, silu=t.silu().value, tanh=t.tanh().value, relu=t.relu().value)


@styled
def activation_figure(curves: ActivationCurves) -> BookFigure:
    """SiLU against tanh and ReLU, with the band (0, 1) a probability would stay in."""
    fig = BookFigure(figsize=(6.4, 3.8), dpi=FIGURE_DPI)
    ax = fig.add_subplot()
    ax.axhspan(0.0, 1.0, color=_GREY, alpha=0.25, lw=0, label="range of a probability (0, 1)")
    ax.plot(curves.z, curves.silu, color=_BLUE, lw=2.0, label="SiLU(z) = z σ(z)")
    ax.plot(curves.z, curves.tanh, color=_ORANGE, lw=1.6, ls="--", label="tanh(z)")
    ax.plot(curves.z, curves.relu, color=_GREEN, lw=1.6, ls=":", label="ReLU(z) = max(z, 0)")
    z_min, s_min = curves.silu_minimum
    ax.plot([z_min], [s_min], "o", color=_BLUE, ms=4)
    ax.annotate(
        f"minimum ≈ {number_text(s_min)} near z ≈ {z_min:.2f}",
        xy=(z_min, s_min),
        xytext=(z_min + 1.2, s_min - 0.9),
        fontsize=8,
        arrowprops={"arrowstyle": "->", "color": "#444444", "lw": 0.8},
    )
    ax.axhline(0.0, color=INK, lw=0.6)
    ax.axvline(0.0, color=INK, lw=0.6)
    ax.set_xlim(curves.z[0], curves.z[-1])
    ax.set_xlabel("z")
    ax.set_ylabel("activation")
    ax.grid(True, lw=0.4, alpha=0.6)
    ax.legend(fontsize=8, loc="upper left", frameon=False)
    ax.set_title("SiLU dips below zero and grows like z: it is not a probability", fontsize=10)
    fig.tight_layout()
    return fig
