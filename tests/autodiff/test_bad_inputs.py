"""Every bad input to the engine gets a typed error that names what was received (issue 16).

Each case is a call a user could make; before the fix most leaked IndexError, TypeError,
numpy's AxisError or "could not convert", or were silently accepted (``Tensor(None)`` was NaN,
``reshape(4.9)`` truncated, ``requires_grad="no"`` recorded).
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import (
    Op,
    Tensor,
    concat,
    gradcheck,
    ops,
    stack,
    unbroadcast,
    walk_tape,
)
from llm_from_scratch.errors import ArgumentError, FromScratchError, RankError, ShapeError

t = Tensor(np.ones((2, 3)), requires_grad=True)

# (call, error type, a piece of text the message must contain: the received value)
CASES = {
    "mean axis 5": (lambda: t.mean(axis=5), RankError, "got 5"),
    "mean axis 'a'": (lambda: t.mean(axis="a"), ArgumentError, "'a'"),
    "sum axis 2": (lambda: t.sum(axis=2), RankError, "got 2"),
    "sum axis -3": (lambda: t.sum(axis=-3), RankError, "got -3"),
    "sum repeated axes": (lambda: t.sum(axis=(1, -1)), ArgumentError, "(1, -1)"),
    "sum float axis": (lambda: t.sum(axis=1.0), ArgumentError, "1.0"),
    "sum keepdims 'no'": (lambda: t.sum(axis=0, keepdims="no"), ArgumentError, "'no'"),
    "softmax axis 2": (lambda: t.softmax(axis=2), RankError, "got 2"),
    "log_softmax axis None": (lambda: t.log_softmax(axis=None), ArgumentError, "None"),
    "x[10]": (lambda: t[10], ShapeError, "10"),
    "x[-3]": (lambda: t[-3], ShapeError, "-3"),
    "x[0, 3]": (lambda: t[0, 3], ShapeError, "3"),
    "x[[0, 5]]": (lambda: t[[0, 5]], ShapeError, "5"),
    "x[0, 0, 0]": (lambda: t[0, 0, 0], ShapeError, "(0, 0, 0)"),
    "x[1.5]": (lambda: t[1.5], ArgumentError, "1.5"),
    "x['a']": (lambda: t["a"], ArgumentError, "'a'"),
    "x[::0]": (lambda: t[::0], ArgumentError, "slice(None, None, 0)"),
    "x[0.5:]": (lambda: t[0.5:], ArgumentError, "0.5"),
    "x[..., ...]": (lambda: t[..., ...], ArgumentError, "Ellipsis"),
    "x[[[0], [0, 1]]]": (lambda: t[[[0], [0, 1]]], ArgumentError, "[[0], [0, 1]]"),
    "x[float array]": (lambda: t[np.array([0.0, 1.0])], ArgumentError, "float64"),
    "x[tensor]": (lambda: t[Tensor([0.0])], ArgumentError, "Tensor"),
    "x[Boolean of wrong shape]": (lambda: t[np.array([True])], ShapeError, "(1,)"),
    "t + 'abc'": (lambda: t + "abc", ArgumentError, "'abc'"),
    "t + None": (lambda: t + None, ArgumentError, "None"),
    "None * t": (lambda: None * t, ArgumentError, "None"),
    "t - [1, [2]]": (lambda: t - [1, [2]], ArgumentError, "[1, [2]]"),
    "t * object": (lambda: t * object(), ArgumentError, "object"),
    "t / 1j": (lambda: t / 1j, ArgumentError, "1j"),
    "t ** 'a'": (lambda: t ** "a", ArgumentError, "'a'"),
    "t ** nan": (lambda: t ** float("nan"), ArgumentError, "nan"),
    "t ** t": (lambda: t**t, ArgumentError, "Tensor"),
    "2 ** t": (lambda: 2**t, ArgumentError, "2"),
    "t < 0": (lambda: t < 0, ArgumentError, "0"),
    "bool(t)": (lambda: bool(t), ArgumentError, "(2, 3)"),
    "Tensor(None)": (lambda: Tensor(None), ArgumentError, "None"),
    "Tensor('abc')": (lambda: Tensor("abc"), ArgumentError, "'abc'"),
    "Tensor(['1', '2'])": (lambda: Tensor(["1", "2"]), ArgumentError, "['1', '2']"),
    "Tensor(object)": (lambda: Tensor(np.array([object()])), ArgumentError, "object"),
    "Tensor(ragged)": (lambda: Tensor([[1.0], [1.0, 2.0]]), ArgumentError, "[[1.0], [1.0, 2.0]]"),
    "Tensor(complex)": (lambda: Tensor([1 + 2j]), ArgumentError, "complex"),
    "Tensor(10**400)": (lambda: Tensor(10**400), ArgumentError, "401 digits"),
    "requires_grad='no'": (lambda: Tensor(1.0, requires_grad="no"), ArgumentError, "'no'"),
    "name=3": (lambda: Tensor(1.0, name=3), ArgumentError, "3"),
    "backward('abc')": (lambda: (t * 2.0).sum().backward("abc"), ArgumentError, "'abc'"),
    "backward(None-shaped)": (lambda: (t * 2.0).backward(np.ones(3)), ShapeError, "(3,)"),
    "backward(retain_graph=1)": (
        lambda: (t * 2.0).sum().backward(retain_graph=1),
        ArgumentError,
        "1",
    ),
    "stack([])": (lambda: stack([]), ArgumentError, "empty"),
    "concat([])": (lambda: concat([]), ArgumentError, "empty"),
    "concat(a, b)": (lambda: concat(t, t, axis=1), ArgumentError, "Tensor of shape (2, 3)"),
    "concat(a)": (lambda: concat(t), ArgumentError, "Tensor of shape (2, 3)"),
    "concat([a, b], 1, axis=1)": (lambda: concat([t, t], 1, axis=1), ArgumentError, "twice"),
    "concat([a, b], 1.5)": (lambda: concat([t, t], 1.5), ArgumentError, "1.5"),
    "stack([a, b], 0, axis=0)": (lambda: stack([t, t], 0, axis=0), ArgumentError, "twice"),
    "concat of a generator": (lambda: concat(x for x in [t]), ArgumentError, "generator"),
    "concat axis 2": (lambda: concat([t, t], axis=2), RankError, "got 2"),
    "concat mismatched": (
        lambda: concat([t, Tensor(np.ones((3, 3)))], axis=1),
        ShapeError,
        "(3, 3)",
    ),
    "concat of scalars": (lambda: concat([Tensor(1.0), Tensor(2.0)]), ShapeError, "rank-0"),
    "stack mismatched": (lambda: stack([t, Tensor(np.ones(3))]), ShapeError, "(3,)"),
    "stack axis 3": (lambda: stack([t, t], axis=3), RankError, "got 3"),
    "stack(a, b)": (lambda: stack(t, t), ArgumentError, "Tensor of shape (2, 3)"),
    "reshape(4.9)": (lambda: Tensor(np.ones(4)).reshape(4.9), ArgumentError, "4.9"),
    "reshape('6')": (lambda: t.reshape("6"), ArgumentError, "'6'"),
    "reshape(True, 6)": (lambda: t.reshape(True, 6), ArgumentError, "True"),
    "reshape(4, 2)": (lambda: t.reshape(4, 2), ShapeError, "(4, 2)"),
    "reshape(-1, -1)": (lambda: t.reshape(-1, -1), ArgumentError, "(-1, -1)"),
    "reshape(-2, -3)": (lambda: t.reshape(-2, -3), ArgumentError, "(-2, -3)"),
    "reshape(0, -1)": (lambda: t.reshape(0, -1), ShapeError, "(0, -1)"),
    "permute(0, 0)": (lambda: t.permute(0, 0), ArgumentError, "(0, 0)"),
    "permute(0)": (lambda: t.permute(0), RankError, "(0,)"),
    "permute(0, 2)": (lambda: t.permute(0, 2), RankError, "got 2"),
    "permute(1.0, 0)": (lambda: t.permute(1.0, 0), ArgumentError, "1.0"),
    "transpose(0, 5)": (lambda: t.transpose(0, 5), RankError, "got 5"),
    "masked_fill(float mask)": (
        lambda: t.masked_fill(np.ones((2, 3)), 0.0),
        ArgumentError,
        "float64",
    ),
    "masked_fill('abc')": (lambda: t.masked_fill("abc", 0.0), ArgumentError, "'abc'"),
    "masked_fill(wide mask)": (lambda: t.masked_fill(np.ones(4, bool), 0.0), ShapeError, "(4,)"),
    "masked_fill(growing mask)": (
        lambda: t.masked_fill(np.ones((5, 2, 3), bool), 0.0),
        ShapeError,
        "(5, 2, 3)",
    ),
    "masked_fill(value 'x')": (
        lambda: t.masked_fill(np.ones((2, 3), bool), "x"),
        ArgumentError,
        "'x'",
    ),
    "masked_fill(value nan)": (
        lambda: t.masked_fill(np.ones((2, 3), bool), float("nan")),
        ArgumentError,
        "nan",
    ),
    "matmul of a scalar": (lambda: Tensor(1.0) @ t, ShapeError, "()"),
    "matmul of mismatched": (lambda: t @ t, ShapeError, "(2, 3), (2, 3)"),
    "item() of six": (lambda: t.item(), ShapeError, "(2, 3)"),
    "len of a scalar": (lambda: len(Tensor(1.0)), RankError, "rank-0"),
    "iter of a scalar": (lambda: list(Tensor(1.0)), RankError, "rank-0"),
    "ops.sum without its parameters": (lambda: ops.sum(t), ArgumentError, "(2, 3)"),
    "ops.add with one input": (lambda: ops.add(t), ArgumentError, "(2, 3)"),
    "rms_norm eps -1": (lambda: ops.rms_norm(t, np.ones(3), eps=-1.0), ArgumentError, "-1.0"),
    "rms_norm eps 'a'": (lambda: ops.rms_norm(t, np.ones(3), eps="a"), ArgumentError, "'a'"),
    "pair_rotate partner": (
        lambda: ops.pair_rotate(t, cos=np.ones(3), sin=np.ones(3), partner=np.array([0, 0, 1])),
        ArgumentError,
        "shape (3,)",
    ),
    "pair_rotate cos None": (
        lambda: ops.pair_rotate(t, cos=None, sin=np.ones(3), partner=np.arange(3)),
        ArgumentError,
        "None",
    ),
    "pair_rotate cos wide": (
        lambda: ops.pair_rotate(t, cos=np.ones(4), sin=np.ones(3), partner=np.arange(3)),
        ShapeError,
        "(4,)",
    ),
    "attention blocked float": (
        lambda: ops.attention_weights(t, t, scale=1.0, blocked=np.ones((2, 2)), added=None),
        ArgumentError,
        "float64",
    ),
    "attention added +inf": (
        lambda: ops.attention_weights(t, t, scale=1.0, blocked=None, added=np.full(2, np.inf)),
        ArgumentError,
        "+inf",
    ),
    "attention scale 'a'": (
        lambda: ops.attention_weights(t, t, scale="a", blocked=None, added=None),
        ArgumentError,
        "'a'",
    ),
    "gradcheck of a non-tensor": (
        lambda: gradcheck(lambda x: 1.0, [np.ones(2)]),
        ArgumentError,
        "1.0",
    ),
    "gradcheck of one array": (lambda: gradcheck(lambda x: x, np.ones(2)), ArgumentError, "(2,)"),
    "gradcheck of strings": (lambda: gradcheck(lambda x: x, ["ab"]), ArgumentError, "'ab'"),
    "walk_tape of an array": (lambda: walk_tape(np.ones(2)), ArgumentError, "(2,)"),
    "unbroadcast of a list": (lambda: unbroadcast([1.0], (1,)), ArgumentError, "[1.0]"),
    "Op of a number": (lambda: Op(3), ArgumentError, "3"),
    "vjp of a number": (lambda: ops.exp.vjp(3), ArgumentError, "3"),
    "checks of a number": (lambda: ops.exp.checks(3), ArgumentError, "3"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bad_input_gets_a_typed_error_naming_what_was_received(name):
    call, error_type, received = CASES[name]
    with pytest.raises(error_type) as caught:
        call()
    assert isinstance(caught.value, FromScratchError) and isinstance(caught.value, ValueError)
    assert received in str(caught.value), str(caught.value)


def test_negative_axes_and_numpy_integer_sizes_still_work():
    x = Tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.mean(axis=-1).value, [1.0, 4.0])
    np.testing.assert_array_equal(x.sum(axis=(-1, 0)).value, 15.0)
    np.testing.assert_array_equal(x.reshape(np.int64(3), -1).value, np.arange(6.0).reshape(3, 2))


def test_concat_and_stack_take_one_sequence_like_numpy():
    a, b = np.arange(4.0).reshape(2, 2), np.ones((2, 1))
    np.testing.assert_array_equal(concat([a, b], axis=1).value, np.concatenate([a, b], axis=1))
    np.testing.assert_array_equal(concat((a, a), axis=-1).value, np.concatenate([a, a], -1))
    np.testing.assert_array_equal(stack([a, a], axis=-1).value, np.stack([a, a], axis=-1))
    assert concat([a, b], axis=1).op_name is None  # constants record nothing


def test_concat_and_stack_take_the_axis_positionally_as_numpy_and_torch_spell_it():
    a, b = np.arange(4.0).reshape(2, 2), np.ones((2, 1))
    np.testing.assert_array_equal(concat([a, b], 1).value, np.concatenate([a, b], 1))
    np.testing.assert_array_equal(concat((a, a), np.int64(-2)).value, np.concatenate([a, a], -2))
    np.testing.assert_array_equal(stack([a, a], 2).value, np.stack([a, a], 2))
    x = Tensor(a, requires_grad=True)
    concat([x, b], 1).sum().backward()  # the gradient of a sum is one for every entry of x
    np.testing.assert_array_equal(x.grad, np.ones((2, 2)))


def test_a_failed_op_leaves_its_inputs_and_their_gradients_untouched():
    x = Tensor([1.0, 2.0], requires_grad=True)
    x.grad = np.array([5.0, 6.0])
    for bad in (lambda: x[5], lambda: x.reshape(3), lambda: x + "a", lambda: x.sum(axis=1)):
        with pytest.raises(FromScratchError):
            bad()
    np.testing.assert_array_equal(x.value, [1.0, 2.0])
    np.testing.assert_array_equal(x.grad, [5.0, 6.0])
