"""Figures and tables for the feed-forward chapter, each from values the package computed.

- :func:`activation_curves` / :func:`activation_figure`: GELU = zΦ(z), ReLU and SiLU on a grid,
  with the gate factors σ(a) (GLU) and SiLU(a) (SwiGLU) in a second panel;
- :func:`budget_rows` / :func:`budget_table`: a parameter budget as a Markdown table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..autodiff import Tensor
from ..nn.budget import ParameterBudget
from ..nn.feedforward import activate
from .style import MUTED, PALETTE, BookFigure, new_figure
from .tables import markdown_table

__all__ = [
    "ActivationCurves",
    "activation_curves",
    "activation_figure",
    "budget_rows",
    "budget_table",
    "markdown_table",
]


@dataclass(frozen=True)
class ActivationCurves:
    """Activations on the grid ``z`` (computed by the package's ops)."""

    z: np.ndarray
    gelu: np.ndarray
    relu: np.ndarray
    silu: np.ndarray
    sigmoid: np.ndarray

    @property
    def largest_gap_to_relu(self) -> tuple[float, float]:
        """(z, |GELU(z) − ReLU(z)|) where the two differ most on the grid."""
        gap = np.abs(self.gelu - self.relu)
        k = int(np.argmax(gap))
        return float(self.z[k]), float(gap[k])


def activation_curves(z: Sequence[float] | np.ndarray) -> ActivationCurves:
    """GELU, ReLU, SiLU and σ on the points ``z``, each through the package's ops."""
    grid = np.asarray(z, dtype=np.float64)
    return ActivationCurves(
        z=grid,
        gelu=activate(grid, "gelu").value,
        relu=activate(grid, "relu").value,
        silu=activate(grid, "silu").value,
        sigmoid=Tensor(grid).sigmoid().value,
    )


def activation_figure(
    curves: ActivationCurves, *, marks: Mapping[str, tuple[float, float]] | None = None
) -> BookFigure:
    """Left: GELU, ReLU, SiLU. Right: the gate factors σ(a) and SiLU(a). ``marks`` label points."""
    fig, (left, right) = new_figure(6.7, 3.4, ncols=2)  # at most the 672 px column
    left.plot(curves.z, curves.gelu, color=PALETTE.blue, label="GELU(z) = z Φ(z)")
    left.plot(curves.z, curves.relu, color=PALETTE.vermillion, ls="--", label="ReLU(z)")
    left.plot(curves.z, curves.silu, color=PALETTE.bluish_green, ls=":", label="SiLU(z) = z σ(z)")
    for label, (x, y) in (marks or {}).items():
        left.plot([x], [y], "o", color=PALETTE.black, ms=4)
        left.annotate(label, xy=(x, y), xytext=(6, -12), textcoords="offset points", fontsize=8)
    left.set_title("activations of a dense FFN")
    right.axhspan(0.0, 1.0, color="#DDDDDD", alpha=0.5, lw=0, label="(0, 1): a sigmoid's range")
    right.plot(curves.z, curves.sigmoid, color=PALETTE.orange, label="GLU gate σ(a)")
    right.plot(
        curves.z, curves.silu, color=PALETTE.bluish_green, ls=":", label="SwiGLU gate SiLU(a)"
    )
    right.set_title("gate factor multiplying the linear branch")
    for ax, xlabel in ((left, "z"), (right, "gate pre-activation a")):
        ax.axhline(0.0, color=MUTED, lw=0.6)
        ax.axvline(0.0, color=MUTED, lw=0.6)
        ax.set_xlim(curves.z[0], curves.z[-1])
        ax.set_xlabel(xlabel)
        ax.grid(True)
        ax.legend(loc="upper left")
    left.set_ylabel("output")
    fig.tight_layout()
    return fig


def budget_rows(budgets: Mapping[str, ParameterBudget]) -> list[list[str]]:
    """One row per label of the first budget, one column per budget, counts with separators."""
    tables = [dict(b.rows()) for b in budgets.values()]
    labels = [label for label, _ in next(iter(budgets.values())).rows()]
    return [[label] + [f"{t[label]:,}" if label in t else "—" for t in tables] for label in labels]


def budget_table(budgets: Mapping[str, ParameterBudget]) -> str:
    """Markdown: a row per count, a column per named budget."""
    return markdown_table(["count", *budgets], budget_rows(budgets))
