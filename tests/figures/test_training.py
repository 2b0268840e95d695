"""The numbers behind the training chapter's figures, and smoke tests of the figures on Agg."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.training import (
    attention_map_figure,
    induction_targets,
    loss_curve_figure,
    moving_average,
    side_by_side_figure,
)
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import IGNORE_INDEX, induction_batch
from llm_from_scratch.training.probes import induction_scores


def test_moving_average_is_the_trailing_mean_by_hand() -> None:
    values = [4.0, 2.0, 6.0, 0.0, 8.0]
    # window 3: [4], [4, 2], [4, 2, 6], [2, 6, 0], [6, 0, 8]
    np.testing.assert_allclose(
        moving_average(values, 3), [4.0, 3.0, 4.0, 8.0 / 3.0, 14.0 / 3.0], rtol=1e-15
    )
    np.testing.assert_array_equal(moving_average(values, 1), values)
    np.testing.assert_allclose(moving_average(values, 100), np.cumsum(values) / np.arange(1, 6))


def test_moving_average_of_a_constant_is_that_constant_and_refuses_bad_windows() -> None:
    np.testing.assert_allclose(moving_average(np.full(50, 2.5), 7), 2.5, rtol=1e-15)
    for window in (0, -1, 2.0, True):
        with pytest.raises(ArgumentError):
            moving_average([1.0, 2.0], window)
    with pytest.raises(ShapeError):
        moving_average(np.ones((2, 2)), 2)


def test_induction_targets_are_the_keys_the_probe_scores() -> None:
    # A map with weight one exactly on the marked keys must score 1 with the package's probe.
    _, targets = induction_batch(3, 20, 12, SplitMix64(5), half_lengths=(3, 9))
    batch, tokens = targets.shape
    weights = np.zeros((batch, 1, tokens, tokens))
    weights[:, 0] = np.eye(tokens)  # attend to self where nothing is marked
    for b in range(batch):
        marks = induction_targets(targets[b], IGNORE_INDEX)
        length = int(np.flatnonzero(targets[b] != IGNORE_INDEX)[0])
        assert marks[0].tolist() == [length, 1]  # first query of the repeat reads key 1
        assert np.all(marks[:, 0] - marks[:, 1] == length - 1)
        assert np.all(marks[:, 1] <= marks[:, 0])  # a causal head can reach every mark
        for query, key in marks:
            weights[b, 0, query] = 0.0
            weights[b, 0, query, key] = 1.0
    assert induction_scores(weights, targets)[0] == pytest.approx(1.0, rel=1e-15)


def test_induction_targets_needs_a_counted_row() -> None:
    with pytest.raises(ArgumentError):
        induction_targets([IGNORE_INDEX] * 4, IGNORE_INDEX)
    with pytest.raises(ShapeError):
        induction_targets(np.zeros((2, 3), dtype=int), IGNORE_INDEX)


def test_loss_curve_draws_runs_evaluations_and_baselines() -> None:
    losses = np.linspace(3.0, 1.0, 40)
    fig = loss_curve_figure(
        {"run": losses},
        evals={"run": [(0, 3.0), (20, 2.0)]},
        baselines={"ln V": 2.77, "other": 2.0},
        window=5,
    )
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    lines = ax.get_lines()
    # faint raw curve, its running mean, the evaluation markers, two baselines
    assert len(lines) == 5
    np.testing.assert_allclose(lines[1].get_ydata(), moving_average(losses, 5))
    np.testing.assert_array_equal(lines[2].get_xdata(), [0, 20])
    assert [line.get_ydata()[0] for line in lines[3:]] == [2.77, 2.0]
    with pytest.raises(ArgumentError):
        loss_curve_figure({})


def test_side_by_side_draws_loss_and_norm_panels_with_the_threshold() -> None:
    runs = {"a": (np.ones(10), np.full(10, 2.0)), "b": (np.zeros(10), np.full(10, 0.5))}
    fig = side_by_side_figure(runs, clip=1.0, window=3)
    loss_ax, norm_ax = fig.axes
    assert len(loss_ax.get_lines()) == 2
    assert norm_ax.get_lines()[-1].get_ydata()[0] == 1.0  # the clipping threshold
    assert norm_ax.get_yscale() == "log"
    with pytest.raises(ShapeError):
        side_by_side_figure({"bad": (np.ones(3), np.ones(4))})


def test_attention_map_shows_the_weights_and_marks() -> None:
    weights = np.tril(np.ones((6, 6)))
    weights /= weights.sum(axis=1, keepdims=True)
    marks = np.array([[3, 1], [4, 2], [5, 3]])
    fig = attention_map_figure(weights, marks, title="head")
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.get_images()[0].get_array(), weights)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), marks[:, 1])
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), marks[:, 0])
    with pytest.raises(ShapeError):
        attention_map_figure(np.ones((2, 3)))
