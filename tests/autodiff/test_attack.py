"""The engine under attack (issue 16): random bad arguments, tape misuse, the float64 range.

Three properties, each over hypothesis-drawn cases:

* Every public engine call given a random argument either works or raises a package error
  (FromScratchError and ValueError) whose message names the value received; nothing else
  leaks (no IndexError, TypeError, AxisError, "could not convert"), and a failed call leaves
  its input tensors' values and gradients as they were. Where the rule is simple (flags, axes,
  integer sizes) the test also knows which values must be refused.
* Misusing the tape (backward twice, without a seed on a non-scalar, with a seed of the wrong
  shape, on a tensor made under no_grad) raises the promised error.
* Finite inputs anywhere in the float64 range give finite outputs and gradients where the
  mathematics is finite, with numpy's overflow, invalid and divide warnings raised as errors.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import (
    Tensor,
    concat,
    gradcheck,
    no_grad,
    numeric_jacobians,
    ops,
    stack,
)
from llm_from_scratch.errors import (
    FromScratchError,
    GraphReleasedError,
    NoGradientError,
    ShapeError,
    TapeError,
)

RAISE = {"over": "raise", "invalid": "raise", "divide": "raise"}

# --- random arguments ------------------------------------------------------------------------

small_floats = st.floats(-1e6, 1e6, allow_nan=False)
garbage = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.complex_numbers(max_magnitude=10, allow_nan=False),
    st.lists(st.integers(-6, 6), max_size=4),
    st.lists(st.floats(-3, 3), min_size=1, max_size=3),
    st.tuples(st.integers(-4, 4), st.integers(-4, 4)),
    st.tuples(st.integers(-4, 4), small_floats),
    st.just([[1.0], [1.0, 2.0]]),  # ragged
    st.just(Ellipsis),
    st.builds(object),
    st.builds(lambda n: np.arange(float(n)), st.integers(0, 7)),
    st.builds(lambda n: np.ones(n, dtype=bool), st.integers(0, 4)),
    st.builds(lambda n: Tensor(np.ones(n)), st.integers(1, 3)),
)


def spellings(value: Any) -> list[str]:
    """Ways a message may name ``value``: its repr, str, shape, dtype, or one of its items."""
    if isinstance(value, Tensor):
        return ["Tensor", str(value.shape)]
    if isinstance(value, np.ndarray):
        return [str(value.shape), str(value.dtype), repr(value)[:20]]
    words = [repr(value)[:20], str(value)[:20], type(value).__name__]
    with contextlib.suppress(ValueError):  # a shape error names the shape received
        words.append(str(np.shape(value)))
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**15:
        words.append("digits")
    if isinstance(value, list | tuple):
        words.append(str(tuple(value)))
        for item in value:
            words += spellings(item)
    return words


def refused_or_accepted(call: Callable[[], Any], value: Any) -> BaseException | None:
    """Run ``call``; a refusal must be the package's, naming ``value``. Returns the error."""
    try:
        call()
    except FromScratchError as error:
        assert isinstance(error, ValueError | RuntimeError), type(error)
        message = str(error)
        assert any(word in message for word in spellings(value)), (value, message)
        return error
    return None


def is_flag(value: Any) -> bool:
    return isinstance(value, bool)


def is_axis_of(ndim: int) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        return (
            isinstance(value, numbers.Integral)
            and not isinstance(value, bool)
            and -ndim <= value < ndim
        )

    return check


def fresh() -> Tensor:
    return Tensor(np.arange(6.0).reshape(2, 3) - 2.5, requires_grad=True)


MASK = np.array([[True, False, False], [False, False, True]])
Q = np.ones((1, 1, 2, 3))

# target: (call with the drawn value, predicate saying the value must be accepted, or None
# when the suite only checks that whatever is refused is refused by the package, by name).
TARGETS: dict[str, tuple[Callable[[Tensor, Any], Any], Callable[[Any], bool] | None]] = {
    "Tensor(data)": (lambda t, v: Tensor(v), None),
    "Tensor(requires_grad=)": (lambda t, v: Tensor(1.0, requires_grad=v), is_flag),
    "Tensor(name=)": (lambda t, v: Tensor(1.0, name=v), lambda v: v is None or type(v) is str),
    "t + v": (lambda t, v: t + v, None),
    "v + t": (lambda t, v: v + t, None),
    "t - v": (lambda t, v: t - v, None),
    "t * v": (lambda t, v: t * v, None),
    "v / t": (lambda t, v: v / t, None),
    "t @ v": (lambda t, v: t @ v, None),
    "t ** v": (lambda t, v: t**v, None),
    "t[v]": (lambda t, v: t[v], None),
    "t[0, v]": (lambda t, v: t[0, v], None),
    "t.reshape(v)": (lambda t, v: t.reshape(v), None),
    "t.reshape(v, -1)": (lambda t, v: t.reshape(v, -1), None),
    "t.permute(v)": (lambda t, v: t.permute(v), None),
    "t.permute(v, 0)": (lambda t, v: t.permute(v, 0), None),
    "t.transpose(v, 0)": (lambda t, v: t.transpose(v, 0), is_axis_of(2)),
    "t.sum(axis=v)": (lambda t, v: t.sum(axis=v), None),
    "t.sum(keepdims=v)": (lambda t, v: t.sum(axis=0, keepdims=v), is_flag),
    "t.mean(axis=v)": (lambda t, v: t.mean(axis=v), None),
    "t.softmax(v)": (lambda t, v: t.softmax(v), is_axis_of(2)),
    "t.log_softmax(v)": (lambda t, v: t.log_softmax(v), is_axis_of(2)),
    "t.masked_fill(v, 0)": (lambda t, v: t.masked_fill(v, 0.0), None),
    "t.masked_fill(mask, v)": (lambda t, v: t.masked_fill(MASK, v), None),
    "concat(v)": (lambda t, v: concat(v), None),
    "concat([t, t], axis=v)": (lambda t, v: concat([t, t], axis=v), is_axis_of(2)),
    "stack(v)": (lambda t, v: stack(v), None),
    "stack([t, t], axis=v)": (lambda t, v: stack([t, t], axis=v), is_axis_of(3)),
    "backward(v)": (lambda t, v: (t * 2.0).backward(v), None),
    "backward(retain_graph=v)": (lambda t, v: t.sum().backward(retain_graph=v), is_flag),
    "rms_norm(eps=v)": (lambda t, v: ops.rms_norm(t, np.ones(3), eps=v), None),
    "pair_rotate(partner=v)": (
        lambda t, v: ops.pair_rotate(t, cos=np.ones(3), sin=np.ones(3), partner=v),
        None,
    ),
    "pair_rotate(cos=v)": (
        lambda t, v: ops.pair_rotate(t, cos=v, sin=np.ones(3), partner=np.arange(3)),
        None,
    ),
    "attention_weights(scale=v)": (
        lambda t, v: ops.attention_weights(Q, Q, scale=v, blocked=None, added=None),
        None,
    ),
    "attention_weights(blocked=v)": (
        lambda t, v: ops.attention_weights(Q, Q, scale=1.0, blocked=v, added=None),
        lambda v: (
            v is None or (isinstance(v, np.ndarray) and v.dtype == bool and 1 <= v.size <= 2)
        ),
    ),
    "attention_weights(added=v)": (
        lambda t, v: ops.attention_weights(Q, Q, scale=1.0, blocked=None, added=v),
        None,
    ),
    "gradcheck(inputs=v)": (lambda t, v: gradcheck(lambda x, *rest: x * 2.0, v), None),
    "gradcheck(step=v)": (lambda t, v: gradcheck(lambda x: x, [np.ones(1)], step=v), None),
    "numeric_jacobians(step=v)": (
        lambda t, v: numeric_jacobians(lambda x: x, [np.ones(1)], step=v),
        None,
    ),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_random_arguments_are_accepted_or_refused_by_name(target):
    call, must_accept = TARGETS[target]

    @given(garbage)
    def attack(value):
        t = fresh()
        t.grad = np.full((2, 3), 7.0)
        before = t.value.copy()
        with np.errstate(all="ignore"):  # t ** 775 may overflow: numerics are tested below
            error = refused_or_accepted(lambda: call(t, value), value)
        if must_accept is not None:
            assert (error is None) == must_accept(value), (value, error)
        if error is not None:  # a failed call leaves its inputs as they were
            np.testing.assert_array_equal(t.value, before)
            if t.grad is not None:
                np.testing.assert_array_equal(t.grad, np.full((2, 3), 7.0))

    attack()


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=4), st.integers(0, 24))
def test_random_shapes_for_reshape_are_refused_unless_they_fit(shape, size):
    x = Tensor(np.zeros(size))
    fits = shape.count(-1) <= 1 and all(n >= -1 for n in shape)
    known = math.prod(n for n in shape if n != -1)
    fits = fits and (known != 0 and size % known == 0 if -1 in shape else known == size)
    error = refused_or_accepted(lambda: x.reshape(*shape), shape)
    assert (error is None) == fits, (shape, size, error)


@given(st.lists(st.integers(-6, 6), min_size=1, max_size=3), st.integers(1, 4))
def test_random_integer_indices_are_refused_unless_in_range(index, length):
    x = Tensor(np.arange(float(length)), requires_grad=True)
    in_range = all(-length <= i < length for i in index)
    error = refused_or_accepted(lambda: x[index], index)
    assert (error is None) == in_range
    if in_range:  # and the gradient counts every selection of every entry
        x[index].sum().backward()
        expected = np.bincount([i % length for i in index], minlength=length)
        np.testing.assert_array_equal(x.grad, expected)


@given(st.lists(st.integers(-4, 4), min_size=1, max_size=4))
def test_random_permutations_are_refused_unless_they_are_one(axes):
    x = Tensor(np.zeros((2, 3, 4)[: len(axes)] if len(axes) <= 3 else (1, 1, 1, 1)))
    ndim = x.ndim
    valid = len(axes) == ndim and sorted(a % ndim for a in axes if -ndim <= a < ndim) == list(
        range(ndim)
    )
    valid = valid and all(-ndim <= a < ndim for a in axes)
    error = refused_or_accepted(lambda: x.permute(*axes), tuple(axes))
    assert (error is None) == valid, (axes, error)


# --- misuse of the tape ----------------------------------------------------------------------

shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)


@given(shapes)
def test_a_second_backward_without_retain_graph_is_refused(shape):
    x = Tensor(np.ones(shape), requires_grad=True)
    y = (x.exp() * 2.0).sum()
    y.backward()
    with pytest.raises(GraphReleasedError, match="retain_graph=True") as caught:
        y.backward()
    assert isinstance(caught.value, TapeError) and isinstance(caught.value, RuntimeError)


@given(shapes.filter(lambda s: math.prod(s) > 1))
def test_backward_on_a_non_scalar_needs_a_seed(shape):
    y = Tensor(np.ones(shape), requires_grad=True) * 3.0
    with pytest.raises(ShapeError, match=str(shape).replace("(", r"\(").replace(")", r"\)")):
        y.backward()


@given(shapes, shapes)
def test_a_seed_of_the_wrong_shape_is_refused_by_name(shape, seed_shape):
    y = Tensor(np.ones(shape), requires_grad=True) * 3.0
    error = refused_or_accepted(lambda: y.backward(np.ones(seed_shape)), np.ones(seed_shape))
    same = seed_shape == shape
    assert (error is None) == same
    if not same:
        assert isinstance(error, ShapeError)


@given(shapes)
def test_backward_of_a_result_made_under_no_grad_is_refused(shape):
    x = Tensor(np.ones(shape), requires_grad=True)
    with no_grad():
        y = (x * 2.0).sum()
    with pytest.raises(NoGradientError, match="requires_grad=True"):
        y.backward()


# --- the float64 range -----------------------------------------------------------------------

anywhere = st.floats(allow_nan=False, allow_infinity=False)  # the whole finite float64 range
rows = st.lists(anywhere, min_size=1, max_size=5)

BOUNDED = {  # functions with bounded slopes: seeds of 1 give finite gradients
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
    "silu": lambda x: x.silu(),
    "gelu": lambda x: x.gelu(),
    "relu": lambda x: x.relu(),
    "neg": lambda x: -x,
    "half": lambda x: x * 0.5,
    "softmax": lambda x: x.softmax(axis=-1),
    "log_softmax": lambda x: x.log_softmax(axis=-1),
    "masked_fill": lambda x: (
        x.masked_fill(np.arange(x.size) % 2 == 0, -np.inf).softmax(-1) if x.size > 1 else x
    ),
    "power 0": lambda x: x**0,
    "power 1": lambda x: x**1,
}


@pytest.mark.parametrize("name", sorted(BOUNDED))
def test_finite_inputs_anywhere_in_the_range_give_finite_values_and_gradients(name):
    fn = BOUNDED[name]

    @given(rows)
    def check(values):
        x = Tensor(values, requires_grad=True)
        with np.errstate(**RAISE):
            y = fn(x)
            y.backward(np.ones(y.shape))
        assert np.isfinite(y.value).all(), (values, y.value)
        assert np.isfinite(x.grad).all(), (values, x.grad)

    check()


@given(
    st.lists(st.floats(-1.7e308, 0.0), min_size=3, max_size=3),
    st.lists(st.floats(-1.7e308, 0.0), min_size=3, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_attention_weights_with_masks_anywhere_in_the_range_are_finite(added, bias, blocked):
    """Masks and biases from −1.7e308 to 0 (sums may overflow to −∞): rows sum to 1 or to 0."""
    q = Tensor(np.ones((1, 1, 1, 2)), requires_grad=True)
    k = Tensor(np.eye(3, 2).reshape(1, 1, 3, 2), requires_grad=True)
    b = Tensor(np.array(bias).reshape(1, 1, 1, 3), requires_grad=True)
    with np.errstate(**RAISE):
        w = ops.attention_weights(
            q,
            k,
            b,
            scale=1.0,
            blocked=np.array(blocked).reshape(1, 1, 1, 3),
            added=np.array(added).reshape(1, 3),
        )
        w.backward(np.array([1.0, -2.0, 0.5]).reshape(1, 1, 1, 3))
    total = float(w.value.sum())
    assert total == 0.0 or total == pytest.approx(1.0, abs=1e-12)
    for grad in (q.grad, k.grad, b.grad):
        assert np.isfinite(grad).all()
