"""Values no VJP reads are let go during the forward pass, and only those nothing can reach.

A projection before its bias add is read by no VJP (add's VJP reads only shapes, matmul's does
not read its output): once the expression is over and only the tape holds it, its memory is
freed, as a hand-written backward would free it. Gradients are unchanged (checked against the
closed form), and a tensor a variable still refers to, a tensor two ops consume, a small value
and a value a VJP reads are all kept.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.autodiff.tensor import LET_GO_BYTES
from llm_from_scratch.errors import TapeError
from llm_from_scratch.random import SplitMix64

ROWS, WIDTH = 64, 160  # x @ W is [64, 160]: 80 KiB, above the 64 KiB threshold
assert ROWS * WIDTH * 8 >= LET_GO_BYTES


def _arrays(rows: int = ROWS):
    rng = SplitMix64(5)
    return (
        rng.uniform(-1, 1, (rows, 8)),
        rng.uniform(-1, 1, (8, WIDTH)),
        rng.uniform(-1, 1, (WIDTH,)),
        rng.uniform(-1, 1, (rows, WIDTH)),
    )


def _check_gradients(w, b, x, c, bias) -> None:
    slope = c * (1.0 - np.tanh(x @ w.value + bias) ** 2)
    np.testing.assert_allclose(w.grad, x.T @ slope, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.grad, slope.sum(axis=0), rtol=1e-12, atol=1e-14)


def test_a_projection_nothing_holds_is_let_go_and_gradients_are_exact() -> None:
    x, w0, b0, c = _arrays()
    w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
    h = (x @ w + b).tanh()  # the product x @ w is held by the add's entry alone
    projection = h.inputs[0].inputs[0]  # read through the tape: the only way left to reach it
    assert projection.op_name == "matmul" and projection.shape == (ROWS, WIDTH)
    with pytest.raises(TapeError, match="let go"):
        _ = projection.value
    (h * c).sum().backward()
    _check_gradients(w, b, x, c, b0)


def test_a_tensor_a_variable_holds_is_kept() -> None:
    x, w0, b0, c = _arrays()
    w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
    projection = x @ w
    h = (projection + b).tanh()
    np.testing.assert_array_equal(projection.value, x @ w0)  # still there, readable
    (h * c).sum().backward()
    _check_gradients(w, b, x, c, b0)


def test_a_tensor_one_entry_holds_twice_is_kept() -> None:
    x, w0, b0, _ = _arrays()
    w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
    shifted = x @ w + b
    pair = shifted + shifted  # one entry holds the sum twice
    del shifted
    h = (pair + 1.0).tanh()  # recording pair's consumer looks at pair's inputs: kept
    np.testing.assert_array_equal(pair.inputs[0].value, x @ w0 + b0)
    np.testing.assert_array_equal(h.inputs[0].inputs[0].value, pair.value)


def test_small_values_are_never_let_go() -> None:
    x, w0, b0, _ = _arrays(rows=4)  # [4, 160]: 5 KiB
    w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
    h = (x @ w + b).tanh()
    np.testing.assert_array_equal(h.inputs[0].inputs[0].value, x @ w0)


def test_a_value_a_vjp_reads_is_kept() -> None:
    x, w0, b0, c = _arrays()
    w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
    h = ((x @ w) * b).tanh()  # mul's VJP reads both inputs
    np.testing.assert_array_equal(h.inputs[0].inputs[0].value, x @ w0)
    (h * c).sum().backward()
    slope = c * (1.0 - np.tanh((x @ w0) * b0) ** 2)
    np.testing.assert_allclose(w.grad, x.T @ (slope * b0), rtol=1e-12, atol=1e-14)


def test_a_retained_graph_runs_twice_after_letting_go() -> None:
    x, w0, b0, c = _arrays()
    w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
    y = ((x @ w + b).tanh() * c).sum()
    y.backward(retain_graph=True)
    y.backward()
    slope = c * (1.0 - np.tanh(x @ w0 + b0) ** 2)
    np.testing.assert_allclose(w.grad, 2 * (x.T @ slope), rtol=1e-12, atol=1e-14)
