"""The computation-graph figure: its layout is pure data read from the real tape."""

import matplotlib
import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import GraphReleasedError
from llm_from_scratch.figures.graph import (
    graph_figure,
    graph_layout,
    node_positions,
    value_text,
)

matplotlib.use("Agg")


def small_graph(retain: bool = True):
    """L = tanh(x·w + b) · x with x = 1.5, w = −0.5, b = 0.25 (x is used twice)."""
    x = Tensor(1.5, requires_grad=True, name="x")
    w = Tensor(-0.5, requires_grad=True, name="w")
    b = Tensor(0.25, requires_grad=True, name="b")
    z = x * w + b
    z.name = "z"
    z.retain_grad()
    y = z.tanh()
    y.name = "y"
    y.retain_grad()
    loss = y * x
    loss.name = "L"
    loss.retain_grad()
    loss.backward(retain_graph=retain)
    return loss


def test_nodes_edges_and_layers_follow_the_tape():
    layout = graph_layout(small_graph())
    labels = [n.label for n in layout.nodes]
    assert labels == ["x", "w", "mul", "b", "z = add", "y = tanh", "L = mul"]
    assert [n.kind for n in layout.nodes] == ["input", "input", "op", "input", "op", "op", "op"]
    assert [(n.layer, n.row) for n in layout.nodes] == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),  # b sits one column left of its consumer, the add
        (2, 0),
        (3, 0),
        (4, 0),
    ]
    edges = {(e.source, e.target, e.slot) for e in layout.edges}
    assert edges == {(0, 2, 0), (1, 2, 1), (2, 4, 0), (3, 4, 1), (4, 5, 0), (5, 6, 0), (0, 6, 1)}
    assert layout.root == 6
    assert layout.layer_count == 5


def test_values_and_gradients_match_closed_forms():
    layout = graph_layout(small_graph())
    x, w, b = 1.5, -0.5, 0.25
    t = np.tanh(x * w + b)
    local = 1.0 - t * t  # tanh′
    assert layout.by_label("y = tanh").value == pytest.approx(t, abs=1e-15)
    assert layout.by_label("L = mul").grad == pytest.approx(1.0)
    assert layout.by_label("y = tanh").grad == pytest.approx(x)  # ∂L/∂y = x
    assert layout.by_label("z = add").grad == pytest.approx(x * local)
    assert layout.by_label("b").grad == pytest.approx(x * local)
    assert layout.by_label("w").grad == pytest.approx(x * local * x)
    # x is used twice: the two paths add
    assert layout.by_label("x").grad == pytest.approx(t + x * local * w)
    assert layout.by_label("mul").grad is None  # not retained: the figure shows a dash
    assert layout.by_label("mul").grad_text == "—"


def test_layout_is_deterministic():
    first, second = graph_layout(small_graph()), graph_layout(small_graph())
    assert [(n.label, n.layer, n.row) for n in first.nodes] == [
        (n.label, n.layer, n.row) for n in second.nodes
    ]
    assert first.edges == second.edges


def test_constants_and_repeated_inputs():
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    y = (x * x).sum() * 3.0
    layout = graph_layout(y)
    assert [n.label for n in layout.nodes] == ["x", "mul", "sum", "const", "mul"]
    const = layout.by_label("const")
    assert const.kind == "constant"
    assert const.layer == layout.layer_count - 2  # beside the op that reads it
    square = layout.by_label("sum").index - 1
    assert sorted(e.slot for e in layout.edges if e.target == square) == [0, 1]


def test_released_tape_is_refused_with_the_fix():
    loss = small_graph(retain=False)
    with pytest.raises(GraphReleasedError, match="retain_graph=True"):
        graph_layout(loss)


def test_a_leaf_alone_is_one_node():
    layout = graph_layout(Tensor(2.0, name="c"))
    assert len(layout.nodes) == 1 and layout.edges == ()
    assert layout.nodes[0].kind == "constant"


def test_value_text():
    assert value_text(np.array(0.123456789)) == "0.1235"
    assert value_text(np.array([1.0, -2.5])) == "[1, -2.5]"
    assert value_text(np.zeros((2, 3))) == "shape [2, 3]"


def test_positions_centre_each_column():
    layout = graph_layout(small_graph())
    positions = node_positions(layout)
    assert positions[0] == (0.0, 0.5) and positions[1] == (0.0, -0.5)
    assert positions[6] == (4.0, 0.0)


def test_figure_smoke():
    fig = graph_figure(small_graph(), title="L = tanh(xw + b) x")
    assert len(fig.axes) == 1
    assert len(fig.axes[0].patches) == 7
