"""Global-norm clipping and the warm-up + cosine schedule against closed forms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.nn.module import Parameter
from llm_from_scratch.training import clip_grad_norm, warmup_cosine_lr


def _params_with(grads: list[list[float] | None]) -> list[Parameter]:
    params = []
    for i, g in enumerate(grads):
        p = Parameter(np.zeros(2), f"p{i}")
        p.grad = None if g is None else np.array(g)
        params.append(p)
    return params


def test_clip_scales_all_gradients_by_one_global_factor() -> None:
    params = _params_with([[3.0, 0.0], None, [0.0, 4.0]])  # global norm 5
    assert clip_grad_norm(params, 1.0) == pytest.approx(5.0, rel=1e-15)
    scale = 1.0 / (5.0 + 1e-6)
    np.testing.assert_allclose(params[0].grad, [3.0 * scale, 0.0], rtol=1e-15)
    np.testing.assert_allclose(params[2].grad, [0.0, 4.0 * scale], rtol=1e-15)
    assert params[1].grad is None
    assert math.hypot(*params[0].grad, *params[2].grad) == pytest.approx(1.0, rel=1e-5)


def test_clip_leaves_small_gradients_alone() -> None:
    params = _params_with([[0.3, 0.4]])
    assert clip_grad_norm(params, 1.0) == pytest.approx(0.5, rel=1e-15)
    np.testing.assert_array_equal(params[0].grad, [0.3, 0.4])


def test_clip_refusals_change_nothing() -> None:
    params = _params_with([[np.inf, 0.0], [1.0, 1.0]])
    with pytest.raises(ArgumentError, match="NaN or inf"):
        clip_grad_norm(params, 1.0)
    np.testing.assert_array_equal(params[1].grad, [1.0, 1.0])
    with pytest.raises(ArgumentError, match="max_norm"):
        clip_grad_norm(params, 0.0)
    with pytest.raises(ArgumentError, match="Parameters"):
        clip_grad_norm([np.zeros(2)], 1.0)


def test_schedule_closed_form() -> None:
    kwargs = {"peak_lr": 1.0, "warmup_steps": 4, "total_steps": 12, "min_lr": 0.1}
    assert [warmup_cosine_lr(s, **kwargs) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert warmup_cosine_lr(4, **kwargs) == 1.0  # the cosine starts at its peak
    # Halfway through the decay (s = 8 of 4…12) the cosine is 0: (peak + floor) / 2.
    assert warmup_cosine_lr(8, **kwargs) == pytest.approx(0.55, rel=1e-15)
    assert warmup_cosine_lr(6, **kwargs) == pytest.approx(0.1 + 0.45 * (1 + math.sqrt(0.5)))
    assert warmup_cosine_lr(12, **kwargs) == 0.1 == warmup_cosine_lr(100, **kwargs)
    decay = [warmup_cosine_lr(s, **kwargs) for s in range(4, 13)]
    assert all(a > b for a, b in itertools.pairwise(decay))


def test_schedule_without_warmup_and_refusals() -> None:
    assert warmup_cosine_lr(0, peak_lr=2.0, warmup_steps=0, total_steps=5) == 2.0
    for bad in (
        {"step": -1},
        {"warmup_steps": 6},
        {"total_steps": 0},
        {"min_lr": 3.0},
        {"peak_lr": math.nan},
    ):
        kwargs = {"step": 0, "peak_lr": 2.0, "warmup_steps": 1, "total_steps": 5, **bad}
        step = kwargs.pop("step")
        with pytest.raises(ArgumentError):
            warmup_cosine_lr(step, **kwargs)
