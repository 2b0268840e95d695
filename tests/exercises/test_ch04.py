"""Chapter 4's grader: the book's solution passes; plausible wrong ones fail, and say why."""

import numpy as np

from llm_from_scratch.exercises.ch04 import check_swiglu_gate


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def gate(a, u):
    return a * sigmoid(a) * u


def gate_vjp(grad, a, u):
    s = sigmoid(a)
    return grad * u * (s + a * s * (1.0 - s)), grad * a * s


def test_the_solution_passes():
    grade = check_swiglu_gate(gate, gate_vjp)
    assert grade.passed, grade.message


def test_the_sigmoid_gate_is_named():
    assert check_swiglu_gate(lambda a, u: sigmoid(a) * u, gate_vjp).message == (
        "your gate is σ(a)·u, the sigmoid gate of the original GLU; SwiGLU gates with "
        "SiLU(a) = a·σ(a)."
    )


def test_sigmoid_as_silus_slope_is_named():
    def vjp(grad, a, u):
        return grad * u * sigmoid(a), grad * a * sigmoid(a)

    assert check_swiglu_gate(gate, vjp).message == (
        "your da uses σ(a) as SiLU's slope; SiLU(a) = a·σ(a) is a product, so "
        "SiLU′(a) = σ(a) + a·σ(a)(1 − σ(a))."
    )


def test_swapped_gradients_are_named():
    def swapped(grad, a, u):
        da, du = gate_vjp(grad, a, u)
        return du, da

    assert check_swiglu_gate(gate, swapped).message == (
        "you return (du, da); the order is (da, du), as the inputs (a, u)."
    )


def test_a_wrong_entry_is_named():
    def forgot_grad(grad, a, u):
        return gate_vjp(np.ones_like(grad), a, u)

    assert check_swiglu_gate(gate, forgot_grad).message == (
        "da[1, 0] is 1.5 for the chapter's a = XW_g and u = XW_u, grad = dH; it should be 0."
    )
