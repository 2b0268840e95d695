"""The numbers behind the generation chapter's figures, and smoke tests on Agg."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.generation import (
    temperature_figure,
    temperature_sweep,
    truncation_figure,
    truncation_sets,
    work_curves,
    work_figure,
)
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64

LOGITS = np.log([0.5, 0.3, 0.15, 0.05])


def test_sweep_entropy_is_minus_sum_p_log_p_and_rises_towards_ln_v():
    sweep = temperature_sweep(LOGITS, [0.5, 1.0, 100.0])
    p = np.array([0.5, 0.3, 0.15, 0.05])
    assert sweep.entropies[1] == pytest.approx(-(p * np.log(p)).sum(), rel=1e-13)
    squared = p**2 / (p**2).sum()
    assert sweep.entropies[0] == pytest.approx(-(squared * np.log(squared)).sum(), rel=1e-12)
    assert sweep.entropies[0] < sweep.entropies[1] < sweep.entropies[2] < math.log(4)
    assert sweep.uniform_entropy == pytest.approx(math.log(4))
    assert math.log(4) - sweep.entropies[2] < 1e-3


def test_truncation_sets_hand_computed():
    sets = truncation_sets(LOGITS, 2, 0.9)
    assert sets.order.tolist() == [0, 1, 2, 3]
    assert sets.top_k_kept.tolist() == [True, True, False, False]
    assert sets.top_p_kept.tolist() == [True, True, True, False]
    assert sets.kept_mass == pytest.approx((0.8, 0.95), rel=1e-12)


def test_work_curves_count_linear_and_quadratic_work():
    model = Decoder(7, 4, 1, 2, 8, rng=SplitMix64(0))
    curves = work_curves(model, range(1, 9))
    assert curves.positions.tolist() == list(range(8))
    assert np.all(np.diff(curves.cached, 2) == 0)
    assert np.all(np.diff(curves.uncached, 2) == 4 * 1 * 4)  # 4 · layers · D
    assert curves.cached[0] == curves.uncached[0]  # one position: the same pass


def test_bad_inputs_are_refused():
    with pytest.raises(ShapeError):
        temperature_sweep([1.0], [1.0])
    with pytest.raises(ArgumentError):
        temperature_sweep(LOGITS, [])
    with pytest.raises(ArgumentError):
        temperature_sweep(LOGITS, [0.0])
    with pytest.raises(ArgumentError):
        work_curves(Decoder(7, 4, 1, 2, 8, rng=SplitMix64(0)), [])


def test_figures_draw_on_agg():
    sweep = temperature_sweep(LOGITS, np.geomspace(0.1, 10, 9))
    bars = temperature_sweep(LOGITS, [0.5, 1.0, 2.0])
    fig = temperature_figure(sweep, bars, labels=list("abcd"))
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert len(fig.axes[0].patches) == 3 * 4
    heights = [patch.get_height() for patch in fig.axes[0].patches]
    np.testing.assert_allclose(heights[:4], bars.probabilities[0])  # the exact τ, not nearest
    fig = truncation_figure(truncation_sets(LOGITS, 2, 0.9), labels=list("abcd"))
    assert [len(ax.patches) for ax in fig.axes] == [4, 4]
    curves = work_curves(Decoder(7, 4, 1, 2, 8, rng=SplitMix64(0)), range(1, 5))
    assert len(work_figure(curves).axes) == 1
    measured = (np.array([1.0, 2.0]), np.array([1e-3, 1e-3]), np.array([2e-3, 4e-3]))
    assert len(work_figure(curves, measured).axes) == 2
