"""A router sending one token to its top-k of three (or more) experts, with a balancing-loss box.

:func:`router_three` computes what the picture shows (the router's probabilities for one token,
the chosen experts and their renormalised gates, and the importance penalty of a batch of tokens
routed the same way); :func:`router_three_figure` draws it: token → router → experts → weighted
sum, chosen paths solid and blue, unchosen ones dotted and grey, and a separate box for the
balancing loss, which reads the gates but is not part of the token's forward path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..errors import ShapeError
from ..nn.moe import dense_gates, importance_loss, top_k_gates
from ..validate import positive_int
from .style import INK, LIGHT, MUTED, PALETTE, BookFigure, new_figure

__all__ = ["RouterThree", "router_three", "router_three_figure"]

CHOSEN = PALETTE.blue
UNCHOSEN = "#BBBBBB"
LOSS = PALETTE.orange


@dataclass(frozen=True)
class RouterThree:
    """One token's routing and the balancing penalty of ``tokens`` copies of it."""

    probabilities: np.ndarray  # (E,) the router's softmax probabilities
    selected: np.ndarray  # (k,) chosen experts, best first
    gates: np.ndarray  # (E,) renormalised gates, 0 for experts not chosen
    tokens: int  # how many tokens the balancing box assumes route like this one
    importance: np.ndarray  # (E,) Σ over those tokens of each expert's gate
    balance_loss: float  # squared coefficient of variation of the importance

    @property
    def chosen(self) -> np.ndarray:
        """(E,) True where the expert is among the k chosen."""
        return self.gates > 0.0

    def output(self, expert_outputs: object) -> float:
        """Σ_e g_e f_e(x) for scalar expert outputs f_e(x), one per expert."""
        values = np.asarray(expert_outputs, dtype=np.float64)
        if values.shape != self.gates.shape:
            raise ShapeError(
                f"expert_outputs needs one value per expert, shape {self.gates.shape}; "
                f"got {values.shape}."
            )
        return float(self.gates @ values)


def router_three(probabilities: object, k: int, tokens: int) -> RouterThree:
    """Top-k renormalised gates of one token and the CV² of ``tokens`` copies of it."""
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 1 or p.size < 2:
        raise ShapeError(
            f"probabilities must be one token's [E] with E >= 2; got shape {p.shape}."
        )
    tokens = positive_int(tokens, "tokens")
    selected, gates = top_k_gates(p[None, :], k)
    dense = dense_gates(selected, gates, p.size)[0]  # (E,)
    importance = tokens * dense  # (E,) Σ over tokens copies of the same gates
    loss = importance_loss(np.tile(dense, (tokens, 1))).item()  # the penalty on that batch
    return RouterThree(p, selected[0], dense, tokens, importance, loss)


def _box(ax, x, y, w, h, text, *, edge=INK, face="white", style="solid", size=9, weight=None):
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.02,rounding_size=0.04",
            linewidth=1.2,
            edgecolor=edge,
            facecolor=face,
            linestyle=style,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=size, color=INK, fontweight=weight)


def _arrow(ax, start, end, *, colour=INK, style="solid", width=1.2):
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=10,
            linewidth=width,
            color=colour,
            linestyle=style,
            shrinkA=0,
            shrinkB=0,
        )
    )


def router_three_figure(view: RouterThree, *, digits: int = 2) -> BookFigure:
    """Token → router → experts (chosen solid blue, others dotted grey) → Σ, plus a loss box."""
    experts = view.probabilities.size
    fig, ax = new_figure(6.7, 3.5)
    ax.set_xlim(0.0, 10.0)
    ax.set_ylim(0.4, 5.6)
    ax.set_axis_off()
    top = 5.0
    rows = np.linspace(top - 0.3, top - 0.3 - 1.1 * (experts - 1), experts)
    middle = float(rows.mean())
    _box(ax, 0.8, middle, 1.1, 0.6, "token x")
    _box(ax, 2.8, middle, 1.8, 0.8, "router\nsoftmax(x W_gate)", size=8)
    _arrow(ax, (1.35, middle), (1.9, middle))
    _box(ax, 8.9, middle, 1.5, 0.8, "y = Σ g_e f_e(x)", size=8)
    for e, y in enumerate(rows):
        chosen = bool(view.chosen[e])
        colour = CHOSEN if chosen else UNCHOSEN
        style = "solid" if chosen else (0, (2, 2))
        _box(
            ax,
            6.0,
            y,
            1.5,
            0.7,
            f"expert {e}\nf_{e}(x)",
            edge=colour,
            face=LIGHT if chosen else "white",
            style=style,
            size=8,
        )
        _arrow(
            ax, (3.7, middle), (5.25, y), colour=colour, style=style, width=1.6 if chosen else 1
        )
        label = f"p={view.probabilities[e]:.{digits}f}"
        if chosen:
            label += f"\ng={view.gates[e]:.{digits}f}"
        ax.text(
            4.75,
            y + 0.12,
            label,
            fontsize=8,
            color=INK if chosen else MUTED,
            ha="center",
            va="bottom",
        )
        if chosen:
            _arrow(ax, (6.75, y), (8.15, middle), colour=colour, width=1.6)
    loss_y = rows[-1] - 1.05
    importance = ", ".join(f"{v:.{digits}f}" for v in view.importance)
    _box(
        ax,
        6.0,
        loss_y,
        6.6,
        0.75,
        f"balancing loss over {view.tokens} tokens routed like x: importance ({importance}),"
        f"\nCV² = variance / mean² = {view.balance_loss:.{digits}f}",
        edge=LOSS,
        size=8,
    )
    _arrow(ax, (2.8, middle - 0.4), (2.8, loss_y), colour=LOSS, style=(0, (4, 2)))
    ax.text(2.95, (middle - 0.4 + loss_y) / 2, "gates", fontsize=8, color=LOSS, va="center")
    ax.set_title(
        f"top-{view.selected.size} routing over {experts} experts, and its balancing loss",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
