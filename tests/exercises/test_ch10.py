"""Chapter 10's grader: the book's AdamW step passes; the usual slips are named."""

import numpy as np

from llm_from_scratch.exercises.ch10 import grade_adamw_step


def solution(theta, grad, m, v, s, lr, betas, eps, weight_decay):
    """The book's solution: decoupled decay, bias-corrected moments, ε outside the root."""
    beta1, beta2 = betas
    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad**2
    m_hat, v_hat = m / (1 - beta1 ** (s + 1)), v / (1 - beta2 ** (s + 1))
    theta = theta * (1 - lr * weight_decay) - lr * m_hat / (np.sqrt(v_hat) + eps)
    return theta, m, v


FIRST = "For the first step (s = 0) with g = [0.5, -0.1, 0.0, 0.002], "


def test_the_books_solution_passes():
    grade = grade_adamw_step(solution)
    assert grade.passed, grade.message
    assert grade.message == (
        "your update matches the first step's closed form and the package's AdamW over 5 "
        "steps with other hyperparameters: θ, m and v."
    )


def test_the_coupled_l2_form_is_named():
    def coupled(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        return solution(theta, grad + weight_decay * theta, m, v, s, lr, betas, eps, 0.0)

    assert grade_adamw_step(coupled).message == FIRST + (
        "the decay is added to the gradient (the coupled L2 form); AdamW shrinks θ by "
        "(1 − ηλ) outside the adaptive division and leaves g, m and v alone."
    )


def test_a_missing_bias_correction_is_named():
    def uncorrected(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        beta1, beta2 = betas
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        return theta * (1 - lr * weight_decay) - lr * m / (np.sqrt(v) + eps), m, v

    assert grade_adamw_step(uncorrected).message == FIRST + (
        "m and v are used without the bias corrections: divide m by 1 − β₁^(s+1) and v by "
        "1 − β₂^(s+1) before the update."
    )


def test_the_power_off_by_one_is_named():
    def off_by_one(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        return solution(theta, grad, m, v, s - 1, lr, betas, eps, weight_decay)

    assert grade_adamw_step(off_by_one).message == FIRST + (
        "the bias corrections use β^s; with s counted from 0 they are 1 − β^(s+1) (at s = 0, "
        "1 − β⁰ = 0 and the division fails)."
    )


def test_decay_after_the_step_is_named():
    def decay_after(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        theta, m, v = solution(theta, grad, m, v, s, lr, betas, eps, 0.0)
        return theta * (1 - lr * weight_decay), m, v

    assert grade_adamw_step(decay_after).message == FIRST + (
        "θ is shrunk after the Adam step; AdamW shrinks the old θ: θ(1 − ηλ) − η m̂ / (√v̂ + ε)."
    )


def test_a_wrong_entry_is_named_when_no_slip_matches():
    def sign_only(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        theta, m, v = solution(theta, grad, m, v, s, lr, betas, eps, weight_decay)
        return theta, m, v * 2

    assert grade_adamw_step(sign_only).message == (
        "the new v[0] is 0.0005 for the first step (s = 0) with g = [0.5, -0.1, 0.0, 0.002]; "
        "it should be 0.00025."
    )


def test_returning_only_theta_is_explained():
    def theta_only(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        return solution(theta, grad, m, v, s, lr, betas, eps, weight_decay)[0]

    assert grade_adamw_step(theta_only).message == (
        "your adamw_step should return the three arrays (theta, m, v) for the first step "
        "(s = 0) with g = [0.5, -0.1, 0.0, 0.002]; got ndarray."
    )


def test_a_step_that_ignores_its_arguments_is_named():
    def fixed(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        return solution(theta, grad, m, v, s, 0.01, (0.9, 0.999), 1e-8, 0.1)

    message = grade_adamw_step(fixed).message
    assert message.startswith("For step s = 0 of a run of 5 on a [2, 3] weight, your step uses")
    assert "use the lr, betas, eps and weight_decay arguments" in message


def test_a_flipped_sign_a_missing_decay_and_flattened_results_are_named():
    def uphill(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        return solution(theta, -grad, m, v, s, lr, betas, eps, weight_decay)[0], *solution(
            theta, grad, m, v, s, lr, betas, eps, weight_decay
        )[1:]

    def no_decay(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        return solution(theta, grad, m, v, s, lr, betas, eps, 0.0)

    def flat(theta, grad, m, v, s, lr, betas, eps, weight_decay):
        return tuple(
            a.ravel() for a in solution(theta, grad, m, v, s, lr, betas, eps, weight_decay)
        )

    assert grade_adamw_step(uphill).message == FIRST + (
        "θ moves up the gradient; the update subtracts η m̂ / (√v̂ + ε)."
    )
    assert grade_adamw_step(no_decay).message == FIRST + (
        "θ is not shrunk at all; AdamW multiplies the old θ by (1 − ηλ) before subtracting the "
        "Adam step."
    )
    assert grade_adamw_step(flat).message == (
        "the new theta has shape (6,) for step s = 0 of a run of 5 on a [2, 3] weight; it should "
        "have θ's shape (2, 3) (no flattening)."
    )
