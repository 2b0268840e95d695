"""The numbers behind the mixture-of-experts charts (T15, T16, T18), and smoke tests on Agg."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.moe import (
    capacity_frames,
    capacity_sweep,
    expert_load,
    importance_figure,
    importance_vs_work,
    load_bars,
    load_figure,
    load_from_report,
    load_svg,
    router_figure,
    router_view,
    routing_rows,
    routing_table,
)
from llm_from_scratch.nn.moe import (
    MixtureOfExperts,
    TopKRouter,
    assign_capacity,
    dense_gates,
    importance_loss,
    ranked_experts,
)
from llm_from_scratch.nn.swiglu import SwiGLU
from llm_from_scratch.random import SplitMix64

T18_RANKING = np.array([[0, 1], [0, 1], [0, 1], [1, 0]])  # top-1 counts (3, 1)


def test_router_view_t15_worked_example() -> None:
    view = router_view([0.56, 0.24, 0.20], 2)
    assert view.selected.tolist() == [[0, 1]]
    assert view.chosen.tolist() == [[True, True, False]]
    np.testing.assert_allclose(view.kept_mass, [0.8], rtol=1e-15)
    np.testing.assert_allclose(view.gates, [[0.7, 0.3, 0.0]], rtol=1e-15)
    assert view.gates[0] @ np.array([2.0, 5.0, 123.0]) == pytest.approx(2.9, rel=1e-15)
    assert view.k == 2


def test_router_view_batch_rows_and_ties() -> None:
    view = router_view([[0.1, 0.6, 0.3], [0.4, 0.3, 0.3]], 1)
    assert view.selected.tolist() == [[1], [0]]
    np.testing.assert_array_equal(view.gates, [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(view.kept_mass, [0.6, 0.4])
    tie = router_view([0.25, 0.25, 0.25, 0.25], 2)  # lowest indices win
    assert tie.chosen.tolist() == [[True, True, False, False]]
    with pytest.raises(ShapeError, match=r"\[tokens, experts\]"):
        router_view(np.ones((2, 2, 2)), 1)


def _importance_and_work(gates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Importance and assignment counts as nn computes them, every token choosing both experts."""
    selected = np.tile([0, 1], (len(gates), 1))
    importance = dense_gates(selected, gates, 2).sum(axis=0)
    return importance, assign_capacity(selected, 2, None).assigned


def test_importance_vs_work_reads_nn_counts_t16() -> None:
    # four tokens, both experts selected (k = 2 of 2), gates (0.75, 0.25)
    gates = np.tile([0.75, 0.25], (4, 1))
    case = importance_vs_work(*_importance_and_work(gates))
    np.testing.assert_allclose(case.importance, [3.0, 1.0])
    assert case.assigned.tolist() == [4, 4]  # gate mass and assigned work differ
    assert case.importance_cv2 == 0.25 and case.assigned_cv2 == 0.0  # mean 2, variance 1
    np.testing.assert_allclose(case.importance_share, [0.75, 0.25])
    np.testing.assert_allclose(case.assigned_share, [0.5, 0.5])
    balanced = importance_vs_work(*_importance_and_work(np.full((4, 2), 0.5)))
    assert balanced.importance_cv2 == 0.0
    with pytest.raises(ShapeError, match="same shape"):
        importance_vs_work([3.0, 1.0], [4])


def test_importance_cv2_is_the_balancing_penalty() -> None:
    gates = SplitMix64(4).uniform(0.0, 1.0, (6, 3))
    importance = gates.sum(axis=0)
    case = importance_vs_work(importance, np.array([2, 5, 5]))
    assert case.importance_cv2 == importance_loss(gates).item()
    assert case.assigned_cv2 == importance_loss(np.array([2.0, 5.0, 5.0])).item()


def test_expert_load_t18_drop_and_next() -> None:
    drop = assign_capacity(T18_RANKING, 1, 2, "drop")
    load = expert_load(drop, 2)
    assert load.requested.tolist() == [3, 1]
    assert load.kept.tolist() == [2, 1] and load.dropped.tolist() == [1, 0]
    assert load.overflow.tolist() == [1, 0]
    assert load.rerouted_in.tolist() == [0, 0] and load.rerouted_out.tolist() == [0, 0]
    rerouted = assign_capacity(T18_RANKING, 1, 2, "next")
    load = expert_load(rerouted, 2)
    assert load.kept.tolist() == [2, 2] and load.dropped.tolist() == [0, 0]
    assert load.kept_own.tolist() == [2, 1] and load.rerouted_in.tolist() == [0, 1]
    assert load.rerouted_out.tolist() == [1, 0] and load.overflow.tolist() == [1, 0]
    unlimited = expert_load(assign_capacity(T18_RANKING, 1, None), None)
    assert unlimited.overflow.tolist() == [0, 0]
    with pytest.raises(ArgumentError, match="Ledger"):
        expert_load(T18_RANKING, 2)


def test_expert_load_is_the_ledgers_count_and_its_split_matches_the_placement() -> None:
    p = SplitMix64(3).uniform(0.0, 1.0, (9, 4))
    for overflow in ("drop", "next"):
        for capacity in range(0, 6):
            ranking = ranked_experts(p)
            ledger = assign_capacity(ranking, 2, capacity, overflow)
            load = expert_load(ledger, capacity)
            np.testing.assert_array_equal(load.requested, ledger.assigned)
            np.testing.assert_array_equal(load.kept, ledger.kept)
            np.testing.assert_array_equal(load.dropped, ledger.dropped)
            served, chosen = ledger.placement, ranking[:, :2]
            own = np.bincount(chosen[served == chosen], minlength=4)
            np.testing.assert_array_equal(load.kept_own, own)
            assert load.kept.sum() + load.dropped.sum() == 9 * 2
            assert np.all(load.rerouted_out >= 0)


def _t18_mixture(overflow: str) -> MixtureOfExperts:
    router = TopKRouter.from_parameters(np.array([[1.5, -1.5], [-0.5, 0.5]]), 1)
    rng = SplitMix64(5)
    experts = [SwiGLU(2, 3, 2, name=f"moe.experts.{e}", rng=rng) for e in range(2)]
    return MixtureOfExperts.from_parameters(router, experts, capacity=2, overflow=overflow)


T18_INPUTS = np.array([[1.0, 0.2], [0.8, -0.1], [0.6, 0.3], [-0.5, 0.9]])  # first three → e0


def test_load_and_rows_from_a_mixture_report() -> None:
    moe = _t18_mixture("next")
    _, report = moe(T18_INPUTS)
    load = load_from_report(report)
    assert load.requested.tolist() == [3, 1] and load.rerouted_in.tolist() == [0, 1]
    probabilities = moe.router(T18_INPUTS).probabilities.value
    rows = routing_rows(report, probabilities, labels=["a", "b", "c", "d"])
    assert [row.label for row in rows] == ["a", "b", "c", "d"]
    assert [row.choices[0][0] for row in rows] == [0, 0, 0, 1]  # requested
    assert [row.choices[0][2] for row in rows] == [0, 0, 1, 1]  # served: token 2 rerouted
    assert all(row.choices[0][1] == 1.0 for row in rows)  # top-1 gates are one
    np.testing.assert_allclose(rows[0].probabilities, probabilities[0])
    table = routing_table(rows, digits=2)
    assert table.count("\n") == 1 + 4
    assert "e0 (1.00) → e1 (rerouted)" in table
    _, dropped_report = _t18_mixture("drop")(T18_INPUTS)
    assert "**dropped**" in routing_table(routing_rows(dropped_report, probabilities))
    with pytest.raises(ShapeError, match="tokens"):
        routing_rows(report, probabilities[:3])
    with pytest.raises(ArgumentError, match="labels"):
        routing_rows(report, probabilities, labels=["a"])
    with pytest.raises(ArgumentError, match="at least one row"):
        routing_table([])


def test_capacity_sweep_matches_hand_counts() -> None:
    # the T18 batch as probabilities: three tokens prefer e0, one prefers e1; E = 2, k = 1
    p = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.4, 0.6]])
    sweep = capacity_sweep(p, 1, [0.5, 1.0, 1.5, 2.0], "drop")
    assert [capacity for _, capacity, _ in sweep] == [1, 2, 3, 4]  # ⌈factor · 4 · 1 / 2⌉
    assert [load.kept.tolist() for *_, load in sweep] == [[1, 1], [2, 1], [3, 1], [3, 1]]
    assert [load.dropped.tolist() for *_, load in sweep] == [[2, 0], [1, 0], [0, 0], [0, 0]]
    rerouted = capacity_sweep(p, 1, [0.5, 1.0], "next")
    assert [load.kept.tolist() for *_, load in rerouted] == [[1, 1], [2, 2]]
    # capacity 1: token 1 is rerouted to e1 and takes the slot token 3 (an e1 choice) wanted
    assert [load.dropped.tolist() for *_, load in rerouted] == [[1, 1], [0, 0]]
    assert rerouted[0][2].rerouted_in.tolist() == [0, 1]


def test_load_bars_geometry() -> None:
    load = expert_load(assign_capacity(T18_RANKING, 1, 2, "next"), 2)
    bars, line = load_bars(load, 4, height=120.0, baseline=130.0, left=28.0, group_width=44.0)
    by = {(b.kind, b.expert): b for b in bars}
    assert by[("kept", 0)].height == 60.0 and by[("kept", 0)].y == 70.0  # 2 of 4 → half height
    assert by[("kept", 1)].height == 30.0 and by[("rerouted", 1)].height == 30.0
    assert by[("rerouted", 1)].y == 130.0 - 60.0  # stacked on the kept bar
    assert by[("dropped", 0)].height == 0.0
    assert by[("kept", 1)].x == 28.0 + 44.0
    assert line == 130.0 - 2 * 30.0
    with pytest.raises(ArgumentError, match="top"):
        load_bars(load, 0)


def test_load_svg_and_frames() -> None:
    load = expert_load(assign_capacity(T18_RANKING, 1, 2, "drop"), 2)
    svg = load_svg(load, 3, 'overflow "drop"')
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count('class="kept"') == 2 and svg.count('class="dropped"') == 1
    assert 'class="capacity"' in svg and "kept 2, 1; dropped 1, 0" in svg
    p = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.4, 0.6]])
    frames = capacity_frames(p, 1, [0.5, 1.0])
    assert len(frames) == 2
    assert "capacity <b>1</b>" in frames[0] and "capacity <b>2</b>" in frames[1]
    assert '"drop": 3 kept, 1 dropped' in frames[1] and '"next": 4 kept, 0 dropped' in frames[1]
    assert frames[0].count("<svg") == 2


def test_figures_draw() -> None:
    view = router_view([[0.56, 0.24, 0.20], [0.1, 0.3, 0.6]], 2)
    assert isinstance(router_figure(view, token_labels=["x", "y"]), Figure)
    with pytest.raises(ArgumentError, match="token_labels"):
        router_figure(view, token_labels=["x"])
    drop = assign_capacity(T18_RANKING, 1, 2, "drop")
    rerouted = assign_capacity(T18_RANKING, 1, 2, "next")
    loads = {
        "drop": expert_load(drop, 2),
        "next": expert_load(rerouted, 2),
    }
    assert isinstance(load_figure(loads), Figure)
    case = importance_vs_work(*_importance_and_work(np.tile([0.75, 0.25], (4, 1))))
    assert isinstance(importance_figure({"a": case}), Figure)
    with pytest.raises(ArgumentError):
        load_figure({})
    with pytest.raises(ArgumentError):
        importance_figure({})
