"""Chapter 10's grader: the reader writes one AdamW update.

The reader writes ``adamw_step(theta, grad, m, v, s, lr, betas, eps, weight_decay)`` returning
the new ``(theta, m, v)`` for the step ``s`` (counted from 0, so the bias corrections are
1 − β^(s+1)). It is checked against the closed form of the first step (m̂ = g, v̂ = g², so
θ₁ = θ₀(1 − ηλ) − η g / (|g| + ε)) and against the package's :class:`AdamW` over several steps.
When the answer is wrong, the grader tries the usual slips (no bias correction, β^s, the
coupled L2 form, the decay after the step, λ without η, ε inside the root) and names the one
that matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from llm_from_scratch.nn.module import Parameter
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import AdamW

from .grading import AnswerError, as_array, call, compare, expect, grader, require_callable

BETAS = (0.9, 0.999)
EPS = 1e-8
FIRST_THETA = np.array([1.0, -2.0, 0.5, 3.0])
FIRST_GRAD = np.array([0.5, -0.1, 0.0, 2e-3])
LR, DECAY = 0.01, 0.1
SEQUENCE_STEPS = 5
# (lr, betas, eps, weight_decay) of each check: the run uses other values than the first step,
# so a step that ignores its arguments (and uses the chapter's numbers) is caught.
FIRST_HYPER = (LR, BETAS, EPS, DECAY)
SEQUENCE_HYPER = (3e-3, (0.8, 0.99), 1e-6, 0.5)
Hyper = tuple[float, tuple[float, float], float, float]


def _slip(
    theta: np.ndarray,
    grad: np.ndarray,
    m: np.ndarray,
    v: np.ndarray,
    s: int,
    slip: str,
    hyper: Hyper = FIRST_HYPER,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One AdamW step with one named slip ('' for none); the messages' diagnosis, not the truth."""
    if slip == "ignores-arguments":
        slip, hyper = "", FIRST_HYPER
    lr, (beta1, beta2), eps, decay = hyper
    g = grad + decay * theta if slip == "coupled" else grad
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    power = s if slip == "power" else s + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        m_hat = m if slip == "no-correction" else m / (1 - beta1**power)
        v_hat = v if slip == "no-correction" else v / (1 - beta2**power)
        root = np.sqrt(v_hat + eps) if slip == "eps-inside" else np.sqrt(v_hat) + eps
        step = lr * m_hat / root
    shrink = 1 - (decay if slip == "lambda" else lr * decay)
    if slip in ("coupled", "no-decay"):
        shrink = 1.0
    if slip == "decay-after":
        return (theta - step) * shrink, m, v
    if slip == "sign":
        return theta * shrink + step, m, v
    return theta * shrink - step, m, v


SLIPS = {
    "no-correction": "m and v are used without the bias corrections: divide m by 1 − β₁^(s+1) "
    "and v by 1 − β₂^(s+1) before the update",
    "power": "the bias corrections use β^s; with s counted from 0 they are 1 − β^(s+1) (at "
    "s = 0, 1 − β⁰ = 0 and the division fails)",
    "coupled": "the decay is added to the gradient (the coupled L2 form); AdamW shrinks θ by "
    "(1 − ηλ) outside the adaptive division and leaves g, m and v alone",
    "decay-after": "θ is shrunk after the Adam step; AdamW shrinks the old θ: "
    "θ(1 − ηλ) − η m̂ / (√v̂ + ε)",
    "lambda": "θ is shrunk by (1 − λ); decoupled decay shrinks it by (1 − ηλ)",
    "eps-inside": "ε sits inside the square root; the update divides by √v̂ + ε",
    "sign": "θ moves up the gradient; the update subtracts η m̂ / (√v̂ + ε)",
    "no-decay": "θ is not shrunk at all; AdamW multiplies the old θ by (1 − ηλ) before "
    "subtracting the Adam step",
    "ignores-arguments": "your step uses the first check's η = 0.01, β = (0.9, 0.999), "
    "ε = 1e-8 and λ = 0.1 whatever it is given; use the lr, betas, eps and weight_decay "
    "arguments (this step passes lr = 0.003, betas = (0.8, 0.99), eps = 1e-6, "
    "weight_decay = 0.5)",
}


def _diagnose(
    got: np.ndarray,
    inputs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int],
    case: str,
    hyper: Hyper = FIRST_HYPER,
) -> None:
    """Name the slip whose θ matches the reader's, if one does."""
    for slip, fix in SLIPS.items():
        if slip == "ignores-arguments" and hyper == FIRST_HYPER:
            continue
        wrong = _slip(*inputs, slip, hyper)[0]
        close = np.allclose(got, wrong, rtol=1e-9, atol=1e-12, equal_nan=True)
        if got.shape == wrong.shape and close:
            raise AnswerError(f"For {case}, {fix}.")


def _run(
    candidate: Callable[..., Any],
    theta: np.ndarray,
    grad: np.ndarray,
    m: np.ndarray,
    v: np.ndarray,
    s: int,
    case: str,
    hyper: Hyper = FIRST_HYPER,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Call the reader's step on copies and check it returned three arrays of θ's shape."""
    lr, betas, eps, decay = hyper
    with np.errstate(all="ignore"):  # a 0/0 in the reader's code shows up as nan, named below
        result = call(
            candidate,
            theta.copy(),
            grad.copy(),
            m.copy(),
            v.copy(),
            s,
            lr,
            betas,
            eps,
            decay,
            what="your adamw_step",
            case=case,
        )
    expect(
        isinstance(result, tuple | list) and len(result) == 3,
        f"your adamw_step should return the three arrays (theta, m, v) for {case}; got "
        f"{type(result).__name__}"
        + (f" of length {len(result)}." if isinstance(result, tuple | list) else "."),
    )
    names = ("theta", "m", "v")
    arrays = tuple(as_array(r, f"the new {n}") for r, n in zip(result, names, strict=True))
    for array, name in zip(arrays, names, strict=True):
        expect(
            array.shape == theta.shape,
            f"the new {name} has shape {array.shape} for {case}; it should have θ's shape "
            f"{theta.shape} (no flattening).",
        )
    return arrays  # type: ignore[return-value]


@grader("Chapter 10 exercise: one AdamW update")
def grade_adamw_step(candidate: Callable[..., Any]) -> str:
    """Pass when candidate matches the first-step closed form and the package's AdamW."""
    require_callable(candidate, "your adamw_step")
    zeros = np.zeros_like(FIRST_THETA)
    case = f"the first step (s = 0) with g = {FIRST_GRAD.tolist()}"
    theta, m, v = _run(candidate, FIRST_THETA, FIRST_GRAD, zeros, zeros, 0, case)
    beta1, beta2 = BETAS
    closed_form = FIRST_THETA * (1 - LR * DECAY) - LR * FIRST_GRAD / (np.abs(FIRST_GRAD) + EPS)
    if not np.allclose(theta, closed_form, rtol=1e-9, atol=1e-12):
        _diagnose(theta, (FIRST_THETA, FIRST_GRAD, zeros, zeros, 0), case)
    compare(m, (1 - beta1) * FIRST_GRAD, what="the new m", case=case, atol=1e-15)
    compare(v, (1 - beta2) * FIRST_GRAD**2, what="the new v", case=case, atol=1e-18)
    compare(theta, closed_form, what="the new theta", case=case)

    rng = SplitMix64(1010)
    gradients = [rng.normal((2, 3)) for _ in range(SEQUENCE_STEPS)]
    weight = Parameter(rng.normal((2, 3)), "weight")
    theta, m, v = weight.value.copy(), np.zeros((2, 3)), np.zeros((2, 3))
    lr, betas, eps, decay = SEQUENCE_HYPER
    optimizer = AdamW([weight], lr=lr, betas=betas, eps=eps, weight_decay=decay)
    for s, g in enumerate(gradients):
        case = f"step s = {s} of a run of {SEQUENCE_STEPS} on a [2, 3] weight"
        before = (theta, g, m, v, s)
        weight.grad = g.copy()
        optimizer.step()
        state = optimizer.state[id(weight)]
        theta, m, v = _run(candidate, theta, g, m, v, s, case, SEQUENCE_HYPER)
        if not np.allclose(theta, weight.value, rtol=1e-9, atol=1e-12):
            _diagnose(theta, before, case, SEQUENCE_HYPER)
        compare(m, state["exp_avg"], what="the new m", case=case)
        compare(v, state["exp_avg_sq"], what="the new v", case=case)
        compare(theta, weight.value, what="the new theta", case=case)
    return (
        "your update matches the first step's closed form and the package's AdamW over "
        f"{SEQUENCE_STEPS} steps with other hyperparameters: θ, m and v."
    )
