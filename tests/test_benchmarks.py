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
