"""The layouts behind the composed-block figures (T21, T23), and smoke tests on Agg."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.block import (
    block_diagram,
    block_labels,
    block_orders_figure,
    block_parts,
    block_parts_figure,
    decode_trace_figure,
    decode_trace_rows,
    padded_step_cells,
    padded_step_figure,
    stage_axis_names,
)
from llm_from_scratch.nn import Decoder, TransformerBlock, causal_mask
from llm_from_scratch.random import SplitMix64

matplotlib.use("Agg")

PRE_PATH = ["x", "attention_norm", "attention", "add_1", "ffn_norm", "ffn", "add_2", "output"]
POST_PATH = ["x", "attention", "add_1", "attention_norm", "ffn", "add_2", "ffn_norm", "output"]


def main_path(diagram) -> list[str]:
    """Follow the non-residual edges from the input to the output."""
    following = {e.source: e.target for e in diagram.edges if not e.residual}
    path = ["x"]
    while path[-1] in following:
        path.append(following[path[-1]])
    return path


@pytest.mark.parametrize(("order", "expected"), [("pre", PRE_PATH), ("post", POST_PATH)])
def test_main_path_follows_the_ordering(order: str, expected: list[str]) -> None:
    """Seed fact T23: the main path follows the pre- or post-norm order, drawn top to bottom."""
    diagram = block_diagram(order)
    assert main_path(diagram) == expected == diagram.keys()
    ys = [diagram.node(k).y for k in expected]
    assert ys == sorted(ys, reverse=True)  # drawn top to bottom


@pytest.mark.parametrize("order", ["pre", "post"])
def test_every_addition_has_its_residual_path_drawn(order: str) -> None:
    """Seed fact T23: both additions have a residual bypass drawn beside the boxes."""
    diagram = block_diagram(order)
    residuals = diagram.residual_edges()
    assert len(residuals) == 2  # the seed's Figure 17.4 omits these; ours must not
    for add in ("add_1", "add_2"):
        incoming = diagram.incoming(add)
        assert len(incoming) == 2
        assert sorted(e.residual for e in incoming) == [False, True]
    # each bypass runs beside the boxes (right of every node), never through one
    right = max(node.right for node in diagram.nodes)
    for edge in residuals:
        assert edge.points[1][0] > right and edge.points[2][0] > right
        assert edge.points[-1] == (diagram.node(edge.target).right, diagram.node(edge.target).y)


def test_residual_sources_differ_between_orderings() -> None:
    pre = {e.target: e.source for e in block_diagram("pre").residual_edges()}
    post = {e.target: e.source for e in block_diagram("post").residual_edges()}
    assert pre == {"add_1": "x", "add_2": "add_1"}  # pre-norm carries the raw sum
    assert post == {"add_1": "x", "add_2": "attention_norm"}  # post-norm: the normalized sum


def test_labels_come_from_the_live_block() -> None:
    block = TransformerBlock(8, 2, 16, norm="rms", rng=SplitMix64(1))
    labels = block_labels(block)
    assert labels["attention"] == "attention  H=2, causal"
    assert labels["ffn"] == "FFN gelu  8→16→8"
    assert labels["attention_norm"].startswith("RMSNorm")
    assert block_diagram("pre", labels).node("ffn").label == "FFN gelu  8→16→8"
    with pytest.raises(ArgumentError, match="unknown keys"):
        block_diagram("pre", {"router": "x"})
    with pytest.raises(ArgumentError, match="'pre' or 'post'"):
        block_diagram("sandwich")
    with pytest.raises(ArgumentError, match="no node"):
        block_diagram("pre").node("router")


def parts(**overrides):
    values = {
        "visible": ~causal_mask(4, 4),
        "token_features": [1.0, -2.0, 0.5],
        "normalized_features": [0.5, -1.3, 0.8],
        "widths": (8, 16, 8),
        "angles": [0.0, 1.0, 2.0, 3.0],
        "router_probabilities": [0.5, 0.3, 0.2],
        "selected": [0],
    }
    values.update(overrides)
    return block_parts(**values)


def test_overview_has_the_six_parts_in_order() -> None:
    """Seed fact T23: the overview shows attention, residual, norm, FFN, position, routing."""
    panels = parts()
    assert [p.title for p in panels] == [
        "attention",
        "residual",
        "normalization",
        "feature transform",
        "position",
        "routing",
    ]
    attention = panels[0].data
    assert len(attention["arcs"]) == 4 * 5 // 2  # causal: query i reads keys 0..i
    assert all(j <= i for i, j in attention["arcs"])
    assert panels[3].data["widths"] == (8, 16, 8)
    points = panels[4].data["points"]
    np.testing.assert_allclose(np.hypot(points[:, 0], points[:, 1]), 1.0)  # rotations keep length
    np.testing.assert_allclose(points[2], [math.cos(2.0), math.sin(2.0)])
    assert panels[5].data["selected"] == (0,) and panels[5].note == "top-1 of 3 experts"


def test_overview_rejects_inconsistent_data() -> None:
    with pytest.raises(ShapeError, match="square"):
        parts(visible=np.ones((2, 3), dtype=bool))
    with pytest.raises(ShapeError, match="one token"):
        parts(normalized_features=[1.0, 2.0])
    with pytest.raises(ArgumentError, match=r"\(D, hidden, D\)"):
        parts(widths=(8, 16, 4))
    with pytest.raises(ArgumentError, match="selected"):
        parts(selected=[3])
    with pytest.raises(ArgumentError, match="six panels"):
        block_parts_figure(parts()[:5])


def test_decode_trace_rows_have_the_live_decoders_stage_shapes() -> None:
    """Seed fact T21: decode-trace rows carry the live decoder's stage shapes, [2, 4] to [2, 5]."""
    decoder = Decoder(10, 8, 2, 2, 16, rng=SplitMix64(9))
    trace = decoder.trace_step(np.array([[1, 2, 3, 4], [5, 6, 7, 8]]))
    rows = decode_trace_rows(trace.stages)
    assert [r.shape for r in rows] == [
        (2, 4),
        (2, 4, 8),
        (2, 4, 8),
        (2, 4, 8),
        (2, 4, 8),
        (2, 4, 10),
        (2, 10),
        (2,),
        (2, 5),
    ]
    assert [r.names for r in rows][5:] == [("B", "T", "V"), ("B", "V"), ("B",), ("B", "T+1")]
    marked = [[i for i, c in enumerate(r.changed) if c] for r in rows]
    assert marked == [[], [2], [], [], [], [2], [1], [], [1]]
    assert rows[5].shape_text == "[2, 4, 10]"


def test_stage_names_reject_unknown_or_wrong_rank() -> None:
    assert stage_axis_names("block 7", 3) == ("B", "T", "D")
    with pytest.raises(ArgumentError, match="Unknown decoding stage"):
        stage_axis_names("sampling", 1)
    with pytest.raises(ShapeError, match="should have 2 axes"):
        stage_axis_names("token IDs", 3)
    with pytest.raises(ArgumentError, match="at least one"):
        decode_trace_rows([])


def test_padded_cells_mark_read_positions_and_new_tokens() -> None:
    ids = np.array([[3, 1, 4, 1], [5, 9, 0, 0]])
    extended = np.array([[3, 1, 4, 1, 7], [5, 9, 2, 0, 0]])
    cells = padded_step_cells(ids, [4, 2], extended)
    read = [(c.row, c.column) for c in cells if c.role == "read"]
    new = [(c.row, c.column, c.text) for c in cells if c.role == "new"]
    assert read == [(0, 3), (1, 1)]
    assert new == [(0, 4, "7"), (1, 2, "2")]
    padding = [(c.grid, c.row, c.column) for c in cells if c.role == "padding"]
    assert padding == [(0, 1, 2), (0, 1, 3), (1, 1, 3), (1, 1, 4)]
    assert len(cells) == 2 * 4 + 2 * 5
    with pytest.raises(ShapeError, match=r"\[B, T\+1\]"):
        padded_step_cells(ids, [4, 2], ids)
    with pytest.raises(ArgumentError, match="lengths"):
        padded_step_cells(ids, [4, 0], extended)


def test_figures_draw_on_agg() -> None:
    block = TransformerBlock(8, 2, 16, rng=SplitMix64(1))
    labels = block_labels(block)
    figures = [
        block_orders_figure(block_diagram("pre", labels), block_diagram("post", labels)),
        block_parts_figure(parts()),
        decode_trace_figure(decode_trace_rows([("token IDs", (2, 4))]), title="t"),
        padded_step_figure(padded_step_cells([[1, 2], [3, 0]], [2, 1], [[1, 2, 5], [3, 4, 0]])),
    ]
    for fig in figures:
        assert isinstance(fig, Figure)
        assert fig.render_png().startswith(b"\x89PNG")
