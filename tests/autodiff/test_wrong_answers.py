"""Regression tests for silent wrong answers (issue 16): each failed before its fix.

Expected values are hand-computed: the derivative of Σ x_perm ⊙ w, of a gathered sum, of x ⊙ c.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters, unbroadcast
from llm_from_scratch.errors import ArgumentError, ShapeError

# --- gradcheck: NaN or inf anywhere fails, and is named --------------------------------------


def test_gradcheck_fails_on_a_nan_in_the_reverse_jacobian():
    """d/dx √(x − x) by reverse mode is ∞ · 0 = NaN; central differences see 0."""
    result = gradcheck(lambda x: (x - x).sqrt(), [np.array([1.0, 2.0])])
    assert not result.passed
    assert result.nonfinite == 4  # every entry of the 2 × 2 Jacobian: ∞ · 0 off the diagonal too
    assert "FAILED" in result.message and "not finite" in result.message
    assert "input 0, entry (0,)" in result.message
    assert math.isnan(result.analytic) and result.numeric == 0.0


def test_a_nan_does_not_hide_a_real_error_in_another_input():
    """Input 0's gradient is NaN at x = 0; input 1's is wrong by 1 (relu at its kink is fine)."""

    def fn(a, b):
        return a.sqrt() * 0.0 + b.relu()  # at b = 0: reverse 0, central 1/2

    result = gradcheck(fn, [np.array([0.0]), np.array([0.0])])
    assert not result.passed
    assert result.nonfinite >= 1


def test_gradcheck_fails_on_an_inf_in_the_central_jacobian():
    """log at 0: the central difference reads log(−h), NaN; reverse mode reads 1/0 = inf."""
    result = gradcheck(lambda x: x.log(), [np.array([0.0, 1.0])])
    assert not result.passed and result.nonfinite >= 1
    assert "not finite" in result.message


@pytest.mark.parametrize(
    ("step", "atol"),
    [
        (math.nan, 1e-6),
        (0.0, 1e-6),
        (-1e-6, 1e-6),
        (math.inf, 1e-6),
        (1e-6, math.nan),
        (1e-6, math.inf),
        (1e-6, 0.0),
        ("1e-6", 1e-6),
        (1e-6, None),
    ],
)
def test_gradcheck_refuses_a_step_or_atol_that_is_not_positive_and_finite(step, atol):
    with pytest.raises(ArgumentError, match=r"step|atol"):
        gradcheck(lambda x: x * 2.0, [np.array([1.0])], step=step, atol=atol)


def test_gradcheck_still_passes_a_correct_gradient():
    result = gradcheck(lambda x: (x * x).sum(), [np.array([1.0, -2.0])])
    assert result.passed and result.nonfinite == 0
    assert result.max_abs_error < 1e-8


# --- permute with negative axes --------------------------------------------------------------


def test_permute_with_negative_axes_sends_each_gradient_home():
    x = Tensor(np.zeros((2, 3)), requires_grad=True)
    w = np.arange(6.0).reshape(3, 2)
    (x.permute(-1, 0) * w).sum().backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]])  # x.grad = wᵀ


def test_permute_with_mixed_signs_on_three_axes():
    x = Tensor(np.zeros((2, 3, 4)), requires_grad=True)
    w = np.arange(24.0).reshape(4, 2, 3)  # the shape of x.permute(2, 0, 1)
    (x.permute(-1, 0, -2) * w).sum().backward()
    np.testing.assert_array_equal(x.grad, w.transpose(1, 2, 0))


# --- unbroadcast refuses a share it cannot sum back ------------------------------------------


@pytest.mark.parametrize(
    ("share", "shape"), [((2, 3), (3, 2)), ((6,), (2, 3)), ((3,), (2, 3)), ((2, 4), (2, 2))]
)
def test_unbroadcast_refuses_a_share_of_an_unrelated_shape(share, shape):
    with pytest.raises(ShapeError, match=r"cannot be summed back"):
        unbroadcast(np.ones(share), shape)


def test_unbroadcast_still_sums_broadcast_axes():
    np.testing.assert_array_equal(unbroadcast(np.ones((4, 2, 3)), (2, 1)), np.full((2, 1), 12.0))


# --- one element under two spellings ---------------------------------------------------------


@pytest.mark.parametrize("index", [[-1, 2], [2, -1], np.array([-1, 2])])
def test_one_entry_indexed_twice_by_two_spellings_gets_both_shares(index):
    x = Tensor(np.zeros(3), requires_grad=True)
    x[index].sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 2.0])


def test_one_column_indexed_twice_after_an_ellipsis_gets_both_shares():
    x = Tensor(np.zeros((2, 4)), requires_grad=True)
    x[..., [-1, 3]].sum().backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 2.0]])


def test_a_tuple_of_arrays_with_two_spellings_of_one_entry():
    x = Tensor(np.zeros((2, 2)), requires_grad=True)
    x[[0, -2], [1, -1]].sum().backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 2.0], [0.0, 0.0]])


# --- in-place edits after the forward --------------------------------------------------------


def test_editing_a_constant_array_after_the_forward_does_not_change_the_gradient():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = np.array([4.0, 5.0, 6.0])
    y = (x * c).sum()
    c[:] = 0.0
    y.backward()
    np.testing.assert_array_equal(x.grad, [4.0, 5.0, 6.0])  # d Σ x c / dx = the original c


def test_editing_a_reflected_constant_after_the_forward_does_not_change_the_gradient():
    x = Tensor([1.0, 2.0], requires_grad=True)
    c = np.array([3.0, 4.0])
    y = (c / x).sum()  # d(c/x)/dx = −c / x²
    c[:] = 0.0
    y.backward()
    np.testing.assert_array_equal(x.grad, [-3.0, -1.0])


def test_editing_a_mask_or_an_index_after_the_forward_does_not_change_the_gradient():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = np.array([True, False, False])
    index = np.array([2, 2])
    y = x.masked_fill(mask, 0.0).sum() + x[index].sum()
    mask[:] = False
    index[:] = 0
    y.backward()
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 3.0])


def test_editing_rope_tables_after_the_forward_does_not_change_the_gradient():
    from llm_from_scratch.autodiff import ops

    x = Tensor([[1.0, 2.0]], requires_grad=True)
    cos, sin = np.array([0.5, 0.5]), np.array([-2.0, 2.0])
    y = ops.pair_rotate(x, cos=cos, sin=sin, partner=np.array([1, 0])).sum()
    cos[:] = 0.0
    sin[:] = 0.0
    y.backward()
    # y = Σ x cos + x[partner] sin: dy/dx_0 = cos_0 + sin_1 = 2.5, dy/dx_1 = cos_1 + sin_0 = −1.5
    np.testing.assert_array_equal(x.grad, [[2.5, -1.5]])


# --- gradcheck_parameters restores values and the caller's gradients -------------------------


def test_gradcheck_parameters_restores_values_and_grads_when_the_loss_raises():
    w = Tensor([1.0, 2.0], requires_grad=True)
    w.grad = np.array([7.0, 8.0])  # the caller's accumulated gradient
    original = w.value
    calls = []

    def loss():
        calls.append(w.value.copy())
        if len(calls) == 3:  # the first nudged evaluation after the reverse pass's own
            raise RuntimeError("loss failed mid-check")
        return (w * w).sum()

    with pytest.raises(RuntimeError, match="mid-check"):
        gradcheck_parameters(loss, [w])
    assert w.value is original
    np.testing.assert_array_equal(w.value, [1.0, 2.0])
    np.testing.assert_array_equal(w.grad, [7.0, 8.0])
    assert not np.array_equal(calls[-1], [1.0, 2.0])  # it did fail while nudged


def test_gradcheck_parameters_keeps_the_callers_grad_after_a_pass():
    w = Tensor([1.0, -2.0], requires_grad=True)
    w.grad = np.array([3.0, 3.0])
    result = gradcheck_parameters(lambda: (w * w * w).sum(), [w])
    assert result.passed, result.message
    np.testing.assert_array_equal(w.grad, [3.0, 3.0])
    np.testing.assert_array_equal(w.value, [1.0, -2.0])


def test_gradcheck_parameters_fails_on_a_nan_gradient():
    w = Tensor([0.0], requires_grad=True)
    result = gradcheck_parameters(lambda: (w - w).sqrt().sum(), [w])
    assert not result.passed and result.nonfinite >= 1


def test_masks_and_broadcast_index_arrays_send_every_share_home():
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    mask = np.array([[True, False, True], [False, True, False]])
    (x[mask] * np.array([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(x.grad, [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    x.grad = None
    x[np.array([[0], [1]]), np.array([[0, -3]])].sum().backward()  # (0,0) twice, (1,0) twice
    np.testing.assert_array_equal(x.grad, [[2.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    x.grad = None
    x[None, 1, ..., -1].sum().backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
