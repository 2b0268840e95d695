"""The training-step benchmark times the right computation (timings are never asserted here).

On a tiny induction config: the engine step's gradients match central differences of its own
loss, and its clip + AdamW update matches the update written out by hand from those gradients;
with torch installed, the PyTorch re-implementation computes the same loss, gradients and step.
Speed lives in ``python -m benchmarks.train_step``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.train_step import (
    CASES,
    engine_gradients,
    engine_loss,
    engine_step,
    load_config,
    make_problem,
    render,
)
from llm_from_scratch.autodiff import no_grad
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training.config import TrainConfig

TINY = TrainConfig(
    task="induction",
    context=8,
    vocab_size=8,
    min_half_length=2,
    max_half_length=4,
    model_width=8,
    num_layers=1,
    num_heads=2,
    hidden_width=12,
    batch_size=3,
    eval_batches=1,
    grad_clip=0.05,  # small enough that clipping acts, so the reference step must clip too
)


def test_engine_gradients_match_central_differences_on_every_parameter():
    problem = make_problem(TINY)
    assert problem.ignore_index is not None and np.any(problem.targets == problem.ignore_index)
    _, grads = engine_gradients(problem)
    rng = SplitMix64(7)
    step = 1e-6
    for name, p in problem.model.named_parameters():
        flat = p.value.reshape(-1)
        assert np.shares_memory(flat, p.value)  # a view: writing flat[i] moves the parameter
        picks = np.unique((rng.uniform(0.0, 1.0, 3) * flat.size).astype(int))
        for i in picks:
            original = flat[i]
            with no_grad():
                flat[i] = original + step
                up = engine_loss(problem).item()
                flat[i] = original - step
                down = engine_loss(problem).item()
            flat[i] = original
            numeric = (up - down) / (2 * step)
            analytic = grads[name].reshape(-1)[i]
            assert abs(numeric - analytic) < 1e-7, (name, int(i), numeric, analytic)


def test_engine_step_is_clip_then_adamw_written_out_by_hand():
    problem = make_problem(TINY)
    before = {n: p.value.copy() for n, p in problem.model.named_parameters()}
    _, grads = engine_gradients(problem)
    norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
    assert norm > TINY.grad_clip  # the step below clips
    scale = TINY.grad_clip / (norm + 1e-6)
    lr, beta1, beta2, eps = TINY.lr, TINY.beta1, TINY.beta2, 1e-8
    expected = {}
    for name, theta in before.items():
        g = grads[name] * scale
        m, v = (1 - beta1) * g, (1 - beta2) * g * g  # first step: zero moments
        decay = TINY.weight_decay if theta.ndim >= 2 else 0.0  # matrices only
        m_hat, v_hat = m / (1 - beta1), v / (1 - beta2)
        expected[name] = theta * (1 - lr * decay) - lr * m_hat / (np.sqrt(v_hat) + eps)
    engine_step(problem)
    for name, p in problem.model.named_parameters():
        np.testing.assert_allclose(p.value, expected[name], rtol=1e-12, atol=1e-15, err_msg=name)


def test_stored_cases_build_with_a_fixed_batch():
    for case in CASES:
        a, b = make_problem(load_config(case)), make_problem(load_config(case))
        config = load_config(case)
        assert a.inputs.shape == (config.batch_size, config.context)
        np.testing.assert_array_equal(a.inputs, b.inputs)
        np.testing.assert_array_equal(a.targets, b.targets)


def test_render_without_torch_says_it_was_skipped():
    tape = {"step": 51, "per_block": 21, "outside_blocks": 9, "by_op": {}}
    gaps = {
        "loss_difference": 0.0,
        "max_gradient_difference": 0.0,
        "max_parameter_difference_after_step": 0.0,
    }
    report = {
        "date": "2026-12-01 00:00 UTC",
        "numpy": np.__version__,
        "torch": None,
        "rounds": 1,
        "samples_per_process": 1,
        "target_ratio": 1.25,
        "load_average_before": [0.0, 0.0, 0.0],
        "load_average_after": [0.0, 0.0, 0.0],
        "rows": [
            {
                "case": "tiny",
                "engine_s": 0.012,
                "handwritten_s": 0.01,
                "engine_cpu_s": 0.012,
                "handwritten_cpu_s": 0.01,
                "hand_ratio": 1.2,
                "hand_cpu_ratio": 1.2,
                "hand_paired_ratio_median": 1.2,
                "overhead_per_entry_s": 0.002 / 51,
                "tape": tape,
                "hand_agreement": gaps,
                "shape": "B=3",
                "parameters": 10,
            }
        ],
    }
    text = render(report)
    assert "torch not installed" in text
    assert "51 entries per step (21 per block, 9 outside the blocks)" in text
    assert "39.22 µs per entry" in text  # (12 ms − 10 ms) / 51
    assert " 1.20× " in text and "ok" in text


def test_handwritten_step_agrees_with_the_engine_before_timing():
    from benchmarks.train_step import hand_agreement

    result = hand_agreement(TINY)
    assert result["loss_difference"] < 1e-12
    assert result["max_gradient_difference"] < 1e-12
    assert result["max_parameter_difference_after_step"] < 1e-12


def test_tape_entries_count_the_blocks_ops():
    from benchmarks.train_step import tape_entries

    tape = tape_entries(make_problem(TINY))
    # build_model builds the model fused: a block records 2 layer norms, the q/k/v/output
    # matmuls, one fused_attention (head splits, rotations, weights, weights @ v and the head
    # merge), the up and down projections as one affine entry each (matmul and bias add),
    # 2 residual adds and the GELU
    assert tape["per_block"] == 2 + 4 + 1 + 2 + 2 + 1
    assert tape["by_op"]["fused_attention"] == TINY.num_layers
    assert tape["by_op"]["affine"] == 2 * TINY.num_layers
    assert tape["step"] == TINY.num_layers * tape["per_block"] + tape["outside_blocks"]
    assert sum(tape["by_op"].values()) == tape["step"]


def test_torch_reimplementation_agrees_with_the_engine():
    pytest.importorskip("torch")
    from benchmarks.train_step import agreement

    result = agreement(TINY)
    assert result["loss_difference"] < 1e-12
    assert result["max_gradient_difference"] < 1e-12
    assert result["max_parameter_difference_after_step"] < 1e-10
