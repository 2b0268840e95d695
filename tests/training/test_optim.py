"""SGD and AdamW against updates written out by hand, and their state-dict round trips."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, ParameterError, ShapeError
from llm_from_scratch.nn.module import Parameter
from llm_from_scratch.training import SGD, AdamW


def _param(values: list[float], name: str = "w") -> Parameter:
    return Parameter(np.array(values), name)


def test_two_adamw_steps_by_hand() -> None:
    lr, b1, b2, eps, wd = 0.1, 0.9, 0.999, 1e-8, 0.01
    w = _param([1.0, -2.0])
    opt = AdamW([w], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    g1, g2 = np.array([0.5, -1.0]), np.array([0.25, 2.0])
    # Step 1: m = 0.1 g1, v = 0.001 g1²; m̂ = g1, v̂ = g1², so the Adam part is lr·sign(g1).
    theta = np.array([1.0, -2.0])
    theta1 = theta * (1 - lr * wd) - lr * g1 / (np.abs(g1) + eps)
    w.grad = g1
    opt.step()
    np.testing.assert_allclose(w.value, theta1, rtol=1e-14)
    # Step 2: m = 0.9·0.1 g1 + 0.1 g2, v = 0.999·0.001 g1² + 0.001 g2², t = 2.
    m = 0.09 * g1 + 0.1 * g2
    v = 0.000999 * g1**2 + 0.001 * g2**2
    m_hat, v_hat = m / (1 - 0.81), v / (1 - 0.998001)
    theta2 = theta1 * (1 - lr * wd) - lr * m_hat / (np.sqrt(v_hat) + eps)
    w.grad = g2
    opt.step()
    np.testing.assert_allclose(w.value, theta2, rtol=1e-13)
    state = opt.state_dict()["state"][0]
    assert state["step"] == 2
    np.testing.assert_allclose(state["exp_avg"], m, rtol=1e-14)
    np.testing.assert_allclose(state["exp_avg_sq"], v, rtol=1e-14)


def test_adamw_decay_is_decoupled() -> None:
    # A zero gradient: Adam's part is 0/(0 + ε) = 0, so only θ(1 − ηλ) remains (L2 would not).
    w = _param([3.0])
    opt = AdamW([w], lr=0.5, weight_decay=0.2)
    w.grad = np.zeros(1)
    opt.step()
    assert w.value[0] == pytest.approx(3.0 * (1 - 0.5 * 0.2), rel=1e-15)


def test_sgd_plain_momentum_and_nesterov_by_hand() -> None:
    g1, g2 = np.array([1.0, -2.0]), np.array([0.5, 0.5])
    plain, heavy, nesterov = _param([0.0, 0.0]), _param([0.0, 0.0]), _param([0.0, 0.0])
    optimizers = [
        SGD([plain], lr=0.1, weight_decay=0.5),
        SGD([heavy], lr=0.1, momentum=0.9, dampening=0.1),
        SGD([nesterov], lr=0.1, momentum=0.9, nesterov=True),
    ]
    for g in (g1, g2):
        for p, opt in zip((plain, heavy, nesterov), optimizers, strict=True):
            p.grad = g
            opt.step()
    # plain: θ₁ = −0.1 g1; θ₂ = θ₁ − 0.1 (g2 + 0.5 θ₁).
    t1 = -0.1 * g1
    np.testing.assert_allclose(plain.value, t1 - 0.1 * (g2 + 0.5 * t1), rtol=1e-14)
    # momentum: b₁ = g1 (no dampening on the first step), b₂ = 0.9 g1 + 0.9 g2.
    np.testing.assert_allclose(heavy.value, -0.1 * g1 - 0.1 * (0.9 * g1 + 0.9 * g2), rtol=1e-14)
    # nesterov: step uses g + μb: first g1 + 0.9 g1, then g2 + 0.9 (0.9 g1 + g2).
    b2 = 0.9 * g1 + g2
    np.testing.assert_allclose(
        nesterov.value, -0.1 * (1.9 * g1) - 0.1 * (g2 + 0.9 * b2), rtol=1e-14
    )


def test_parameters_without_gradient_are_skipped_and_zero_grad_clears() -> None:
    a, b = _param([1.0], "a"), _param([2.0], "b")
    opt = AdamW([a, b], lr=0.1)
    a.grad = np.array([1.0])
    opt.step()
    assert b.value[0] == 2.0 and 0 in opt.state_dict()["state"]
    assert 1 not in opt.state_dict()["state"]
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_groups_have_their_own_options() -> None:
    a, b = _param([1.0], "a"), _param([1.0], "b")
    opt = SGD([{"params": [a], "lr": 1.0}, {"params": [b]}], lr=0.5)
    a.grad = b.grad = np.array([1.0])
    opt.step()
    assert (a.value[0], b.value[0]) == (0.0, 0.5)


def test_state_dict_round_trip_continues_identically() -> None:
    def run(steps: int, opt_state: dict | None = None, start: np.ndarray | None = None):
        w = _param([0.3, -0.7] if start is None else list(start))
        opt = AdamW([w], lr=0.05)
        if opt_state is not None:
            opt.load_state_dict(opt_state)
        for k in range(steps):
            w.grad = np.array([math.sin(k + 1.0), math.cos(k + 1.0)]) + w.value
            opt.step()
        return w, opt

    whole, _ = run(4)
    first, opt = run(2)
    saved = opt.state_dict()
    saved_state_copy = {k: dict(v) for k, v in saved["state"].items()}
    w2 = _param(list(first.value))
    opt2 = AdamW([w2], lr=0.05)
    opt2.load_state_dict(saved)
    for k in range(2, 4):
        w2.grad = np.array([math.sin(k + 1.0), math.cos(k + 1.0)]) + w2.value
        opt2.step()
    np.testing.assert_array_equal(w2.value, whole.value)
    # state_dict hands out copies: stepping opt2 did not change the dict it was loaded from.
    np.testing.assert_array_equal(saved["state"][0]["exp_avg"], saved_state_copy[0]["exp_avg"])


def test_load_refusal_changes_nothing() -> None:
    w = _param([1.0, 2.0])
    opt = AdamW([w], lr=0.1)
    w.grad = np.array([1.0, 1.0])
    opt.step()
    before = opt.state_dict()
    bad = opt.state_dict()
    bad["state"][0]["exp_avg"] = np.zeros(3)
    with pytest.raises(ShapeError, match="exp_avg"):
        opt.load_state_dict(bad)
    bad = opt.state_dict()
    bad["param_groups"][0]["lr"] = -1.0
    with pytest.raises(ArgumentError, match="lr"):
        opt.load_state_dict(bad)
    with pytest.raises(ParameterError, match="groups hold"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    after = opt.state_dict()
    assert after["param_groups"] == before["param_groups"]
    np.testing.assert_array_equal(after["state"][0]["exp_avg"], before["state"][0]["exp_avg"])


def test_refusals() -> None:
    w = _param([1.0])
    with pytest.raises(ArgumentError, match="betas"):
        AdamW([w], betas=(0.9,))
    with pytest.raises(ArgumentError, match="beta2"):
        AdamW([w], betas=(0.9, 1.0))
    with pytest.raises(ArgumentError, match="lr"):
        SGD([w], lr=-0.1)
    with pytest.raises(ArgumentError, match="nesterov"):
        SGD([w], momentum=0.0, nesterov=True)
    with pytest.raises(ArgumentError, match="empty"):
        SGD([])
    with pytest.raises(ParameterError, match="twice"):
        SGD([w, w])
    with pytest.raises(ArgumentError, match="unknown options"):
        SGD([{"params": [w], "betas": (0.9, 0.9)}])
    opt = AdamW([w, _param([2.0], "v")])
    w.grad = np.array([np.inf])
    with pytest.raises(ArgumentError, match="NaN or ±inf"):
        opt.step()
    assert w.value[0] == 1.0 and opt.state == {}
