"""Values edited after the forward pass (issue 28): refused, never turned into a wrong gradient.

PyTorch counts the in-place edits of every tensor and refuses a backward pass that would read a
saved tensor edited since it was saved. The engine does the same for a tensor's ``.value``:
assigned anew or edited in place between an op and the backward pass through it, the value is
refused (TapeError) before any gradient is written. Changing values after ``backward`` (an
optimizer step) stays free, and ``.grad`` is never broadcast from a shape set by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, no_grad
from llm_from_scratch.errors import TapeError
from llm_from_scratch.nn import Linear, Parameter
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import SGD, AdamW


def pair():
    return Tensor([1.0, 2.0], requires_grad=True, name="x"), Tensor(
        [3.0, 4.0], requires_grad=True, name="w"
    )


# --- the attacks of the issue, each a wrong gradient before ----------------------------------


def test_a_weight_zeroed_in_place_after_the_forward_pass_is_refused_at_backward():
    x, w = pair()
    y = (x * w).sum()
    w.value[...] = 0.0  # the forward pass multiplied by (3, 4): x.grad would have been 0
    with pytest.raises(TapeError, match=r"'w'.*'mul'.*edited in place"):
        y.backward()
    assert x.grad is None and w.grad is None  # refused before any gradient was written


def test_rebinding_a_value_after_the_forward_pass_is_refused():
    x, w = pair()
    y = (x * w).sum()
    x.value = np.array([5.0, 6.0])
    with pytest.raises(TapeError, match=r"assigned anew \(\.value = \.\.\.\)"):
        y.backward()
    assert w.grad is None


def test_an_array_held_from_before_the_forward_pass_and_written_later_is_refused():
    x, w = pair()
    held = w.value  # handed out before the op ran
    y = (x * w).sum()
    held[1] = -1.0
    with pytest.raises(TapeError, match="'w'"):
        y.backward()


@pytest.mark.parametrize("where", ["intermediate", "output its VJP reads"])
def test_an_ops_result_is_handed_out_read_only_so_it_cannot_be_edited_under_the_tape(where):
    x, w = pair()
    h = x * w if where == "intermediate" else x.exp()  # exp's VJP reads its output
    y = (h * h).sum()
    with pytest.raises(ValueError, match="read-only"):
        h.value[0] = 9.0  # refused at the edit
    y.backward()  # the values the forward pass used
    xv, wv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    if where == "intermediate":
        np.testing.assert_allclose(x.grad, 2 * xv * wv**2, rtol=1e-15)
    else:
        np.testing.assert_allclose(x.grad, 2 * np.exp(2 * xv), rtol=1e-15)


def test_a_detached_view_of_a_leaf_edited_after_the_forward_pass_is_refused():
    x, w = pair()
    d = w.detach()  # shares w's memory
    y = (x * w).sum()
    d.value[0] = 0.0
    with pytest.raises(TapeError, match="after the op ran"):
        y.backward()


def test_an_op_output_viewing_a_tensor_is_read_only_and_its_source_is_guarded():
    x, w = pair()
    r = w.reshape(2, 1)  # a view of w's memory
    with pytest.raises(ValueError, match="read-only"):
        r.value[0, 0] = 7.0
    y = (x.reshape(2, 1) * r).sum()
    w.value[0] = 7.0  # through the array the view reads
    with pytest.raises(TapeError):
        y.backward()


def test_retain_graph_then_an_optimizer_step_then_backward_again_is_refused():
    x, w = Tensor([1.0, 2.0], requires_grad=True), Parameter([3.0, 4.0], name="w")
    y = (x * w).sum()
    y.backward(retain_graph=True)
    SGD([w], lr=0.1).step()  # assigns w a new value
    with pytest.raises(TapeError, match="'w'"):
        y.backward()
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])  # the first pass only


# --- what stays allowed ---------------------------------------------------------------------


def test_reading_values_between_forward_and_backward_changes_nothing():
    x, w = pair()
    y = (x * w).sum()
    assert w.value.tolist() == [3.0, 4.0] and (x * 1.0).value.tolist() == [1.0, 2.0]
    y.backward()
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])
    np.testing.assert_array_equal(w.grad, [1.0, 2.0])


def test_edits_after_backward_and_optimizer_steps_in_a_loop_are_free():
    x = Tensor([[1.0, 2.0]])
    layer = Linear(2, 1, name="lin", rng=SplitMix64(0))
    optimizer = AdamW(layer.parameters(), lr=0.01)
    firsts = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = (layer(x) * layer(x)).sum()
        loss.backward()
        optimizer.step()
        layer.weight.value[0, 0] += 0.5  # in place, after the step: no backward is pending
        firsts.append(float(layer.weight.value[0, 0]))
    assert firsts[1] - firsts[0] > 0.4 and firsts[2] - firsts[1] > 0.4  # each edit kept


def test_values_edited_before_any_op_and_under_no_grad_are_free():
    x, w = pair()
    w.value[0] = 10.0
    with no_grad():
        z = x * w
    w.value[1] = 20.0
    y = (x * w).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad, [10.0, 20.0])
    assert z.value.tolist() == [10.0, 8.0]


# --- .grad is never broadcast ---------------------------------------------------------------


@pytest.mark.parametrize("grad", [np.zeros(1), np.zeros((2, 1)), np.zeros(3), 0.0, "g", [1.0]])
def test_a_grad_of_the_wrong_shape_or_kind_is_refused_when_set(grad):
    x, _ = pair()
    with pytest.raises(TapeError, match=r"\.grad must"):
        x.grad = grad
    assert x.grad is None


def test_a_grad_left_from_a_value_of_another_shape_is_refused_not_broadcast():
    x, _ = pair()
    x.grad = np.array([1.0, 1.0])
    x.value = np.array([1.0])  # a new value of another shape, the old .grad kept
    with pytest.raises(TapeError, match=r"\.grad of shape \(2,\)"):
        (x * 2.0).sum().backward()
    x.grad = None
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0])


def test_a_grad_set_by_hand_of_the_right_shape_accumulates():
    x, w = pair()
    x.grad = [1.0, 1.0]  # a list of the right shape is read as float64
    (x * w).sum().backward()
    np.testing.assert_array_equal(x.grad, [4.0, 5.0])


# --- properties over random edits --------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-4, 4), min_size=3, max_size=3),
    st.lists(st.floats(-4, 4), min_size=3, max_size=3),
    st.integers(0, 2),
    st.sampled_from(["none", "x in place", "w in place", "x anew", "w anew", "x held"]),
    st.booleans(),
)
def test_a_backward_after_a_random_edit_is_refused_or_exact(xs, ws, index, edit, same):
    """The gradient of Σ (x·w)² is (2 x w², 2 x² w) at the values the forward pass used, or the
    backward is refused: never the gradient at edited values."""
    x = Tensor(xs, requires_grad=True)
    w = Tensor(ws, requires_grad=True)
    h = x * w
    y = (h * h).sum()
    target = {"x": x, "w": w}[edit.split()[0]] if edit != "none" else None
    if edit == "x held":  # an array handed out before the forward pass, written after it
        x = Tensor(xs, requires_grad=True)
        held = x.value
        h = x * w
        y = (h * h).sum()
        held[index] = held[index] if same else held[index] + 1.0
    elif target is not None:
        new = target.value.copy()
        new[index] = new[index] if same else new[index] + 1.0
        if edit.endswith("anew"):
            target.value = new
        else:
            target.value[index] = new[index]
    try:
        y.backward()
    except TapeError:
        assert edit != "none" and (edit.endswith("anew") or not same), edit
        assert x.grad is None and w.grad is None
        return
    assert edit == "none" or (same and not edit.endswith("anew")), edit
    xv, wv = np.array(xs), np.array(ws)
    np.testing.assert_allclose(x.grad, 2 * xv * wv**2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w.grad, 2 * xv**2 * wv, rtol=1e-12, atol=1e-12)
