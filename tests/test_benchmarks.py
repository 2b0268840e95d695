"""The benchmark's handwritten block is a valid reference: its gradients are the engine's.

The handwritten backward is derived by hand, independently of the engine, so agreement to
1e-10 checks both. Timings are never asserted here; speed lives in ``python -m benchmarks``.
"""

from __future__ import annotations

import numpy as np

from benchmarks.block import (
    SMALL,
    Size,
    forward,
    handwritten,
    make_problem,
    max_gradient_difference,
)
from benchmarks.engine import stack_case
from llm_from_scratch.autodiff import Tensor


def test_handwritten_block_gradients_equal_the_engines():
    block, p, x, seed = make_problem(SMALL)
    assert max_gradient_difference(block, p, x, seed, SMALL.heads) < 1e-10


def test_handwritten_block_gradient_of_x_matches_central_differences_on_one_entry():
    size = Size("tiny", 1, 3, 4, 2, 6)
    _, p, x, seed = make_problem(size)
    _, dx = handwritten(p, x, seed, size.heads)

    def loss(z):
        return float(np.sum(forward(np, p, z, size.heads)[0] * seed))

    step = 1e-6
    bumped = x.copy()
    bumped[0, 1, 2] += step
    lowered = x.copy()
    lowered[0, 1, 2] -= step
    numeric = (loss(bumped) - loss(lowered)) / (2 * step)
    assert abs(numeric - dx[0, 1, 2]) < 1e-6


def test_matmul_silu_stack_reference_agrees_with_the_engine():
    _, _, check = stack_case(rows=8, width=4, layers=2)
    assert check() < 1e-12


def test_a_stored_run_names_its_machine_and_the_simd_level_follows_numpys_dispatch():
    """The SIMD level is read from numpy's dispatch, so disabling AVX-512 shows as AVX2."""
    import os
    import platform
    import subprocess
    import sys

    from benchmarks.machine import SIMD_FLAGS, describe, machine_line

    info = describe()
    assert set(info) == {"cpu", "cpu_flags", "cores", "simd", "blas", "machine", "blas_threads"}
    flags = info["cpu_flags"].split()
    assert set(flags) <= set(SIMD_FLAGS) or flags == ["unknown"]
    assert machine_line({"machine_info": info}).startswith(f"machine: {info['cpu']}")
    assert machine_line({}) == "machine: not recorded"
    if platform.machine() != "x86_64":
        return
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
    code = "from benchmarks.machine import simd_level; print(simd_level())"
    level = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert level in ("X86_V3 (AVX2)", "X86_V2 (SSE4.2)")


def test_the_block_benchmark_counts_the_blocks_tape_entries():
    from benchmarks.block import tape_entries

    block, _, x, _ = make_problem(SMALL)
    # 2 rms_norm, q/k/v matmuls and head splits, 2 pair_rotate, attention_weights, weights @ v,
    # merge_heads, output matmul, residual add, gate/up/down matmuls, silu, mul, residual add
    assert tape_entries(block, x) == 2 + 3 + 3 + 2 + 1 + 1 + 1 + 1 + 1 + 3 + 1 + 1 + 1


def test_the_fused_block_records_eleven_fewer_entries_and_the_same_gradients():
    from benchmarks.block import engine_step, tape_entries

    block, _, x, seed = make_problem(SMALL)
    fused, _, _, _ = make_problem(SMALL, fused=True)
    # the attention core's 3 head splits, 2 rotations, weights, weights @ v and merge: one entry;
    # SwiGLU's gate, up and down matmuls, silu and mul: one entry
    assert tape_entries(fused, x) == tape_entries(block, x) - (8 - 1) - (5 - 1)
    inputs = [Tensor(x, requires_grad=True) for _ in range(2)]
    for model, tensor in zip((block, fused), inputs, strict=True):
        engine_step(model, tensor, seed)
    np.testing.assert_array_equal(inputs[0].grad, inputs[1].grad)
    for a, b in zip(block.parameters(), fused.parameters(), strict=True):
        np.testing.assert_array_equal(a.grad, b.grad)


def test_the_training_step_benchmark_says_its_attention_is_fused():
    from benchmarks.train_step import load_config, tape_entries
    from benchmarks.train_step import make_problem as step_problem

    config = load_config("induction")
    tape = tape_entries(step_problem(config))
    assert tape["attention"] == "fused"
    assert tape["by_op"]["fused_attention"] == config.num_layers  # one per block
    assert "attention_weights" not in tape["by_op"] and "split_heads" not in tape["by_op"]
