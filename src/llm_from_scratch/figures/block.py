"""Figures for the composed-block chapter, each drawn from a pure, tested layout.

- :func:`block_diagram` / :func:`block_orders_figure`: one block drawn top to bottom in the
  pre-norm or the post-norm ordering, *with both residual bypass paths drawn* beside the main
  path; the two orderings side by side;
- :func:`block_parts` / :func:`block_parts_figure`: six small panels of the block's parts
  (attention, residual, normalization, feature transform, position, routing), fed with sizes,
  a causal mask, rotation angles and router choices that the chapter computed;
- :func:`decode_trace_rows` / :func:`decode_trace_figure`: the shapes of one decoding step as
  :meth:`~llm_from_scratch.nn.Decoder.trace_step` recorded them from the live model, one row
  per stage with its axes named and the axes that changed marked;
- :func:`padded_step_cells` / :func:`padded_step_figure`: a padded batch before and after one
  greedy step: the position each row is read at and where its new token lands.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError
from ..nn.positions import rotate_pairs
from .shapes import changed_axes
from .style import INK, LIGHT, MUTED, PALETTE, BookFigure, book_style, new_figure

__all__ = [
    "BlockDiagram",
    "DiagramEdge",
    "DiagramNode",
    "GridCell",
    "PartPanel",
    "TraceRow",
    "block_diagram",
    "block_labels",
    "block_orders_figure",
    "block_parts",
    "block_parts_figure",
    "decode_trace_figure",
    "decode_trace_rows",
    "padded_step_cells",
    "padded_step_figure",
    "stage_axis_names",
]

# --- the block diagram -----------------------------------------------------------------------

NODE_WIDTH = 2.6
NODE_HEIGHT = 0.62
ADD_RADIUS = 0.24
ROW_STEP = 1.05  # vertical distance between consecutive nodes
BYPASS_OFFSET = 0.75  # residual paths run this far to the right of the main column

KIND_COLOURS = {
    "norm": PALETTE.sky_blue,
    "attention": PALETTE.orange,
    "ffn": PALETTE.bluish_green,
    "input": "white",
    "output": "white",
    "add": "white",
}
RESIDUAL_COLOUR = PALETTE.vermillion

DEFAULT_LABELS = {
    "x": "input X  [B, T, D]",
    "attention_norm": "norm₁",
    "attention": "multi-head attention",
    "ffn_norm": "norm₂",
    "ffn": "feed-forward network",
    "output": "output X₂  [B, T, D]",
}

# (key, kind) along the main path, and the residual edges (source, target), per ordering.
MAIN_PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "pre": (
        ("x", "input"),
        ("attention_norm", "norm"),
        ("attention", "attention"),
        ("add_1", "add"),
        ("ffn_norm", "norm"),
        ("ffn", "ffn"),
        ("add_2", "add"),
        ("output", "output"),
    ),
    "post": (
        ("x", "input"),
        ("attention", "attention"),
        ("add_1", "add"),
        ("attention_norm", "norm"),
        ("ffn", "ffn"),
        ("add_2", "add"),
        ("ffn_norm", "norm"),
        ("output", "output"),
    ),
}
RESIDUALS: dict[str, tuple[tuple[str, str], ...]] = {
    "pre": (("x", "add_1"), ("add_1", "add_2")),  # the un-normalized stream is carried
    "post": (("x", "add_1"), ("attention_norm", "add_2")),  # the normalized sum is carried
}


@dataclass(frozen=True)
class DiagramNode:
    """One box (or an addition circle) of the block diagram, in layout units."""

    key: str
    label: str
    kind: str  # input, norm, attention, ffn, add, output
    x: float  # centre
    y: float  # centre
    width: float
    height: float

    @property
    def top(self) -> float:
        return self.y + self.height / 2

    @property
    def bottom(self) -> float:
        return self.y - self.height / 2

    @property
    def right(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class DiagramEdge:
    """An arrow from ``source`` to ``target`` along ``points``; residual edges bypass a branch."""

    source: str
    target: str
    residual: bool
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class BlockDiagram:
    """Everything :func:`block_orders_figure` draws for one ordering."""

    order: str
    nodes: tuple[DiagramNode, ...]
    edges: tuple[DiagramEdge, ...]
    width: float
    height: float

    def node(self, key: str) -> DiagramNode:
        """The node called ``key``."""
        for node in self.nodes:
            if node.key == key:
                return node
        raise ArgumentError(f"The diagram has no node {key!r}; its nodes are {self.keys()}.")

    def keys(self) -> list[str]:
        """Node keys from top (input) to bottom (output): the main path."""
        return [node.key for node in self.nodes]

    def incoming(self, key: str) -> list[DiagramEdge]:
        """The edges that end at ``key``."""
        return [edge for edge in self.edges if edge.target == key]

    def residual_edges(self) -> list[DiagramEdge]:
        """The bypass paths."""
        return [edge for edge in self.edges if edge.residual]


def block_labels(block: Any) -> dict[str, str]:
    """Box labels read from a live :class:`~llm_from_scratch.nn.TransformerBlock`."""
    attention = block.attention
    ffn = block.ffn
    norm = type(block.attention_norm).__name__
    hidden = getattr(ffn, "hidden_width", None)
    kind = getattr(ffn, "activation", type(ffn).__name__)
    width = block.model_width
    ffn_label = f"FFN {kind}  {width}→{hidden}→{width}" if hidden else f"FFN {type(ffn).__name__}"
    causal = ", causal" if attention.causal else ""
    return {
        "attention_norm": f"{norm}₁",
        "attention": f"attention  H={attention.num_heads}{causal}",
        "ffn_norm": f"{norm}₂",
        "ffn": ffn_label,
    }


def block_diagram(order: str, labels: Mapping[str, str] | None = None) -> BlockDiagram:
    """Lay out one block top to bottom in ``order`` ("pre" or "post"), residual paths included."""
    if order not in MAIN_PATHS:
        raise ArgumentError(f"order must be 'pre' or 'post'; got {order!r}.")
    names = dict(DEFAULT_LABELS)
    if labels is not None:
        unknown = sorted(set(labels) - set(names))
        if unknown:
            raise ArgumentError(f"labels may name {sorted(names)}; got unknown keys {unknown}.")
        names.update(labels)
    path = MAIN_PATHS[order]
    nodes = []
    for row, (key, kind) in enumerate(path):
        y = -row * ROW_STEP
        if kind == "add":
            nodes.append(DiagramNode(key, "+", kind, 0.0, y, 2 * ADD_RADIUS, 2 * ADD_RADIUS))
        else:
            nodes.append(DiagramNode(key, names[key], kind, 0.0, y, NODE_WIDTH, NODE_HEIGHT))
    by_key = {node.key: node for node in nodes}
    edges = [
        DiagramEdge(a.key, b.key, False, ((a.x, a.bottom), (b.x, b.top)))
        for a, b in itertools.pairwise(nodes)
    ]
    bypass_x = NODE_WIDTH / 2 + BYPASS_OFFSET
    for source, target in RESIDUALS[order]:
        a, b = by_key[source], by_key[target]
        start_y = a.bottom - 0.5 * (ROW_STEP - a.height)  # leave the main arrow below the box
        edges.append(
            DiagramEdge(
                source,
                target,
                True,
                ((a.x, start_y), (bypass_x, start_y), (bypass_x, b.y), (b.right, b.y)),
            )
        )
    height = (len(path) - 1) * ROW_STEP + NODE_HEIGHT
    return BlockDiagram(order, tuple(nodes), tuple(edges), bypass_x + NODE_WIDTH / 2, height)


def _draw_node(ax: Axes, node: DiagramNode) -> None:
    if node.kind == "add":
        ax.add_patch(
            Circle((node.x, node.y), ADD_RADIUS, facecolor="white", edgecolor=INK, linewidth=1.3)
        )
        ax.text(node.x, node.y, "+", ha="center", va="center", fontsize=13, fontweight="bold")
        return
    plain = node.kind in ("input", "output")
    ax.add_patch(
        FancyBboxPatch(
            (node.x - node.width / 2, node.y - node.height / 2),
            node.width,
            node.height,
            boxstyle="round,pad=0.02,rounding_size=0.12",
            facecolor=KIND_COLOURS[node.kind],
            edgecolor=MUTED if plain else INK,
            linewidth=0.8 if plain else 1.1,
            linestyle="--" if plain else "-",
        )
    )
    ax.text(node.x, node.y, node.label, ha="center", va="center", fontsize=9)


def _draw_edge(ax: Axes, edge: DiagramEdge) -> None:
    colour = RESIDUAL_COLOUR if edge.residual else INK
    width = 2.0 if edge.residual else 1.2
    points = edge.points
    for start, end in itertools.pairwise(points[:-1]):
        ax.plot([start[0], end[0]], [start[1], end[1]], color=colour, linewidth=width)
    ax.add_patch(
        FancyArrowPatch(
            points[-2],
            points[-1],
            arrowstyle="-|>",
            mutation_scale=13,
            color=colour,
            linewidth=width,
            shrinkA=0,
            shrinkB=0,
        )
    )
    if edge.residual:
        ax.plot(*points[0], marker="o", markersize=4.5, color=colour)
        (x0, y0), (_, y1) = points[1], points[2]
        ax.text(
            x0 + 0.1,
            (y0 + y1) / 2,
            "residual",
            rotation=90,
            ha="left",
            va="center",
            fontsize=8.5,
            color=colour,
        )


def block_orders_figure(
    pre: BlockDiagram, post: BlockDiagram, *, title: str | None = None
) -> BookFigure:
    """The two orderings side by side; residual paths in vermillion beside the main path."""
    fig, axes = new_figure(8.0, 5.4, ncols=2)
    with book_style():
        for ax, diagram, heading in (
            (axes[0], pre, "pre-norm: X + F(N(X))"),
            (axes[1], post, "post-norm: N(X + F(X))"),
        ):
            ax.set_axis_off()
            ax.set_xlim(-NODE_WIDTH / 2 - 0.2, diagram.width + 0.1)
            ax.set_ylim(-diagram.height + NODE_HEIGHT / 2 - 0.2, NODE_HEIGHT / 2 + 0.2)
            ax.set_aspect("equal")
            ax.set_title(heading, fontsize=10)
            for edge in diagram.edges:
                _draw_edge(ax, edge)
            for node in diagram.nodes:
                _draw_node(ax, node)
        if title:
            fig.suptitle(title, fontsize=11)
        fig.tight_layout()
    return fig


# --- the parts overview ----------------------------------------------------------------------

PART_TITLES = (
    "attention",
    "residual",
    "normalization",
    "feature transform",
    "position",
    "routing",
)


@dataclass(frozen=True)
class PartPanel:
    """One panel of the overview: a title, a one-line note and the numbers it draws."""

    title: str
    note: str
    data: dict[str, Any]


def block_parts(
    *,
    visible: Any,
    token_features: Any,
    normalized_features: Any,
    widths: Sequence[int],
    angles: Sequence[float],
    router_probabilities: Any,
    selected: Sequence[int],
) -> tuple[PartPanel, ...]:
    """The six panels' data, from values the package computed.

    ``visible`` [T, T] is True where query i may read key j (a causal pattern); one token's
    features before and after normalization; the FFN ``widths`` (D, hidden, D); a RoPE pair's
    rotation ``angles`` at positions 0, 1, …; one token's router probabilities [E] and the
    experts it was ``selected`` for.
    """
    visible = np.asarray(visible, dtype=bool)
    if visible.ndim != 2 or visible.shape[0] != visible.shape[1] or visible.shape[0] == 0:
        raise ShapeError(f"visible must be a square [T, T] Boolean pattern; got {visible.shape}.")
    before = np.asarray(token_features, dtype=np.float64)
    after = np.asarray(normalized_features, dtype=np.float64)
    if before.ndim != 1 or before.shape != after.shape or before.size == 0:
        raise ShapeError(
            f"token_features and normalized_features must be one token's [D] vector each; got "
            f"{before.shape} and {after.shape}."
        )
    widths = tuple(int(w) for w in widths)
    if len(widths) != 3 or min(widths) < 1 or widths[0] != widths[2]:
        raise ArgumentError(f"widths must be (D, hidden, D) with D >= 1; got {widths}.")
    angles = np.asarray(angles, dtype=np.float64)
    if angles.ndim != 1 or angles.size == 0:
        raise ShapeError(f"angles must be a non-empty [T] vector; got shape {angles.shape}.")
    probabilities = np.asarray(router_probabilities, dtype=np.float64)
    if probabilities.ndim != 1 or probabilities.size == 0:
        raise ShapeError(f"router_probabilities must be [E]; got shape {probabilities.shape}.")
    chosen = [int(e) for e in selected]
    if not chosen or any(not 0 <= e < probabilities.size for e in chosen):
        raise ArgumentError(
            f"selected must name experts in [0, {probabilities.size}); got {list(selected)}."
        )
    arcs = [(int(i), int(j)) for i, j in zip(*np.nonzero(visible), strict=True)]
    unit = Tensor(np.tile([1.0, 0.0], (angles.size, 1)))  # (T, 2): the pair (1, 0) per position
    points = rotate_pairs(unit, angles[:, None]).value  # (T, 2): rotated by RoPE itself
    return (
        PartPanel(
            "attention",
            "mixes positions: query i reads keys j",
            {"tokens": visible.shape[0], "arcs": arcs},
        ),
        PartPanel("residual", "adds a branch to its input", {"terms": ("X", "F(X)", "X + F(X)")}),
        PartPanel(
            "normalization",
            "within one token's features",
            {"before": before, "after": after},
        ),
        PartPanel(
            "feature transform",
            "per position: D → hidden → D",
            {"widths": widths},
        ),
        PartPanel(
            "position",
            "a query/key pair turns with position",
            {"angles": angles, "points": points},
        ),
        PartPanel(
            "routing",
            f"top-{len(chosen)} of {probabilities.size} experts",
            {"probabilities": probabilities, "selected": tuple(chosen)},
        ),
    )


def _panel_attention(ax: Axes, data: Mapping[str, Any]) -> None:
    tokens = data["tokens"]
    xs = np.arange(tokens)
    ax.scatter(xs, np.zeros(tokens), s=60, color=PALETTE.blue, zorder=3)
    for i, j in data["arcs"]:
        if i == j:
            continue
        mid, half = (i + j) / 2, abs(i - j) / 2
        t = np.linspace(0.0, math.pi, 30)
        ax.plot(mid + half * np.cos(t), 0.35 * half * np.sin(t), color=PALETTE.orange, lw=1.2)
    for t in xs:
        ax.text(t, -0.35, f"{t}", ha="center", va="top", fontsize=8, color=MUTED)
    ax.set_xlim(-0.6, tokens - 0.4)
    ax.set_ylim(-0.8, 0.25 * tokens + 0.2)


def _panel_residual(ax: Axes, data: Mapping[str, Any]) -> None:
    x_term, _, total = data["terms"]
    ax.text(0.0, 0.0, x_term, ha="center", va="center", fontsize=11)
    ax.add_patch(
        FancyBboxPatch(
            (0.9, -0.25), 1.2, 0.5, boxstyle="round,pad=0.02", facecolor=LIGHT, edgecolor=INK
        )
    )
    ax.text(1.5, 0.0, "F", ha="center", va="center", fontsize=11)
    ax.add_patch(Circle((2.7, 0.0), 0.2, facecolor="white", edgecolor=INK))
    ax.text(2.7, 0.0, "+", ha="center", va="center", fontsize=11)
    ax.text(3.5, 0.0, total, ha="left", va="center", fontsize=9)
    for a, b in (((0.25, 0.0), (0.9, 0.0)), ((2.1, 0.0), (2.5, 0.0))):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, color=INK))
    ax.plot([0.0, 0.0, 2.7], [0.2, 0.8, 0.8], color=RESIDUAL_COLOUR, lw=1.8)
    ax.add_patch(
        FancyArrowPatch(
            (2.7, 0.8), (2.7, 0.2), arrowstyle="-|>", mutation_scale=10, color=RESIDUAL_COLOUR
        )
    )
    ax.text(1.35, 0.9, f"{x_term} (bypass)", ha="center", va="bottom", fontsize=8, color=MUTED)
    ax.set_xlim(-0.4, 5.3)
    ax.set_ylim(-0.7, 1.4)


def _panel_normalization(ax: Axes, data: Mapping[str, Any]) -> None:
    before, after = data["before"], data["after"]
    width = before.size
    xs = np.arange(width)
    ax.bar(xs - 0.2, before, width=0.38, color=LIGHT, edgecolor=INK, lw=0.6, label="x")
    ax.bar(
        xs + 0.2, after, width=0.38, color=PALETTE.sky_blue, edgecolor=INK, lw=0.6, label="norm(x)"
    )
    ax.axhline(0.0, color=MUTED, lw=0.6)
    ax.legend(loc="upper right", fontsize=8, ncols=2)
    ax.set_xlabel("feature c of one token", fontsize=8)
    top = float(max(np.abs(before).max(), np.abs(after).max(), 1e-12)) * 1.6
    ax.set_ylim(-top, top)


def _panel_feature(ax: Axes, data: Mapping[str, Any]) -> None:
    widths = data["widths"]
    tallest = max(widths)
    for k, w in enumerate(widths):
        height = 2.0 * w / tallest
        colour = PALETTE.bluish_green if k == 1 else LIGHT
        ax.add_patch(
            Rectangle((1.4 * k, -height / 2), 0.6, height, facecolor=colour, edgecolor=INK)
        )
        ax.text(1.4 * k + 0.3, -1.15, str(w), ha="center", va="top", fontsize=9)
        if k:
            ax.add_patch(
                FancyArrowPatch(
                    (1.4 * (k - 1) + 0.65, 0.0),
                    (1.4 * k - 0.05, 0.0),
                    arrowstyle="-|>",
                    mutation_scale=10,
                    color=INK,
                )
            )
    ax.set_xlim(-0.3, 3.7)
    ax.set_ylim(-1.5, 1.3)


def _panel_position(ax: Axes, data: Mapping[str, Any]) -> None:
    t = np.linspace(0.0, 2 * math.pi, 100)
    ax.plot(np.cos(t), np.sin(t), color=LIGHT, lw=1.0)
    for position, (px, py) in enumerate(data["points"]):
        ax.add_patch(
            FancyArrowPatch(
                (0.0, 0.0), (px, py), arrowstyle="-|>", mutation_scale=9, color=PALETTE.blue
            )
        )
        ax.text(1.18 * px, 1.18 * py, str(position), ha="center", va="center", fontsize=8)
    ax.set_xlim(-1.4, 1.4)
    ax.set_ylim(-1.4, 1.4)


def _panel_routing(ax: Axes, data: Mapping[str, Any]) -> None:
    probabilities, selected = data["probabilities"], set(data["selected"])
    count = probabilities.size
    ax.add_patch(
        FancyBboxPatch(
            (-0.5, -0.25), 1.0, 0.5, boxstyle="round,pad=0.02", facecolor=LIGHT, edgecolor=INK
        )
    )
    ax.text(0.0, 0.0, "router", ha="center", va="center", fontsize=8)
    ys = np.linspace(0.9, -0.9, count) if count > 1 else np.zeros(1)
    for e, y in enumerate(ys):
        chosen = e in selected
        colour = PALETTE.bluish_green if chosen else "white"
        ax.add_patch(Rectangle((2.0, y - 0.2), 0.9, 0.4, facecolor=colour, edgecolor=INK, lw=0.8))
        ax.text(2.45, y, f"e{e}", ha="center", va="center", fontsize=8)
        ax.text(3.0, y, f"p={probabilities[e]:.2f}", ha="left", va="center", fontsize=8)
        ax.add_patch(
            FancyArrowPatch(
                (0.55, 0.0),
                (1.95, y),
                arrowstyle="-|>" if chosen else "-",
                mutation_scale=9,
                color=INK if chosen else MUTED,
                linestyle="-" if chosen else ":",
            )
        )
    ax.set_xlim(-0.7, 4.2)
    ax.set_ylim(-1.3, 1.3)


_PANEL_DRAW = {
    "attention": _panel_attention,
    "residual": _panel_residual,
    "normalization": _panel_normalization,
    "feature transform": _panel_feature,
    "position": _panel_position,
    "routing": _panel_routing,
}


def block_parts_figure(panels: Sequence[PartPanel]) -> BookFigure:
    """Three rows of two panels, one per part of the block (narrow enough for the column)."""
    if len(panels) != len(PART_TITLES):
        raise ArgumentError(f"block_parts_figure needs six panels; got {len(panels)}.")
    fig, grid = new_figure(6.6, 7.4, nrows=3, ncols=2)
    with book_style():
        for ax, panel in zip(grid.ravel(), panels, strict=True):
            _PANEL_DRAW[panel.title](ax, panel.data)
            ax.set_title(f"{panel.title}\n{panel.note}", fontsize=9.5)
            if panel.title != "normalization":
                ax.set_axis_off()
                ax.set_aspect("equal")
            else:
                ax.set_yticks([])
                ax.spines["left"].set_visible(False)
        fig.tight_layout()
    return fig


# --- the decoding-step trace -----------------------------------------------------------------

# Axis names of the stages Decoder.trace_step records, by stage label.
STAGE_AXES = {
    "token IDs": ("B", "T"),
    "embeddings": ("B", "T", "D"),
    "final norm": ("B", "T", "D"),
    "logits": ("B", "T", "V"),
    "last valid position": ("B", "V"),
    "next IDs": ("B",),
    "extended IDs": ("B", "T+1"),
}


def stage_axis_names(label: str, rank: int) -> tuple[str, ...]:
    """The axis names of one trace stage ("block i" stages are [B, T, D])."""
    names = ("B", "T", "D") if label.startswith("block ") else STAGE_AXES.get(label)
    if names is None:
        raise ArgumentError(f"Unknown decoding stage {label!r}; known: {sorted(STAGE_AXES)}.")
    if len(names) != rank:
        raise ShapeError(f"Stage {label!r} should have {len(names)} axes {names}; got {rank}.")
    return names


@dataclass(frozen=True)
class TraceRow:
    """One stage of the trace: its caption, named axes and which axes differ from the row above."""

    caption: str
    shape: tuple[int, ...]
    names: tuple[str, ...]
    changed: tuple[bool, ...]

    @property
    def shape_text(self) -> str:
        return "[" + ", ".join(map(str, self.shape)) + "]"


def decode_trace_rows(stages: Sequence[tuple[str, Sequence[int]]]) -> tuple[TraceRow, ...]:
    """Rows for :func:`decode_trace_figure` from ``DecodeTrace.stages``."""
    if not stages:
        raise ArgumentError("stages must list at least one (label, shape) pair.")
    rows: list[TraceRow] = []
    previous: list[tuple[str, int]] | None = None
    for label, shape in stages:
        shape = tuple(int(n) for n in shape)
        names = stage_axis_names(label, len(shape))
        named = list(zip(names, shape, strict=True))
        changed = set(changed_axes(named, previous))
        rows.append(TraceRow(label, shape, names, tuple(i in changed for i in range(len(shape)))))
        previous = named
    return tuple(rows)


def decode_trace_figure(rows: Sequence[TraceRow], *, title: str | None = None) -> BookFigure:
    """One row per stage, top to bottom; axes that changed from the row above in orange."""
    count = len(rows)
    fig, ax = new_figure(5.6, 0.48 * count + (0.5 if title else 0.2))
    box, gap, left = 0.9, 0.1, 2.5
    with book_style():
        ax.set_axis_off()
        ax.set_xlim(0.0, left + 3 * (box + gap) + 1.6)
        ax.set_ylim(-count + 0.3, 0.75)
        if title:
            ax.set_title(title, fontsize=10)
        for r, row in enumerate(rows):
            y = -r
            ax.text(left - 0.25, y, row.caption, ha="right", va="center", fontsize=9.5)
            for i, (name, length, changed) in enumerate(
                zip(row.names, row.shape, row.changed, strict=True)
            ):
                x = left + i * (box + gap)
                ax.add_patch(
                    Rectangle(
                        (x, y - 0.32),
                        box,
                        0.64,
                        facecolor=PALETTE.orange if changed else LIGHT,
                        edgecolor=PALETTE.vermillion if changed else INK,
                        linewidth=1.8 if changed else 0.8,
                    )
                )
                ax.text(x + box / 2, y, f"{name}={length}", ha="center", va="center", fontsize=9)
            ax.text(
                left + 3 * (box + gap) + 0.1,
                y,
                row.shape_text,
                ha="left",
                va="center",
                fontsize=9,
                family="monospace",
                color=MUTED,
            )
        fig.tight_layout()
    return fig


# --- a padded batch through one greedy step --------------------------------------------------


@dataclass(frozen=True)
class GridCell:
    """One token slot: which grid (0 prompt, 1 extended), row, column, text and its role."""

    grid: int
    row: int
    column: int
    text: str
    role: str  # "prompt", "padding", "read" (the last valid position) or "new"


def padded_step_cells(
    ids: Any, lengths: Sequence[int], extended: Any, *, pad_id: int = 0
) -> tuple[GridCell, ...]:
    """The prompt grid [B, T] (read positions marked) and the extended grid [B, T+1]."""
    ids = np.asarray(ids)
    extended = np.asarray(extended)
    lengths = [int(n) for n in lengths]
    if ids.ndim != 2 or extended.shape != (ids.shape[0], ids.shape[1] + 1):
        raise ShapeError(
            f"ids must be [B, T] and extended [B, T+1]; got {ids.shape} and {extended.shape}."
        )
    if len(lengths) != ids.shape[0] or any(not 1 <= n <= ids.shape[1] for n in lengths):
        raise ArgumentError(f"lengths must be {ids.shape[0]} values in [1, {ids.shape[1]}].")
    cells = []
    for b, length in enumerate(lengths):
        for t in range(ids.shape[1]):
            role = "read" if t == length - 1 else "prompt" if t < length else "padding"
            text = "pad" if role == "padding" else str(int(ids[b, t]))
            cells.append(GridCell(0, b, t, text, role))
        for t in range(ids.shape[1] + 1):
            role = "new" if t == length else "prompt" if t < length else "padding"
            value = int(extended[b, t])
            text = "pad" if role == "padding" and value == pad_id else str(value)
            cells.append(GridCell(1, b, t, text, role))
    return tuple(cells)


ROLE_STYLE = {
    "prompt": {"facecolor": LIGHT, "edgecolor": INK, "linewidth": 0.8},
    "padding": {"facecolor": "white", "edgecolor": MUTED, "linewidth": 0.8, "linestyle": ":"},
    "read": {"facecolor": PALETTE.sky_blue, "edgecolor": PALETTE.blue, "linewidth": 2.2},
    "new": {"facecolor": PALETTE.orange, "edgecolor": PALETTE.vermillion, "linewidth": 2.2},
}


def padded_step_figure(cells: Sequence[GridCell]) -> BookFigure:
    """Left: the padded prompts, each row's read position in blue; right: the new IDs in orange."""
    rows = 1 + max(cell.row for cell in cells)
    columns = [1 + max(c.column for c in cells if c.grid == g) for g in (0, 1)]
    fig, axes = new_figure(6.6, 0.55 * rows + 1.0, ncols=2, width_ratios=columns)
    titles = ("prompts [B, T]: blue = last valid position read", "after one step [B, T+1]")
    with book_style():
        for g, ax in enumerate(axes):
            ax.set_axis_off()
            ax.set_xlim(-0.1, columns[g] + 0.1)
            ax.set_ylim(-rows - 0.1, 0.1)
            ax.set_aspect("equal")
            ax.set_title(titles[g], fontsize=9)
        for cell in cells:
            ax = axes[cell.grid]
            ax.add_patch(
                Rectangle(
                    (cell.column + 0.05, -cell.row - 0.95), 0.9, 0.9, **ROLE_STYLE[cell.role]
                )
            )
            ax.text(
                cell.column + 0.5,
                -cell.row - 0.5,
                cell.text,
                ha="center",
                va="center",
                fontsize=8 if cell.text == "pad" else 10,
                color=MUTED if cell.role == "padding" else INK,
            )
        fig.tight_layout()
    return fig
