"""A computation graph drawn from the real tape: forward values and reverse gradients.

:func:`graph_layout` walks a result tensor's tape (``.inputs``, ``.op_name``, ``.value``,
``.grad``) and returns pure data: nodes, edges and a left-to-right layering. :func:`graph_figure`
draws that layout. Draw after ``backward(..., retain_graph=True)`` so the tape still exists, and
call ``retain_grad()`` on intermediates whose gradients the figure should show.

Layering: an op node sits one column right of its deepest input (longest path from the leaves);
a leaf sits one column left of its first consumer, so a constant used late is drawn beside the op
that reads it. Within a column, nodes keep the order of a depth-first walk that visits each op's
inputs in argument order. Every step is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from matplotlib.patches import FancyBboxPatch

from ..autodiff import Tensor, walk_tape
from .style import INK, BookFigure, new_figure

__all__ = ["GraphEdge", "GraphLayout", "GraphNode", "graph_figure", "graph_layout", "value_text"]

NodeKind = Literal["input", "constant", "op"]

# Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
# Light tints of Okabe-Ito sky blue and orange (and a grey), so the black text on them keeps a
# contrast above 10:1 while the box kinds stay apart.
_FILL = {"input": "#C6E4F7", "constant": "#E4E4E4", "op": "#F8DCA0"}
_EDGE_COLOUR = INK


@dataclass(frozen=True)
class GraphNode:
    """One tensor on the tape, placed at (layer, row)."""

    index: int
    label: str
    kind: NodeKind
    value: np.ndarray
    grad: np.ndarray | None
    layer: int
    row: int

    @property
    def value_text(self) -> str:
        return value_text(self.value)

    @property
    def grad_text(self) -> str:
        return "—" if self.grad is None else value_text(self.grad)


@dataclass(frozen=True)
class GraphEdge:
    """Input ``source`` feeds argument ``slot`` of the op that made ``target``."""

    source: int
    target: int
    slot: int


@dataclass(frozen=True)
class GraphLayout:
    """Nodes (inputs before consumers), edges, and the number of layers and rows per layer."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    root: int

    @property
    def layer_count(self) -> int:
        return 1 + max(node.layer for node in self.nodes)

    def layer(self, layer: int) -> list[GraphNode]:
        """The nodes of one column, top to bottom."""
        return sorted((n for n in self.nodes if n.layer == layer), key=lambda n: n.row)

    def by_label(self, label: str) -> GraphNode:
        """The unique node with this label."""
        found = [n for n in self.nodes if n.label == label]
        if len(found) != 1:
            raise KeyError(f"{len(found)} nodes are labelled {label!r}; expected exactly one.")
        return found[0]


def value_text(array: np.ndarray, digits: int = 4) -> str:
    """A short label: the number for one element, the entries for up to four, else the shape."""
    array = np.asarray(array)
    if array.size == 1:
        return f"{float(array.reshape(())):.{digits}g}"
    if array.size <= 4:
        return "[" + ", ".join(f"{float(v):.{digits}g}" for v in array.ravel()) + "]"
    return "shape [" + ", ".join(str(n) for n in array.shape) + "]"


def _label(tensor: Tensor, kind: NodeKind) -> str:
    if kind == "op":
        return tensor.op_name if tensor.name is None else f"{tensor.name} = {tensor.op_name}"
    if tensor.name is not None:
        return tensor.name
    return "input" if kind == "input" else "const"


def graph_layout(root: Tensor) -> GraphLayout:
    """Nodes, edges and a left-to-right layering of the tape that produced ``root``."""
    order = walk_tape(root)
    index = {id(t): i for i, t in enumerate(order)}
    kinds: list[NodeKind] = [
        "op" if t.op_name is not None else ("input" if t.requires_grad else "constant")
        for t in order
    ]
    edges = [
        GraphEdge(index[id(parent)], i, slot)
        for i, t in enumerate(order)
        for slot, parent in enumerate(t.inputs)
    ]
    layers = [0] * len(order)
    for i, t in enumerate(order):  # post-order: inputs already have their layers
        if kinds[i] == "op":
            layers[i] = 1 + max((layers[index[id(p)]] for p in t.inputs), default=0)
    for i in range(len(order)):  # leaves: one column left of their first consumer
        if kinds[i] != "op":
            consumers = [layers[e.target] for e in edges if e.source == i]
            layers[i] = max(min(consumers) - 1, 0) if consumers else 0
    rows = [0] * len(order)
    filled: dict[int, int] = {}
    for i in range(len(order)):
        rows[i] = filled.get(layers[i], 0)
        filled[layers[i]] = rows[i] + 1
    nodes = tuple(
        GraphNode(
            index=i,
            label=_label(t, kinds[i]),
            kind=kinds[i],
            value=np.array(t.value, copy=True),
            grad=None if t.grad is None else np.array(t.grad, copy=True),
            layer=layers[i],
            row=rows[i],
        )
        for i, t in enumerate(order)
    )
    return GraphLayout(nodes=nodes, edges=tuple(edges), root=index[id(root)])


def node_positions(layout: GraphLayout) -> dict[int, tuple[float, float]]:
    """(x, y) centre of each node: x = layer, rows of each column centred on y = 0."""
    positions = {}
    for layer in range(layout.layer_count):
        column = layout.layer(layer)
        for node in column:
            positions[node.index] = (float(layer), (len(column) - 1) / 2.0 - node.row)
    return positions


def graph_figure(root: Tensor | GraphLayout, *, title: str | None = None) -> BookFigure:
    """Draw the tape left to right: each box shows a tensor's label, value and gradient."""
    layout = root if isinstance(root, GraphLayout) else graph_layout(root)
    positions = node_positions(layout)
    tallest = max(len(layout.layer(k)) for k in range(layout.layer_count))
    # 1.26 in per layer keeps a five-layer tape inside the book's 672 px column at full size.
    width, height = 1.26 * layout.layer_count + 0.1, 1.0 * tallest + 1.0
    fig, ax = new_figure(width, height)
    ax.set_position((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(-0.6, layout.layer_count - 0.4)
    ax.set_ylim(-tallest / 2.0 - 0.1, tallest / 2.0 + 0.35 + (0.25 if title else 0.0))
    ax.axis("off")
    box_w, box_h = 0.8, 0.8
    for edge in layout.edges:
        (x0, y0), (x1, y1) = positions[edge.source], positions[edge.target]
        span = x1 - x0
        ax.annotate(
            "",
            xy=(x1 - box_w / 2, y1),
            xytext=(x0 + box_w / 2, y0),
            zorder=0.5,
            arrowprops={
                "arrowstyle": "-|>",
                "color": _EDGE_COLOUR,
                "lw": 1.0,
                "shrinkA": 0,
                "shrinkB": 0,
                # an edge that skips columns arcs over the boxes between its ends
                "connectionstyle": f"arc3,rad={-0.35 if span > 1 else 0.0}",
            },
        )
    for node in layout.nodes:
        x, y = positions[node.index]
        ax.add_patch(
            FancyBboxPatch(
                (x - box_w / 2, y - box_h / 2),
                box_w,
                box_h,
                boxstyle="round,pad=0.02,rounding_size=0.08",
                facecolor=_FILL[node.kind],
                edgecolor="#000000" if node.index == layout.root else _EDGE_COLOUR,
                linewidth=2.0 if node.index == layout.root else 0.8,
            )
        )
        ax.text(x, y + 0.22, node.label, ha="center", va="center", fontsize=9, weight="bold")
        ax.text(x, y, f"value {node.value_text}", ha="center", va="center", fontsize=8)
        ax.text(
            x,
            y - 0.22,
            f"grad {node.grad_text}",
            ha="center",
            va="center",
            fontsize=8,
            color="#000000",
            style="normal" if node.grad is not None else "italic",
        )
    if title:
        fig.text(0.5, 0.98, title, ha="center", va="top", fontsize=10)
    return fig
