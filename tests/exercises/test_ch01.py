"""Chapter 1's graders: the book's solutions pass; plausible wrong ones fail, and say why."""

import numpy as np

from llm_from_scratch.autodiff import OPS, Example, op
from llm_from_scratch.exercises.ch01 import EXERCISE_OP, check_loss_gradient, check_tanh_op


def tanh_forward(x):
    return np.tanh(x)


def tanh_vjp(grad, out, x):
    return grad * (1.0 - out**2)


def test_the_solution_passes_and_leaves_the_registry_as_it_was():
    before = list(OPS)
    grade = check_tanh_op(tanh_forward, tanh_vjp)
    assert grade.passed, grade.message
    assert list(OPS) == before and EXERCISE_OP not in OPS


def test_an_op_the_reader_registered_is_graded_and_left_registered_as_they_made_it():
    @op(name="reader_tanh", example=Example(lambda a: OPS["reader_tanh"](a), ((2, 3),), "tanh"))
    def reader_tanh(x):
        return np.tanh(x)

    try:
        assert check_tanh_op(reader_tanh).message == (
            "your op 'reader_tanh' has no VJP yet; attach one right below its forward with "
            "@reader_tanh.vjp."
        )
        reader_tanh.vjp(tanh_vjp)
        assert check_tanh_op(reader_tanh).passed
        assert OPS["reader_tanh"] is reader_tanh and EXERCISE_OP not in OPS
    finally:
        del OPS["reader_tanh"]


def test_a_vjp_that_forgets_grad_is_named():
    grade = check_tanh_op(tanh_forward, lambda grad, out, x: 1.0 - out**2)
    assert not grade
    assert grade.message == (
        "your VJP returns the local slope 1 − tanh² x but ignores grad (tried grad = "
        "[1.0, -2.0, 0.5, 3.0, 1.5]); a VJP returns grad times the slope."
    )


def test_a_slope_written_in_the_input_is_named():
    grade = check_tanh_op(tanh_forward, lambda grad, out, x: grad * (1.0 - x**2))
    assert grade.message == (
        "your VJP uses 1 − x², the slope written in the input; the derivative of tanh is "
        "1 − tanh² x, and out already holds tanh x."
    )


def test_tanh_applied_to_out_again_is_named():
    grade = check_tanh_op(tanh_forward, lambda grad, out, x: grad * (1.0 - np.tanh(out) ** 2))
    assert grade.message == (
        "your VJP applies tanh to out again; out is already tanh x, so the slope is 1 − out²."
    )


def test_a_vjp_that_does_not_read_out_is_refused_and_not_left_registered():
    def vjp(grad, _out, x):
        return grad * (1.0 - np.tanh(x) ** 2)

    before = list(OPS)
    grade = check_tanh_op(tanh_forward, vjp)
    assert grade.message.startswith("your VJP names its second parameter _out")
    assert list(OPS) == before


def test_a_wrong_forward_and_a_failing_gradcheck_are_reported():
    assert check_tanh_op(np.sin, tanh_vjp).message == (
        "forward(x)[0] is -0.909297 for x = [-2.0, -0.5, 0.0, 0.5, 2.0]; it should be -0.964028."
    )
    assert check_tanh_op(
        np.tanh, lambda g, out, x: g.ravel() * (1 - out.ravel() ** 2)
    ).message == (
        "gradcheck of your op raised ShapeError on a [2, 3] input: A gradient share of shape "
        "(6,) cannot be summed back to its input's shape (2, 3): (2, 3) does not broadcast to "
        "(6,). An op's VJP must return a share of its input's shape, or of a shape the input "
        "broadcasts to."
    )
    grade = check_tanh_op(np.tanh, lambda g, out, x: (g, g))
    assert grade.message == (
        "your VJP returned 2 gradients for x = [-2.0, -0.5, 0.0, 0.5, 2.0]; tanh has one input, "
        "so return one array (grad times the local slope)."
    )


def test_the_hand_gradient_solution_passes():
    def grad_x(x, w, b):
        t = np.tanh(x * w + b)
        return t + x * (1 - t * t) * w

    assert check_loss_gradient(grad_x).passed


def test_a_hand_gradient_missing_a_route_is_named():
    grade = check_loss_gradient(lambda x, w, b: np.tanh(x * w + b))
    assert grade.message == (
        "for x = 1.5, w = -0.5, b = 0.25 you give -0.462117, only the route through L = y·x "
        "(which sends y = tanh z); x also reaches L through z = x·w + b. The engine gives "
        "-1.05195."
    )
    grade = check_loss_gradient(lambda x, w, b: x * (1 - np.tanh(x * w + b) ** 2) * w)
    assert grade.message.startswith(
        "for x = 1.5, w = -0.5, b = 0.25 you give -0.589836, only the route through z = x·w + b"
    )


def test_a_hand_gradient_with_another_slip_gets_both_numbers():
    grade = check_loss_gradient(lambda x, w, b: np.tanh(x * w + b) + x * w)
    assert grade.message == (
        "for x = 1.5, w = -0.5, b = 0.25 your dL/dx is -1.21212; the engine gives -1.05195."
    )


def test_in_place_edits_are_named_as_the_engine_would_refuse_them():
    def vjp_in_place(grad, out, x):
        grad *= 1.0 - out**2
        return grad

    for grade in (
        check_tanh_op(lambda x: np.tanh(x, out=x), tanh_vjp),
        check_tanh_op(np.tanh, vjp_in_place),
    ):
        assert not grade
        assert grade.message.endswith(
            "output array is read-only. The arrays it receives are read-only, as the engine's "
            "are: compute a new array instead of changing an input in place."
        )


def test_a_missing_return_a_missing_vjp_and_a_float32_forward_are_named():
    assert check_tanh_op(np.tanh, lambda g, out, x: None).message == (
        "your VJP's gradient is None: the function returns nothing (a missing return?)."
    )
    assert check_tanh_op(np.tanh).message.startswith("no VJP given: pass the VJP as the second")
    message = check_tanh_op(lambda x: np.tanh(x.astype(np.float32)), tanh_vjp).message
    assert message.startswith("forward(x)[1] is -0.4621171951293945")
    assert message.endswith("yours is float32, compute in float64).")
