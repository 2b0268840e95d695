"""The introduction's block diagram: one pre-norm block, its residual paths, and live shapes.

:func:`block_overview` runs a real block on an input and records every step of the stream (what
each stage is, the shape the package actually produced, and a note such as the chapter that
builds the part); :func:`block_overview_figure` draws those steps top to bottom, with the two
residual bypasses beside the main path.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..errors import ArgumentError
from .style import INK, LIGHT, MUTED, PALETTE, BookFigure, new_figure

__all__ = ["OverviewStep", "block_overview", "block_overview_figure"]

RESIDUAL = PALETTE.vermillion
PART_KEYS = ("norm", "attention", "ffn")


@dataclass(frozen=True)
class OverviewStep:
    """One step of the stream: its label, kind ("stream", "part" or "add"), shape and note."""

    label: str
    kind: str
    shape: tuple[int, ...]
    note: str = ""
    label_text: str = ""  # for an addition: the name of the sum it produces


def block_overview(
    block: Any, x: Any, notes: Mapping[str, str] | None = None
) -> tuple[OverviewStep, ...]:
    """The steps of ``block`` (a pre-norm ``TransformerBlock``) on ``x``, shapes as computed.

    ``notes`` may give a note for the keys ``"norm"``, ``"attention"`` and ``"ffn"``.
    """
    if getattr(block, "order", "pre") != "pre":
        raise ArgumentError(f"block_overview draws a pre-norm block; got order {block.order!r}.")
    notes = dict(notes or {})
    unknown = sorted(set(notes) - set(PART_KEYS))
    if unknown:
        raise ArgumentError(f"notes may name {list(PART_KEYS)}; got unknown keys {unknown}.")
    stages = block.stages(x)
    shape = lambda t: tuple(int(n) for n in t.shape)  # noqa: E731
    return (
        OverviewStep("X", "stream", shape(x)),
        OverviewStep("Norm", "part", shape(stages.attention_input), notes.get("norm", "")),
        OverviewStep(
            "Attention", "part", shape(stages.attention_output), notes.get("attention", "")
        ),
        OverviewStep("+", "add", shape(stages.x1), label_text="X₁ ="),
        OverviewStep("Norm", "part", shape(stages.ffn_input), notes.get("norm", "")),
        OverviewStep("FFN", "part", shape(stages.ffn_output), notes.get("ffn", "")),
        OverviewStep("+", "add", shape(stages.output), label_text="X₂ ="),
        OverviewStep("next block", "stream", shape(stages.output)),
    )


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def block_overview_figure(steps: Sequence[OverviewStep]) -> BookFigure:
    """Steps top to bottom; residual arrows from each branch's input to its addition."""
    if len(steps) != 8 or [s.kind for s in steps].count("add") != 2:
        raise ArgumentError("block_overview_figure expects the eight steps of block_overview.")
    step = 0.62
    fig, ax = new_figure(6.4, 0.62 * len(steps) + 0.5)
    ax.set_xlim(-3.4, 3.4)
    ax.set_ylim(-step * (len(steps) - 1) - 0.45, 0.45)
    ax.set_axis_off()
    ys = [-i * step for i in range(len(steps))]
    for i, (s, y) in enumerate(zip(steps, ys, strict=True)):
        if s.kind == "add":
            ax.add_patch(
                FancyBboxPatch(
                    (-0.17, y - 0.17),
                    0.34,
                    0.34,
                    boxstyle="circle,pad=0",
                    edgecolor=INK,
                    facecolor="white",
                    linewidth=1.2,
                )
            )
            ax.text(0, y, "+", ha="center", va="center", fontsize=12, color=INK)
        else:
            face = LIGHT if s.kind == "part" else "white"
            ax.add_patch(
                FancyBboxPatch(
                    (-0.8, y - 0.2),
                    1.6,
                    0.4,
                    boxstyle="round,pad=0.02,rounding_size=0.06",
                    edgecolor=INK,
                    facecolor=face,
                    linewidth=1.2,
                )
            )
            ax.text(0, y, s.label, ha="center", va="center", fontsize=10, color=INK)
        if s.kind == "add":
            ax.text(
                -0.3,
                y,
                f"{s.label_text} {_shape_text(s.shape)}",
                ha="right",
                va="center",
                fontsize=8.5,
                color=MUTED,
                family="monospace",
            )
        else:
            ax.text(
                1.0,
                y,
                _shape_text(s.shape),
                ha="left",
                va="center",
                fontsize=8.5,
                color=MUTED,
                family="monospace",
            )
        if s.note:
            ax.text(
                -1.0, y, s.note, ha="right", va="center", fontsize=8.5, color=INK, style="italic"
            )
        if i + 1 < len(steps):
            top = y - (0.17 if s.kind == "add" else 0.2)
            bottom = ys[i + 1] + (0.17 if steps[i + 1].kind == "add" else 0.2)
            ax.add_patch(
                FancyArrowPatch(
                    (0, top),
                    (0, bottom),
                    arrowstyle="-|>",
                    mutation_scale=9,
                    color=INK,
                    linewidth=1.0,
                )
            )
    adds = [i for i, s in enumerate(steps) if s.kind == "add"]
    sources = [0, adds[0]]  # X feeds the first addition, X₁ (the first sum) the second
    bypass = 2.6
    for source, target in zip(sources, adds, strict=True):
        y0 = ys[source] - step / 2
        path = [(0, y0), (bypass, y0), (bypass, ys[target]), (0.17, ys[target])]
        for a, b in itertools.pairwise(path):
            last = b == path[-1]
            ax.add_patch(
                FancyArrowPatch(
                    a,
                    b,
                    arrowstyle="-|>" if last else "-",
                    mutation_scale=9,
                    color=RESIDUAL,
                    linewidth=1.4,
                )
            )
    for low, high in ((ys[0], ys[adds[0]]), (ys[adds[0]], ys[adds[1]])):  # one label per bypass
        ax.text(
            bypass + 0.08,
            (low + high) / 2,
            "residual",
            rotation=90,
            ha="left",
            va="center",
            fontsize=8,
            color=RESIDUAL,
        )
    fig.tight_layout()
    return fig
