"""Reverse-mode semantics: seeds, accumulation, release and retain, no_grad, long chains."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from llm_from_scratch.autodiff import OPS, Op, Tensor, no_grad, ops, unbroadcast
from llm_from_scratch.errors import (
    ArgumentError,
    GraphReleasedError,
    NoGradientError,
    ShapeError,
    TapeError,
)


def test_scalar_output_defaults_to_seed_one():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0, 6.0])  # d Σx² / dx = 2x


def test_non_scalar_output_needs_a_seed_of_its_shape():
    x = Tensor([[1.0, 2.0]], requires_grad=True)
    y = x * 2.0
    with pytest.raises(ShapeError, match=r"one-element output; got shape \(1, 2\)"):
        y.backward()
    with pytest.raises(ShapeError, match=r"seed must have the output's shape \(1, 2\); got"):
        y.backward(np.ones(2), retain_graph=True)
    y.backward(Tensor([[1.0, -1.0]]))
    np.testing.assert_array_equal(x.grad, [[2.0, -2.0]])


def test_gradients_accumulate_in_a_shared_leaf_and_across_backwards():
    x = Tensor(3.0, requires_grad=True)
    y = x * x + x  # x reaches y along three paths: dy/dx = 2x + 1 = 7
    y.backward(retain_graph=True)
    assert x.grad == 7.0
    y.backward()  # retained graph: a second pass accumulates
    assert x.grad == 14.0
    x.zero_grad()
    assert x.grad is None


def test_released_graph_raises_a_runtime_error_with_the_fix():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2.0).sum()
    y.backward()
    with pytest.raises(GraphReleasedError, match="retain_graph=True") as caught:
        y.backward()
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, TapeError)


def test_retain_graph_keeps_every_node_usable():
    x = Tensor([0.5, -1.0], requires_grad=True)
    hidden = x.tanh()
    y = (hidden * hidden).sum()
    for _ in range(3):
        y.backward(retain_graph=True)
    expected = 3 * 2 * np.tanh([0.5, -1.0]) * (1 - np.tanh([0.5, -1.0]) ** 2)
    np.testing.assert_allclose(x.grad, expected, rtol=1e-15)


def test_backward_without_a_graph_is_a_tape_error():
    with pytest.raises(NoGradientError, match="requires_grad=True"):
        Tensor([1.0]).sum().backward()


def test_no_grad_records_nothing_and_restores_recording():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with no_grad():
        y = x * 2.0
    assert not y.requires_grad and y.is_leaf
    assert (x * 2.0).requires_grad


def test_intermediate_gradients_are_kept_only_when_asked():
    x = Tensor([1.0, -2.0], requires_grad=True)
    hidden = (x * 3.0).retain_grad()
    other = x * 5.0
    (hidden * hidden + other).sum().backward()
    np.testing.assert_array_equal(hidden.grad, 2 * np.array([3.0, -6.0]))
    assert other.grad is None
    np.testing.assert_array_equal(x.grad, 2 * 9 * np.array([1.0, -2.0]) + 5.0)


def test_a_chain_of_ten_thousand_ops_needs_no_recursion():
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert x.grad == pytest.approx(1.0001**10_000, rel=1e-9)


def test_backward_frees_the_tape_but_retain_keeps_it():
    def build():
        x = Tensor(np.ones(4), requires_grad=True)
        hidden = x.exp()
        return x, (hidden * 2.0).sum(), weakref.ref(hidden)

    _, y, probe = build()
    gc.collect()
    assert probe() is not None  # held by the tape
    y.backward()
    gc.collect()
    assert probe() is None  # released with the graph
    _, y, probe = build()
    y.backward(retain_graph=True)
    gc.collect()
    assert probe() is not None


def test_broadcast_operand_gradient_is_a_sum():
    x = Tensor(np.ones((4, 3)), requires_grad=True)
    b = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * b).backward(np.full((4, 3), 0.5))
    np.testing.assert_array_equal(b.grad, [2.0, 2.0, 2.0])  # 4 rows × 0.5 × x
    np.testing.assert_array_equal(x.grad, np.tile([0.5, 1.0, 1.5], (4, 1)))


def test_unbroadcast_sums_added_and_stretched_axes():
    grad = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(unbroadcast(grad, (3, 1)), grad.sum(axis=(0, 2))[:, None])
    np.testing.assert_array_equal(unbroadcast(grad, ()), grad.sum())
    assert unbroadcast(np.zeros((0, 3)), (3,)).shape == (3,)


def test_shape_errors_name_the_op_and_the_shapes():
    with pytest.raises(
        ShapeError, match=r"matmul cannot combine inputs of shapes \(2, 3\), \(2, 4\)"
    ):
        Tensor(np.ones((2, 3))) @ Tensor(np.ones((2, 4)))
    with pytest.raises(ShapeError, match=r"add cannot combine inputs of shapes \(2,\), \(3,\)"):
        Tensor([1.0, 2.0]) + Tensor([1.0, 2.0, 3.0])


def test_tensor_data_must_be_numeric():
    with pytest.raises(ArgumentError, match="convertible to float64"):
        Tensor("abc")
    assert Tensor([1, 2]).value.dtype == np.float64


def test_constructor_copies_and_repr_is_stable():
    data = np.array([1.0, 2.0])
    x = Tensor(data, requires_grad=True, name="x")
    data[0] = 99.0
    assert x.value[0] == 1.0
    assert repr(x) == "Tensor([1., 2.], requires_grad=True, name='x')"


def test_reflected_operators_with_numpy_arrays_and_scalars():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = 1.0 - np.array([2.0, 2.0]) / x + 2.0 * x
    y.backward(np.ones(2))
    np.testing.assert_allclose(x.grad, 2.0 / np.array([1.0, 4.0]) + 2.0)


def test_shape_methods_match_numpy():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = Tensor(a)
    np.testing.assert_array_equal(x.permute(2, 0, 1).value, a.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.transpose(0, 2).value, a.swapaxes(0, 2))
    np.testing.assert_array_equal(x.T.value, a.T)
    np.testing.assert_array_equal(x.reshape(6, -1).value, a.reshape(6, 4))
    np.testing.assert_array_equal(x.mean(axis=1).value, a.mean(axis=1))
    np.testing.assert_array_equal(x[1, :, ::2].value, a[1, :, ::2])


def test_an_output_its_vjp_does_not_read_is_freed_before_that_vjp_runs(monkeypatch):
    """mul's VJP names its output parameter _out, so the pass drops the product's array first."""
    x = Tensor(np.ones(3), requires_grad=True)
    product = x * 2.0
    probe = weakref.ref(product.value)
    total = product.sum()
    del product  # now only the tape holds it
    alive_during_vjp = []
    original = ops.mul.backward

    def spy(grad, _out, *values, **params):
        alive_during_vjp.append(probe() is not None or _out is not None)
        return original(grad, _out, *values, **params)

    monkeypatch.setattr(ops.mul, "backward", spy)
    total.backward()
    assert alive_during_vjp == [False]
    np.testing.assert_array_equal(x.grad, [2.0, 2.0, 2.0])


def test_an_output_the_vjp_reads_is_passed_to_it(monkeypatch):
    x = Tensor([0.0, 1.0], requires_grad=True)
    seen = []
    original = ops.exp.backward

    def spy(grad, out, *values, **params):
        seen.append(out)
        return original(grad, out, *values, **params)

    monkeypatch.setattr(ops.exp, "backward", spy)
    x.exp().sum().backward()
    np.testing.assert_array_equal(seen[0], np.exp([0.0, 1.0]))


def test_a_vjp_must_name_its_output_parameter():
    def probe_op_for_signature_test(x):
        return x

    registered = Op(probe_op_for_signature_test, example=OPS["neg"].example)
    try:
        with pytest.raises(TapeError, match=r"second parameter named out \(or _out"):
            registered.vjp(lambda grad, output, x: grad)
    finally:
        del OPS["probe_op_for_signature_test"]


def test_no_grad_in_one_thread_does_not_stop_another_from_recording():
    """Thread A sits inside no_grad while thread B records: B's result still has a tape."""
    import threading

    inside = threading.Event()
    recorded = threading.Event()
    results: dict[str, bool] = {}

    def quiet() -> None:
        with no_grad():
            inside.set()
            recorded.wait(timeout=10)  # stay inside no_grad until the other thread is done
            results["quiet"] = (Tensor([1.0], requires_grad=True) * 2.0).requires_grad

    def recording() -> None:
        inside.wait(timeout=10)
        y = (Tensor([1.0, 2.0], requires_grad=True) * 3.0).sum()
        results["recording"] = y.requires_grad and not y.is_leaf
        recorded.set()

    threads = [threading.Thread(target=quiet), threading.Thread(target=recording)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert results == {"quiet": False, "recording": True}
