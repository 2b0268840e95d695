"""Registered ops against central differences, on hypothesis-drawn shapes.

Every op is already checked on the example it registers with (tests/autodiff/test_report.py).
The cases here go further: how to build inputs of many shapes (inside the op's domain) and how
to call the op. Shapes include broadcasting, size-1 axes and empty axes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import OPS, Tensor, concat, gradcheck, ops
from llm_from_scratch.random import SplitMix64

dims = st.integers(min_value=0, max_value=3)
shapes = st.lists(st.integers(min_value=1, max_value=3), min_size=0, max_size=3).map(tuple)
shapes_with_empty = st.lists(dims, min_size=1, max_size=3).map(tuple)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: the second drops leading axes and turns some axes to 1."""
    a = draw(st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple))
    keep = draw(st.integers(0, len(a)))
    b = list(a[len(a) - keep :])
    for i in range(len(b)):
        if draw(st.booleans()):
            b[i] = 1
    return (a, tuple(b)) if draw(st.booleans()) else (tuple(b), a)


def values(shape, seed, low=-2.0, high=2.0):
    return SplitMix64(seed).uniform(low, high, shape)


def away_from_zero(shape, seed):
    """Entries in ±[0.2, 2]: no kink of relu, no pole of division, inside log/sqrt's domain."""
    magnitude = values(shape, seed, 0.2, 2.0)
    signs = np.where(values(shape, seed + 1, -1.0, 1.0) < 0, -1.0, 1.0)
    return magnitude * signs


@dataclass(frozen=True)
class Case:
    inputs: st.SearchStrategy  # draws a list of input arrays
    call: Callable[..., Tensor]


seeds = st.integers(0, 2**32)


def unary(call, shape_strategy=shapes_with_empty, make=values):
    return Case(st.builds(lambda s, seed: [make(s, seed)], shape_strategy, seeds), call)


def binary(call, make_second=values):
    return Case(
        st.builds(
            lambda p, seed: [values(p[0], seed), make_second(p[1], seed + 7)],
            broadcast_pair(),
            seeds,
        ),
        call,
    )


@st.composite
def matmul_inputs(draw):
    n, k, m = draw(st.integers(1, 3)), draw(st.integers(0, 3)), draw(st.integers(1, 3))
    batch = draw(st.lists(st.integers(1, 2), max_size=2).map(tuple))
    kind = draw(st.sampled_from(["batched", "shared", "vec-left", "vec-right", "dot"]))
    seed = draw(seeds)
    shapes_ = {
        "batched": ((*batch, n, k), (*batch, k, m)),
        "shared": ((*batch, n, k), (k, m)),
        "vec-left": ((k,), (*batch, k, m)),
        "vec-right": ((*batch, n, k), (k,)),
        "dot": ((k,), (k,)),
    }[kind]
    return [values(shapes_[0], seed), values(shapes_[1], seed + 3)]


@st.composite
def axis_inputs(draw, allow_empty=True):
    shape = draw(st.lists(st.integers(0 if allow_empty else 1, 3), min_size=1, max_size=3))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return [values(tuple(shape), draw(seeds))], axis


@st.composite
def permute_inputs(draw):
    shape = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    axes = draw(st.permutations(range(len(shape))))
    return [values(tuple(shape), draw(seeds))], tuple(axes)


@st.composite
def reshape_inputs(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    size = int(np.prod(shape))
    target = draw(st.sampled_from([(size,), (1, size), (size, 1), (-1,)]))
    return [values(tuple(shape), draw(seeds))], target


@st.composite
def index_inputs(draw):
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["slice", "int", "gather", "rows-cols", "permutation"]))
    if kind == "slice":
        index = (slice(draw(st.integers(0, rows)), None), slice(None, None, 2))
    elif kind == "int":
        index = draw(st.integers(0, rows - 1))
    elif kind == "gather":  # repeated rows: gradients must add up (embedding lookup)
        index = np.array(draw(st.lists(st.integers(0, rows - 1), min_size=1, max_size=5)))
    elif kind == "rows-cols":
        index = (np.array([0, rows - 1, 0]), np.array([cols - 1, 0, cols - 1]))
    else:  # no repeats: the gradient is an assignment, not a scatter-add (RoPE's pair swap)
        index = (Ellipsis, np.array(draw(st.permutations(range(cols)))))
    return [values((rows, cols), draw(seeds))], index


@st.composite
def concat_inputs(draw):
    count = draw(st.integers(1, 3))
    rank = draw(st.integers(1, 3))
    axis = draw(st.integers(0, rank - 1))
    base = draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
    seed = draw(seeds)
    arrays = []
    for i in range(count):
        shape = list(base)
        shape[axis] = draw(st.integers(0, 3))
        arrays.append(values(tuple(shape), seed + i))
    return arrays, axis


@st.composite
def mask_inputs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    seed = draw(seeds)
    mask = values(shape[-1:], seed + 5) > 0  # broadcast along leading axes
    return [values(shape, seed)], mask


@st.composite
def rms_inputs(draw):
    leading = draw(st.lists(st.integers(0, 2), max_size=2))
    width, seed = draw(st.integers(1, 4)), draw(seeds)
    return [values((*leading, width), seed), values((width,), seed + 1)]


@st.composite
def layer_norm_inputs(draw):
    leading = draw(st.lists(st.integers(0, 2), max_size=2))
    width, seed = draw(st.integers(1, 4)), draw(seeds)
    shapes = ((*leading, width), (width,), (width,))
    return [values(shape, seed + i) for i, shape in enumerate(shapes)]


@st.composite
def rotation_inputs(draw):
    width = 2 * draw(st.integers(1, 3))
    rows, seed = draw(st.integers(0, 3)), draw(seeds)
    partner = np.array(draw(st.permutations(range(width))))
    tables = (values((width,), seed + 1), values((width,), seed + 2), partner)
    return [values((rows, width), seed)], tables


@st.composite
def attention_inputs(draw):
    batch, queries, keys = (
        draw(st.integers(1, 2)),
        draw(st.integers(1, 3)),
        draw(st.integers(1, 3)),
    )
    width, seed = draw(st.integers(1, 3)), draw(seeds)
    blocked = values((1, 1, queries, keys), seed + 4) > 0.5  # may block whole rows
    arrays = [values((batch, 2, queries, width), seed), values((batch, 2, keys, width), seed + 1)]
    if draw(st.booleans()):
        arrays.append(values((2, queries, keys), seed + 2))  # a bias with its own gradient
    added = values((queries, keys), seed + 3) if draw(st.booleans()) else None
    scale = draw(st.sampled_from([0.7, 0.5]))  # 0.5, exact: scales the keys when fewer
    return arrays, {"scale": scale, "blocked": blocked, "added": added}


def with_param(strategy, call):
    return Case(strategy, call)


CASES: dict[str, Case] = {
    "add": binary(lambda x, y: x + y),
    "sub": binary(lambda x, y: x - y),
    "mul": binary(lambda x, y: x * y),
    "div": binary(lambda x, y: x / y, make_second=away_from_zero),
    "neg": unary(lambda x: -x),
    "power": unary(lambda x: x**3),
    "exp": unary(lambda x: x.exp()),
    "log": unary(lambda x: x.log(), make=lambda s, seed: values(s, seed, 0.2, 3.0)),
    "sqrt": unary(lambda x: x.sqrt(), make=lambda s, seed: values(s, seed, 0.2, 3.0)),
    "tanh": unary(lambda x: x.tanh()),
    "sigmoid": unary(lambda x: x.sigmoid()),
    "silu": unary(lambda x: x.silu()),
    "relu": unary(lambda x: x.relu(), make=away_from_zero),
    "gelu": unary(lambda x: x.gelu()),
    "matmul": Case(matmul_inputs(), lambda x, y: x @ y),
    "rms_norm": Case(rms_inputs(), lambda x, g: ops.rms_norm(x, g, eps=1e-3)),
    "layer_norm": Case(layer_norm_inputs(), lambda x, g, b: ops.layer_norm(x, g, b, eps=1e-3)),
}

# Ops with a non-tensor parameter: the strategy draws (arrays, parameter).
PARAM_CASES: dict[str, tuple[st.SearchStrategy, Callable]] = {
    "sum": (axis_inputs(), lambda axis: lambda x: x.sum(axis=axis, keepdims=axis % 2 == 0)),
    "softmax": (axis_inputs(), lambda axis: lambda x: x.softmax(axis)),
    "log_softmax": (axis_inputs(), lambda axis: lambda x: x.log_softmax(axis)),
    "permute": (permute_inputs(), lambda axes: lambda x: x.permute(*axes)),
    "reshape": (reshape_inputs(), lambda shape: lambda x: x.reshape(*shape)),
    "getitem": (index_inputs(), lambda index: lambda x: x[index]),
    "concat": (concat_inputs(), lambda axis: lambda *xs: concat(xs, axis=axis)),
    "masked_fill": (mask_inputs(), lambda mask: lambda x: x.masked_fill(mask, -1.5)),
    "pair_rotate": (
        rotation_inputs(),
        lambda t: lambda x: ops.pair_rotate(x, cos=t[0], sin=t[1], partner=t[2]),
    ),
    "attention_weights": (
        attention_inputs(),
        lambda params: lambda *qkb: ops.attention_weights(*qkb, **params),
    ),
}


def test_shape_drawn_cases_name_registered_ops_and_cover_the_original_set():
    """Every op is checked on its own example (test_report.py); these add many drawn shapes.

    A new op needs no case here, but every op of the original set keeps its drawn shapes.
    """
    covered = set(CASES) | set(PARAM_CASES)
    assert covered <= set(OPS), f"cases for ops that are not registered: {covered - set(OPS)}"
    assert len(covered) == 27


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_central_differences(name):
    case = CASES[name]

    @given(case.inputs)
    def check(arrays):
        result = gradcheck(case.call, arrays, step=1e-6, atol=1e-6, name=name)
        assert result.passed, result.message

    check()


@pytest.mark.parametrize("name", sorted(PARAM_CASES))
def test_parameterised_op_matches_central_differences(name):
    strategy, make_call = PARAM_CASES[name]

    @given(strategy)
    def check(drawn):
        arrays, param = drawn
        result = gradcheck(make_call(param), arrays, step=1e-6, atol=1e-6, name=name)
        assert result.passed, result.message

    check()


def test_gradcheck_failure_names_op_input_and_both_derivatives():
    wrong = ops.relu  # checked at the kink, where central differences see a slope of 1/2
    result = gradcheck(lambda x: wrong(x), [np.array([0.0, 1.0])], name="relu")
    assert not result.passed
    assert "FAILED for relu" in result.message
    assert "input 0, entry (0,)" in result.message
    assert result.analytic == 0.0 and abs(result.numeric - 0.5) < 1e-9


def test_op_results_record_their_op_and_inputs():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    assert y.op_name == "mul" and y.inputs[0] is x and not y.is_leaf
