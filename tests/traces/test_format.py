"""The trace format (llm_from_scratch.traces) and the linear-layers-v1 trace (L12)."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.nn import linear_layers_trace, read_linear_trace
from llm_from_scratch.traces import Trace, fixed, fixed_list, format_value, parse_trace, shape_text

X = [[[1.0, 2.0], [-1.0, 3.0]]]
W = [[1.0, 0.0, -1.0], [2.0, 0.5, 1.0]]
B = [0.5, -0.5, 1.0]
G = [[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]]

# --- the format --------------------------------------------------------------------------------


def test_fixed_six_decimals_and_no_negative_zero() -> None:
    assert fixed(5.5) == "5.500000"
    assert fixed(-0.5) == "-0.500000"
    assert fixed(-0.0) == "0.000000"
    assert fixed(-1e-9) == "0.000000"


def test_fixed_list_and_shape_text() -> None:
    assert fixed_list([[1, -0.5]]) == "[1.000000,-0.500000]"
    assert fixed_list([]) == "[]"
    assert shape_text((1, 2, 2)) == "[1,2,2]"
    assert shape_text(()) == "[]"


def test_format_value_kinds() -> None:
    assert format_value(True) == "true"
    assert format_value(np.bool_(False)) == "false"
    assert format_value(3) == "3"
    assert format_value(np.int64(3)) == "3"
    assert format_value(0.25) == "0.250000"
    assert format_value((1, 2, 3)) == "[1,2,3]"
    assert format_value(np.array([1.0, 2.0])) == "[1.000000,2.000000]"
    assert format_value("feature") == "feature"


@pytest.mark.parametrize("bad", ["", "two words"])
def test_format_value_rejects_blank_or_spaced_text(bad: str) -> None:
    with pytest.raises(ArgumentError):
        format_value(bad)


def test_trace_round_trip() -> None:
    trace = Trace("demo-v1").line("FIXTURE", input_width=2, bias=True, input_shape=(1, 2, 2))
    trace.line("INPUT", values=[1.0, 2.0])
    text = str(trace)
    assert text == (
        "TRACE demo-v1 BEGIN\n"
        "FIXTURE input-width=2 bias=true input-shape=[1,2,2]\n"
        "INPUT values=[1.000000,2.000000]\n"
        "TRACE demo-v1 END\n"
    )
    name, records = parse_trace(text)
    assert name == "demo-v1"
    assert [r.kind for r in records] == ["FIXTURE", "INPUT"]
    assert records[0].fields == {"input-width": "2", "bias": "true", "input-shape": "[1,2,2]"}
    np.testing.assert_array_equal(records[1].numbers("values"), [1.0, 2.0])


@pytest.mark.parametrize(
    "text",
    ["", "INPUT values=[1]\n", "TRACE a BEGIN\nX k=1\nTRACE b END\n", "TRACE a BEGIN\n"],
)
def test_parse_trace_rejects_unframed_text(text: str) -> None:
    with pytest.raises(ArgumentError):
        parse_trace(text)


# --- L12: TRACE linear-layers-v1 ---------------------------------------------------------------

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


def test_l12_trace_text_exact() -> None:
    assert str(linear_layers_trace(X, W, B, G)) == EXPECTED_L12


def test_l12_line_kinds_and_counts() -> None:
    name, records = parse_trace(str(linear_layers_trace(X, W, B, G)))
    assert name == "linear-layers-v1"
    kinds = [r.kind for r in records]
    assert kinds[:5] == ["FIXTURE", "INPUT", "WEIGHT-ROW", "WEIGHT-ROW", "BIAS"]
    assert kinds.count("CELL") == 6
    assert kinds.count("POSITION-GRADIENT") == 2
    assert kinds[-4:] == ["WEIGHT-GRADIENT", "BIAS-GRADIENT", "POLICY", "AXES"]
    assert len(records) == 17  # + the BEGIN and END lines


def test_l12_view_reads_back_every_seed_value() -> None:
    view = read_linear_trace(str(linear_layers_trace(X, W, B, G)))
    assert (view.input_width, view.output_width) == (2, 3)
    assert view.input_shape == (1, 2, 2) and view.output_shape == (1, 2, 3)
    np.testing.assert_array_equal(view.weight, W)
    np.testing.assert_array_equal(view.bias, B)
    p0, p1 = view.positions
    np.testing.assert_array_equal(p0.outputs, [5.5, 0.5, 2.0])
    np.testing.assert_array_equal(p1.outputs, [5.5, 1.0, 5.0])
    np.testing.assert_array_equal(p0.weighted_sums, [5.0, 1.0, 1.0])
    np.testing.assert_array_equal(p1.bias_free_outputs, [5.0, 1.5, 4.0])
    np.testing.assert_array_equal(p0.products[0], [1.0, 4.0])  # y₀ = 1·1 + 2·2 + 0.5
    np.testing.assert_array_equal(p0.input_gradient, [2.0, 1.0])
    np.testing.assert_array_equal(p1.input_gradient, [-0.5, 3.0])
    np.testing.assert_array_equal(view.weight_gradient, [[0.5, -2.0, -2.0], [3.5, 6.0, 1.0]])
    np.testing.assert_array_equal(view.bias_gradient, [1.5, 2.0, 0.0])
    assert (view.affine_parameters, view.bias_free_parameters) == (9, 6)
    assert view.input_leading == view.output_leading == (1, 2)
    assert view.leading_preserved
    assert (p0.coordinate, p1.coordinate) == ("0,0", "0,1")


def test_l12_trace_follows_other_widths_and_shapes() -> None:
    x = np.arange(12.0).reshape(2, 2, 3) / 4
    w = np.arange(12.0).reshape(3, 4) / 10 - 0.5
    b = [1.0, -1.0, 0.25, 0.0]
    g = np.ones((2, 2, 4))
    view = read_linear_trace(str(linear_layers_trace(x, w, b, g, name="other")))
    assert len(view.positions) == 4
    assert [p.coordinate for p in view.positions] == ["0,0", "0,1", "1,0", "1,1"]
    np.testing.assert_allclose(view.positions[3].outputs, x[1, 1] @ w + b, atol=5e-7)
    np.testing.assert_allclose(view.bias_gradient, [4.0] * 4, atol=0)
    np.testing.assert_allclose(
        view.weight_gradient, x.reshape(4, 3).T @ np.ones((4, 4)), atol=5e-7
    )


def test_l12_vector_input_has_one_unnamed_position() -> None:
    view = read_linear_trace(str(linear_layers_trace([1.0, 2.0], W, B, [1.0, 0.0, -1.0])))
    assert [p.coordinate for p in view.positions] == ["()"]
    assert view.input_leading == () and view.leading_preserved


def test_l12_trace_rejects_missing_bias_and_bad_upstream() -> None:
    with pytest.raises(ArgumentError):
        linear_layers_trace(X, W, None, G)
    with pytest.raises(ShapeError) as info:
        linear_layers_trace(X, W, B, [1.0, 0.0, -1.0])
    assert str(info.value) == (
        "The upstream gradient G must have the output's shape (1, 2, 3); got (3,)."
    )


def test_read_linear_trace_rejects_other_traces() -> None:
    with pytest.raises(ArgumentError):
        read_linear_trace(str(Trace("swiglu-feed-forward-v1")))
