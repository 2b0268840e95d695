"""The numbers behind the SwiGLU figures, read from the trace, against the seed facts; Agg smoke.

The figures draw the trace read back (``read_swiglu_trace``), as the chapter does, so every number
here is the seed's to the trace's six decimals.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.figures.swiglu import (
    activation_curves,
    activation_figure,
    branch_rows,
    branch_table_figure,
    gradient_figure,
    gradient_panels,
    independence_figure,
    independence_rows,
    markdown_table,
    number_text,
    vector_text,
)
from llm_from_scratch.nn import SwiGLU
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.traces import (
    TRACE_TOLERANCE,
    GatedEvidence,
    gated_evidence,
    read_swiglu_trace,
    swiglu_trace,
)

matplotlib.use("Agg")

X = [[1.0, 0.0], [0.0, 1.0]]
G = [[1.0, 0.0], [0.0, 1.0]]


def traced(layer: SwiGLU, x, g, **probe) -> GatedEvidence:
    """The chapter's path: run and record, write the trace, read it back for the figures."""
    return read_swiglu_trace(str(swiglu_trace(gated_evidence(layer, x, g, **probe))))


@pytest.fixture
def evidence() -> GatedEvidence:
    layer = SwiGLU.from_parameters(
        [[-1, 0, 1], [0, 1, -1]], [[1, 2, 3], [3, 2, 1]], [[1, 0], [0, 1], [1, -1]]
    )
    return traced(layer, X, G)


def close(actual, expected):
    np.testing.assert_allclose(
        np.asarray(actual), np.asarray(expected, float), rtol=0, atol=TRACE_TOLERANCE
    )


def test_branch_rows_hold_the_seed_stages_per_position(evidence):
    rows = dict(branch_rows(evidence))
    assert list(rows) == [
        "input X_p",
        "gate g = X_p W_g",
        "SiLU(g)",
        "up u = X_p W_u",
        "h = SiLU(g) ⊙ u",
        "output Y_p = h W_2",
    ]
    close(rows["input X_p"], X)
    close(rows["gate g = X_p W_g"], [[-1, 0, 1], [0, 1, -1]])
    close(rows["SiLU(g)"], [[-0.268941, 0, 0.731059], [0, 0.731059, -0.268941]])
    close(rows["up u = X_p W_u"], [[1, 2, 3], [3, 2, 1]])
    close(rows["h = SiLU(g) ⊙ u"], [[-0.268941, 0, 2.193176], [0, 1.462117, -0.268941]])
    close(rows["output Y_p = h W_2"], [[1.924234, -2.193176], [-0.268941, 1.731059]])


def test_independence_rows_show_one_changed_input_and_one_exactly_equal_output(evidence):
    rows = independence_rows(evidence)
    assert [r.input_changed for r in rows] == [True, False]
    assert [r.output_unchanged for r in rows] == [False, True]
    close(rows[0].input_after, [0, 0])
    close(rows[1].output_after, [-0.268941, 1.731059])
    assert np.array_equal(rows[1].output_after, rows[1].output_before)


def test_gradient_panels_pair_local_rows_with_shared_sums(evidence):
    panels = gradient_panels(evidence)
    assert panels.local_labels == ["G", "dH", "dA", "dU", "dX"]
    close(panels.local[0][2], [0.072329, 0, 2.783012])
    close(panels.local[1][3], [0, 0.731059, 0.268941])
    close(panels.local[0][4], [4.634916, -2.858777])
    close(panels.local[1][4], [2.196612, 3.658729])
    names = [name for name, _, _ in panels.shared]
    assert names == ["ffn.gate.weight", "ffn.up.weight", "ffn.down.weight"]
    close(panels.shared[2][2], [[-0.268941, 0], [0, 1.462117], [2.193176, -0.268941]])
    # every shared sum equals Σ_p of the outer products of the local rows it names
    x, h = evidence.X, evidence.H
    local = np.array([[row for row in rows] for rows in panels.local], dtype=object)
    d_a = np.stack(local[:, 2])
    d_u = np.stack(local[:, 3])
    g = np.stack(local[:, 0])
    for (_, _, grad), (left, right) in zip(
        panels.shared, [(x, d_a), (x, d_u), (h, g)], strict=True
    ):
        total = sum(np.outer(left[p], right[p]) for p in range(len(x)))
        np.testing.assert_allclose(grad, total, rtol=0, atol=2 * TRACE_TOLERANCE)  # traced factors


def test_figure_numbers_are_the_layers_own_numbers():
    """Every number the three trace figures show is the layer's own, to the trace's 5e-7."""
    rng = SplitMix64(5)
    layer = SwiGLU(3, 4, 2, rng=rng)
    x, g = rng.normal((3, 3)), rng.normal((3, 2))
    evidence = traced(layer, x, g, changed_position=1, replacement=np.ones(3))
    stages = layer.forward_with_intermediates(Tensor(x))
    rows = [np.array(values) for _, values in branch_rows(evidence)]
    references = [x, *(stage.value for stage in stages.as_dict().values())]  # X, A, S, U, H, Y
    for row, reference in zip(rows, references, strict=True):
        close(row, reference)
    leaf = Tensor(x, requires_grad=True)
    layer(leaf).backward(g)
    panels = gradient_panels(evidence)
    close([local[-1] for local in panels.local], leaf.grad)
    for (name, _, gradient), (parameter_name, parameter) in zip(
        panels.shared, layer.named_parameters(), strict=True
    ):
        assert name == parameter_name
        close(gradient, parameter.grad)
    changed = x.copy()
    changed[1] = 1.0
    after = layer(changed).value
    for row in independence_rows(evidence):
        close(row.input_after, changed[row.position])
        close(row.output_after, after[row.position])
    assert [row.output_unchanged for row in independence_rows(evidence)] == [True, False, True]


def test_activation_curves_span_the_interval_and_agree_with_closed_forms():
    curves = activation_curves()
    assert curves.z[0] == -6.0 and curves.z[-1] == 6.0 and len(curves.z) == 241
    sigma = 1.0 / (1.0 + np.exp(-curves.z))
    np.testing.assert_allclose(curves.silu, curves.z * sigma, rtol=0, atol=1e-14)
    np.testing.assert_allclose(curves.tanh, np.tanh(curves.z), rtol=0, atol=1e-15)
    assert np.array_equal(curves.relu, np.maximum(curves.z, 0.0))
    z_min, s_min = curves.silu_minimum
    assert -1.35 < z_min < -1.2 and -0.2785 < s_min < -0.278  # true minimum ≈ -0.278465
    assert curves.silu.max() > 1.0 and curves.silu.min() < 0.0  # outside a probability's range


def test_text_helpers():
    assert number_text(-0.26894142) == "-0.268941"
    assert number_text(2.0) == "2"
    assert number_text(-1e-12) == "0"
    assert vector_text([1.0, 0.0, -0.5]) == "[1, 0, -0.5]"
    assert markdown_table(["a", "b"], [["1", "2"]]) == "| a | b |\n|---|---:|\n| 1 | 2 |"


def test_figures_draw_on_agg(evidence):
    for fig in (
        branch_table_figure(evidence),
        independence_figure(evidence),
        gradient_figure(evidence),
        activation_figure(activation_curves()),
    ):
        assert isinstance(fig, Figure)
        fig.canvas.draw()


def test_figures_follow_other_widths():
    rng = SplitMix64(7)
    layer = SwiGLU(3, 4, 5, rng=rng)
    evidence = traced(layer, rng.normal((3, 3)), rng.normal((3, 5)), changed_position=2)
    assert len(branch_rows(evidence)[0][1]) == 3
    assert [r.output_unchanged for r in independence_rows(evidence)] == [True, True, False]
    for fig in (branch_table_figure(evidence), gradient_figure(evidence)):
        fig.canvas.draw()
    assert math.isclose(gradient_panels(evidence).shared[0][2].shape[0], 3)
