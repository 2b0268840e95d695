"""TRACE linear-layers-v1 (L12): the evidence of one pass, its text, and the text read back."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.nn import Linear
from llm_from_scratch.traces import (
    TRACE_TOLERANCE,
    LinearEvidence,
    Trace,
    linear_evidence,
    linear_layers_trace,
    parse_trace,
    read_linear_trace,
    trace_gaps,
)

X = [[[1.0, 2.0], [-1.0, 3.0]]]
W = [[1.0, 0.0, -1.0], [2.0, 0.5, 1.0]]
B = [0.5, -0.5, 1.0]
G = [[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]]

EXPECTED_L12 = """\
TRACE linear-layers-v1 BEGIN
FIXTURE name=known-affine-projection parameter-prefix=token_projection input-width=2 output-width=3 bias=true parameter-count=9 input-shape=[1,2,2] output-shape=[1,2,3] upstream-shape=[1,2,3]
INPUT values=[1.000000,2.000000,-1.000000,3.000000]
WEIGHT-ROW input-feature=0 values=[1.000000,0.000000,-1.000000]
WEIGHT-ROW input-feature=1 values=[2.000000,0.500000,1.000000]
BIAS values=[0.500000,-0.500000,1.000000]
CELL position=0 coordinate=0,0 output-feature=0 input=[1.000000,2.000000] products=[1.000000,4.000000] weighted-sum=5.000000 bias=0.500000 result=5.500000
CELL position=0 coordinate=0,0 output-feature=1 input=[1.000000,2.000000] products=[0.000000,1.000000] weighted-sum=1.000000 bias=-0.500000 result=0.500000
CELL position=0 coordinate=0,0 output-feature=2 input=[1.000000,2.000000] products=[-1.000000,2.000000] weighted-sum=1.000000 bias=1.000000 result=2.000000
POSITION-GRADIENT position=0 coordinate=0,0 upstream=[1.000000,0.000000,-1.000000] input-gradient=[2.000000,1.000000]
CELL position=1 coordinate=0,1 output-feature=0 input=[-1.000000,3.000000] products=[-1.000000,6.000000] weighted-sum=5.000000 bias=0.500000 result=5.500000
CELL position=1 coordinate=0,1 output-feature=1 input=[-1.000000,3.000000] products=[0.000000,1.500000] weighted-sum=1.500000 bias=-0.500000 result=1.000000
CELL position=1 coordinate=0,1 output-feature=2 input=[-1.000000,3.000000] products=[1.000000,3.000000] weighted-sum=4.000000 bias=1.000000 result=5.000000
POSITION-GRADIENT position=1 coordinate=0,1 upstream=[0.500000,2.000000,1.000000] input-gradient=[-0.500000,3.000000]
WEIGHT-GRADIENT shape=[2,3] values=[0.500000,-2.000000,-2.000000,3.500000,6.000000,1.000000]
BIAS-GRADIENT shape=[3] values=[1.500000,2.000000,0.000000]
POLICY affine-parameters=9 bias-free-parameters=6 bias-free-output=[5.000000,1.000000,1.000000,5.000000,1.500000,4.000000]
AXES input-leading=[1,2] output-leading=[1,2] preserved=true mixed-axis=feature
TRACE linear-layers-v1 END
"""  # noqa: E501


def traced(x, w, b, g, **kwargs) -> LinearEvidence:
    """Arrays → evidence → trace text → evidence: what the chapter's figures draw."""
    return read_linear_trace(str(linear_layers_trace(linear_evidence(x, w, b, g, **kwargs))))


def test_trace_text_is_the_seed_trace_exactly() -> None:
    """L12: the fixture's trace, line for line."""
    assert str(linear_layers_trace(linear_evidence(X, W, B, G))) == EXPECTED_L12


def test_trace_has_the_seed_line_kinds_in_order() -> None:
    """L12: FIXTURE, INPUT, WEIGHT-ROW ×2, BIAS, CELL ×6, POSITION-GRADIENT ×2, ..., AXES."""
    name, records = parse_trace(str(linear_layers_trace(linear_evidence(X, W, B, G))))
    assert name == "linear-layers-v1"
    kinds = [r.kind for r in records]
    assert kinds[:5] == ["FIXTURE", "INPUT", "WEIGHT-ROW", "WEIGHT-ROW", "BIAS"]
    assert kinds.count("CELL") == 6
    assert kinds.count("POSITION-GRADIENT") == 2
    assert kinds[-4:] == ["WEIGHT-GRADIENT", "BIAS-GRADIENT", "POLICY", "AXES"]
    assert len(records) == 17  # + the BEGIN and END lines


def test_evidence_read_from_the_trace_holds_every_seed_value() -> None:
    """L12: what the diagram draws, read from the text: outputs, sums, gradients, counts."""
    evidence = traced(X, W, B, G)
    assert (evidence.input_width, evidence.output_width, evidence.positions) == (2, 3, 2)
    assert evidence.input_shape == (1, 2, 2) and evidence.output_shape == (1, 2, 3)
    assert evidence.parameter_prefix == "token_projection"
    np.testing.assert_array_equal(evidence.weight, W)
    np.testing.assert_array_equal(evidence.bias, B)
    np.testing.assert_array_equal(evidence.outputs, [[5.5, 0.5, 2.0], [5.5, 1.0, 5.0]])
    np.testing.assert_array_equal(evidence.weighted_sums[0], [5.0, 1.0, 1.0])
    np.testing.assert_array_equal(evidence.bias_free_outputs[1], [5.0, 1.5, 4.0])
    np.testing.assert_array_equal(evidence.products[0, 0], [1.0, 4.0])  # y₀ = 1·1 + 2·2 + 0.5
    np.testing.assert_array_equal(evidence.input_gradients, [[2.0, 1.0], [-0.5, 3.0]])
    np.testing.assert_array_equal(evidence.weight_gradient, [[0.5, -2.0, -2.0], [3.5, 6.0, 1.0]])
    np.testing.assert_array_equal(evidence.bias_gradient, [1.5, 2.0, 0.0])
    assert (evidence.affine_parameters, evidence.bias_free_parameters) == (9, 6)
    assert evidence.input_leading == evidence.output_leading == (1, 2)
    assert evidence.leading_preserved
    assert evidence.coordinates == ("0,0", "0,1")


def test_trace_round_trip_equals_the_layers_own_outputs() -> None:
    """Arrays → trace text → evidence equals the layer's outputs and gradients within 5e-7."""
    rng = np.random.default_rng(3)
    x, w, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5)
    g = rng.normal(size=(2, 3, 5))
    layer = Linear.from_parameters(w, b, name="probe")
    leaf = Tensor(x, requires_grad=True)
    layer(leaf).backward(g)
    evidence = traced(x, w, b, g, name="probe")
    close = {"rtol": 0, "atol": TRACE_TOLERANCE}
    np.testing.assert_allclose(evidence.outputs, layer(Tensor(x)).value.reshape(6, 5), **close)
    np.testing.assert_allclose(evidence.input_gradients, leaf.grad.reshape(6, 4), **close)
    np.testing.assert_allclose(evidence.weight_gradient, layer.weight.grad, **close)
    np.testing.assert_allclose(evidence.bias_gradient, layer.bias.grad, **close)
    np.testing.assert_allclose(evidence.bias_free_outputs, (x @ w).reshape(6, 5), **close)
    np.testing.assert_allclose(evidence.inputs, x.reshape(6, 4), **close)


@given(
    leading=st.lists(st.integers(0, 3), min_size=0, max_size=2),
    widths=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    seed=st.integers(0, 2**16),
)
def test_every_field_survives_the_text_to_the_trace_precision(leading, widths, seed) -> None:
    """Exact evidence and the evidence read from its trace differ by at most 5e-7 anywhere."""
    d_in, d_out = widths
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(*leading, d_in)) * 10
    g = rng.normal(size=(*leading, d_out))
    w, b = rng.normal(size=(d_in, d_out)), rng.normal(size=d_out)
    exact = linear_evidence(x, w, b, g)
    gaps = trace_gaps(exact, read_linear_trace(str(linear_layers_trace(exact))))
    assert max(gaps.values()) <= TRACE_TOLERANCE, {
        k: v for k, v in gaps.items() if v > TRACE_TOLERANCE
    }


def test_trace_follows_other_widths_and_shapes() -> None:
    """L12 beyond the fixture: four positions of a [2, 2, 3] input, a [3, 4] weight."""
    x = np.arange(12.0).reshape(2, 2, 3) / 4
    w = np.arange(12.0).reshape(3, 4) / 10 - 0.5
    b = [1.0, -1.0, 0.25, 0.0]
    evidence = traced(x, w, b, np.ones((2, 2, 4)), name="other")
    assert evidence.positions == 4
    assert evidence.coordinates == ("0,0", "0,1", "1,0", "1,1")
    np.testing.assert_allclose(evidence.outputs[3], x[1, 1] @ w + b, atol=TRACE_TOLERANCE)
    np.testing.assert_allclose(evidence.bias_gradient, [4.0] * 4, atol=0)
    np.testing.assert_allclose(
        evidence.weight_gradient, x.reshape(4, 3).T @ np.ones((4, 4)), atol=TRACE_TOLERANCE
    )


def test_vector_input_has_one_unnamed_position() -> None:
    """L12 for a rank-1 input: one position, coordinate '()', no leading axes."""
    evidence = traced([1.0, 2.0], W, B, [1.0, 0.0, -1.0])
    assert evidence.coordinates == ("()",)
    assert evidence.input_leading == () and evidence.leading_preserved


def test_empty_leading_axis_has_no_positions() -> None:
    """An input [0, d_in] writes no CELL lines and reads back as zero positions."""
    evidence = traced(np.zeros((0, 2)), W, B, np.zeros((0, 3)))
    assert evidence.positions == 0
    assert evidence.outputs.shape == (0, 3) and evidence.products.shape == (0, 3, 2)
    np.testing.assert_array_equal(evidence.weight_gradient, np.zeros((2, 3)))


def test_evidence_rejects_missing_bias_and_bad_upstream() -> None:
    with pytest.raises(ArgumentError):
        linear_evidence(X, W, None, G)
    with pytest.raises(ShapeError) as info:
        linear_evidence(X, W, B, [1.0, 0.0, -1.0])
    assert str(info.value) == (
        "The upstream gradient G must have the output's shape (1, 2, 3); got (3,)."
    )


def test_reader_rejects_other_and_incomplete_traces() -> None:
    with pytest.raises(ArgumentError, match="Expected a TRACE linear-layers-v1"):
        read_linear_trace(str(Trace("swiglu-feed-forward-v1")))
    without_policy = "".join(
        line + "\n" for line in EXPECTED_L12.splitlines() if not line.startswith("POLICY")
    )
    with pytest.raises(ArgumentError, match="needs POLICY lines"):
        read_linear_trace(without_policy)
    without_gradient = "".join(
        line + "\n"
        for line in EXPECTED_L12.splitlines()
        if not line.startswith("POSITION-GRADIENT position=1")
    )
    with pytest.raises(ArgumentError, match="one POSITION-GRADIENT line per position"):
        read_linear_trace(without_gradient)
