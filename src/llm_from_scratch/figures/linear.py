"""Figures for the linear-layers chapter, drawn from the ``linear-layers-v1`` trace.

Every function takes a :class:`~llm_from_scratch.traces.LinearEvidence`, the trace read back by
:func:`~llm_from_scratch.traces.read_linear_trace`; none of them parses text. Each figure has a
pure function that computes what it shows (tested without drawing) and a drawing function that
returns a :class:`~llm_from_scratch.figures.style.BookFigure`:

- :func:`linear_shape_figure` — leading axes preserved, the feature axis changed (built on the
  general :func:`~llm_from_scratch.figures.shape_diagram`);
- :func:`expansion_text` / :func:`projection_figure` — each position projected by the same W and
  b, with one output coordinate written out: y₀ = 1·1 + 2·2 + 0.5 = 5.5;
- :func:`policy_bars` / :func:`policy_figure` — affine against bias-free outputs, with the
  parameter count of each;
- :func:`gradient_panels` / :func:`gradient_figure` — each position's own input gradient beside
  the shared dW and db, which sum over positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from ..traces.linear import LinearEvidence
from .shapes import shape_diagram
from .style import FIGURE_DPI, INK, PALETTE, BookFigure, styled

__all__ = [
    "GradientPanels",
    "PolicyBars",
    "axis_labels",
    "expansion_text",
    "gradient_figure",
    "gradient_panels",
    "linear_shape_figure",
    "number_text",
    "policy_bars",
    "policy_figure",
    "projection_figure",
]

_BLUE, _ORANGE, _GREEN, _PINK = (
    PALETTE.sky_blue,
    PALETTE.orange,
    PALETTE.bluish_green,
    PALETTE.reddish_purple,
)
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def number_text(value: float) -> str:
    """A trace value as a reader writes it: 5.5, 1, -0.5 (six significant digits, no -0)."""
    text = f"{float(value):.6g}"
    return "0" if text == "-0" else text


def _factor(value: float) -> str:
    text = number_text(value)
    return f"({text})" if text.startswith("-") else text


def expansion_text(evidence: LinearEvidence, position: int = 0, feature: int = 0) -> str:
    """One output coordinate written out: 'y₀ = 1·1 + 2·2 + 0.5 = 5.5' (x_i·W_ij terms, + b_j)."""
    x, w = evidence.inputs[position], evidence.weight[:, feature]
    terms = [f"{_factor(xi)}·{_factor(wi)}" for xi, wi in zip(x, w, strict=True)]
    terms.append(_factor(evidence.bias[feature]))
    name = "y" + str(feature).translate(_SUBSCRIPT)
    return f"{name} = {' + '.join(terms)} = {number_text(evidence.outputs[position, feature])}"


def axis_labels(rank: int, feature: str = "d") -> list[str]:
    """Short names for the axes of a [..., d] tensor; the last is the feature axis ``feature``."""
    named = {1: [], 2: ["seq"], 3: ["batch", "seq"]}
    leading = named.get(rank, [f"a{k}" for k in range(rank - 1)])
    return [*leading, feature]


def linear_shape_figure(evidence: LinearEvidence, *, title: str | None = None) -> BookFigure:
    """Input [..., d_in] → output [..., d_out]: every leading axis kept, the last one changed."""
    rank = len(evidence.input_shape)
    return shape_diagram(
        [("input X", evidence.input_shape), ("output Y = XW + b", evidence.output_shape)],
        axis_labels=[axis_labels(rank, "D_in"), axis_labels(rank, "D_out")],
        highlight_axis=rank - 1,
        title=title or "Preserve positions, change the feature width",
    )


def _matrix(ax: Axes, values: np.ndarray, title: str, colour: str) -> None:
    """A small matrix drawn as labelled cells."""
    values = np.atleast_2d(values)
    rows, cols = values.shape
    ax.set_xlim(0, max(cols, 1))
    ax.set_ylim(max(rows, 1), 0)
    for r in range(rows):
        for c in range(cols):
            ax.add_patch(_cell(c, r, colour))
            ax.text(
                c + 0.5, r + 0.5, number_text(values[r, c]), ha="center", va="center", fontsize=9
            )
    ax.set_title(title, fontsize=9)
    ax.set_aspect("equal")
    ax.axis("off")


def _cell(x: float, y: float, colour: str) -> Rectangle:
    return Rectangle((x, y), 1, 1, facecolor=colour, edgecolor=INK, alpha=0.35, lw=1)


@styled
def projection_figure(
    evidence: LinearEvidence, *, position: int = 0, feature: int = 0
) -> BookFigure:
    """Every position's row x_p meets the same W and b; one output coordinate is expanded."""
    count = evidence.positions
    fig = BookFigure(figsize=(7.2, 1.3 + 1.0 * max(count, 1)), dpi=FIGURE_DPI)
    grid = fig.add_gridspec(
        max(count, 1) + 1,
        4,
        width_ratios=[1, 1.2, 1, 1.2],
        height_ratios=[*([1] * max(count, 1)), 0.6],
    )
    _matrix(fig.add_subplot(grid[: max(count, 1), 1]), evidence.weight, "shared W", _ORANGE)
    _matrix(fig.add_subplot(grid[max(count, 1), 1]), evidence.bias, "shared b", _ORANGE)
    for row, coordinate in enumerate(evidence.coordinates):
        _matrix(fig.add_subplot(grid[row, 0]), evidence.inputs[row], f"x at ({coordinate})", _BLUE)
        _matrix(
            fig.add_subplot(grid[row, 2]), evidence.outputs[row], f"y at ({coordinate})", _GREEN
        )
    note = fig.add_subplot(grid[:, 3])
    note.axis("off")
    if count:
        note.text(
            0.0,
            0.5,
            "At position ("
            + evidence.coordinates[position]
            + "):\n"
            + expansion_text(evidence, position, feature),
            fontsize=9,
            va="center",
            wrap=True,
        )
    fig.suptitle("One shared projection, applied at each position", fontsize=10)
    return fig


@dataclass(frozen=True)
class PolicyBars:
    """Bar heights and labels for the affine vs bias-free comparison."""

    labels: list[str]  # one per (position, output feature)
    affine: np.ndarray
    bias_free: np.ndarray
    affine_label: str
    bias_free_label: str


def policy_bars(evidence: LinearEvidence) -> PolicyBars:
    """Affine y = xW + b against bias-free y = xW, position by position, with parameter counts."""
    labels = [
        f"({coordinate}) y{str(j).translate(_SUBSCRIPT)}"
        for coordinate in evidence.coordinates
        for j in range(evidence.output_width)
    ]
    return PolicyBars(
        labels=labels,
        affine=evidence.outputs.ravel(),  # (P·d_out,), position-major like the labels
        bias_free=evidence.bias_free_outputs.ravel(),
        affine_label=f"affine XW + b ({evidence.affine_parameters} parameters)",
        bias_free_label=f"bias-free XW ({evidence.bias_free_parameters} parameters)",
    )


@styled
def policy_figure(evidence: LinearEvidence) -> BookFigure:
    """Grouped bars: each output coordinate with and without the bias."""
    bars = policy_bars(evidence)
    fig = BookFigure(figsize=(6.7, 3.2), dpi=FIGURE_DPI)
    ax = fig.add_subplot()
    at = np.arange(len(bars.labels))
    ax.bar(at - 0.2, bars.affine, 0.4, color=_BLUE, label=bars.affine_label)
    ax.bar(
        at + 0.2,
        bars.bias_free,
        0.4,
        color=_ORANGE,
        label=bars.bias_free_label,
        hatch="//",
        edgecolor=INK,
    )
    ax.axhline(0.0, color=INK, lw=0.8)
    ax.set_xticks(at, bars.labels, fontsize=8, rotation=30 if len(at) > 8 else 0)
    ax.set_ylabel("output value")
    ax.legend(fontsize=8, frameon=False)
    ax.set_title("The bias shifts every position by the same b", fontsize=10)
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class GradientPanels:
    """Per-position (G_p, dX_p) pairs and the shared sums dW = Σ x_pᵀG_p, db = Σ G_p."""

    coordinates: list[str]
    upstream: np.ndarray  # (P, d_out)
    input_gradients: np.ndarray  # (P, d_in)
    weight_terms: np.ndarray  # (P, d_in, d_out): x_pᵀ G_p, one outer product per position
    weight_gradient: np.ndarray  # (d_in, d_out)
    bias_gradient: np.ndarray  # (d_out,)


def gradient_panels(evidence: LinearEvidence) -> GradientPanels:
    """The numbers behind the gradient figure: G_p, dX_p, the terms x_pᵀG_p and their sums."""
    return GradientPanels(
        coordinates=list(evidence.coordinates),
        upstream=evidence.upstream,
        input_gradients=evidence.input_gradients,
        weight_terms=np.einsum("pi,pj->pij", evidence.inputs, evidence.upstream),
        weight_gradient=evidence.weight_gradient,
        bias_gradient=evidence.bias_gradient,
    )


@styled
def gradient_figure(evidence: LinearEvidence) -> BookFigure:
    """Left: each position's G_p and its own dX_p. Right: the shared dW and db (sums over p)."""
    panels = gradient_panels(evidence)
    count = max(len(panels.coordinates), 1)
    fig = BookFigure(figsize=(7.2, 1.2 + 1.0 * count), dpi=FIGURE_DPI)
    grid = fig.add_gridspec(count, 4, width_ratios=[1.2, 1, 0.3, 1.4])
    for row, coordinate in enumerate(panels.coordinates):
        _matrix(fig.add_subplot(grid[row, 0]), panels.upstream[row], f"G at ({coordinate})", _PINK)
        _matrix(
            fig.add_subplot(grid[row, 1]),
            panels.input_gradients[row],
            f"dX at ({coordinate}) = G Wᵀ",
            _BLUE,
        )
    right = grid[:, 3].subgridspec(2, 1, height_ratios=[panels.weight_gradient.shape[0], 1])
    _matrix(fig.add_subplot(right[0]), panels.weight_gradient, "shared dW = Σ xᵀG", _ORANGE)
    _matrix(fig.add_subplot(right[1]), panels.bias_gradient, "shared db = Σ G", _ORANGE)
    fig.suptitle("Local input gradients; parameter gradients summed over positions", fontsize=10)
    return fig
