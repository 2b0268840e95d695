"""Mixture of experts: the T15–T18 facts, routing properties, ledger invariants, gradients."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, WidthError
from llm_from_scratch.nn.moe import (
    MixtureOfExperts,
    TopKRouter,
    assign_capacity,
    capacity_from_factor,
    dense_gates,
    importance_loss,
    ranked_experts,
    top_k_gates,
)
from llm_from_scratch.nn.swiglu import SwiGLU
from llm_from_scratch.random import SplitMix64


def test_top2_of_056_024_020_keeps_experts_0_1_with_gates_07_03():
    """Seed fact T15: top-2 of (0.56, 0.24, 0.20) keeps experts 0, 1, gates 0.7, 0.3; y = 2.9."""
    selected, gates = top_k_gates(np.array([0.56, 0.24, 0.20]), 2)
    assert selected.tolist() == [0, 1]
    np.testing.assert_allclose(gates, [0.7, 0.3], rtol=1e-15)
    assert gates @ np.array([2.0, 5.0]) == pytest.approx(2.9, rel=1e-15)
    np.testing.assert_allclose(np.array([0.56, 0.24]).sum(), 0.8)


def test_router_scores_have_shape_b_t_e():
    """Seed fact T15: router scores, probabilities are [B, T, E]; selections, gates [B, T, k]."""
    router = TopKRouter(8, 3, 2, rng=SplitMix64(4))
    out = router(SplitMix64(5).uniform(-1, 1, (2, 4, 8)))
    assert out.scores.shape == (2, 4, 3) and out.probabilities.shape == (2, 4, 3)
    assert out.selected.shape == (2, 4, 2) and out.gates.shape == (2, 4, 2)


def test_ties_go_to_the_lowest_expert_index():
    selected, _ = top_k_gates(np.array([0.25, 0.25, 0.25, 0.25]), 2)
    assert selected.tolist() == [0, 1]
    assert ranked_experts(np.array([[0.2, 0.4, 0.4]])).tolist() == [[1, 2, 0]]


@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**31))
def test_exactly_k_distinct_experts_and_gates_sum_to_one(k_raw, num_experts, seed):
    k = min(k_raw, num_experts)
    logits = Tensor(SplitMix64(seed).uniform(-3, 3, (7, num_experts)))
    selected, gates = top_k_gates(logits.softmax(-1), k)
    assert selected.shape == (7, k)
    assert all(len(set(row)) == k for row in selected.tolist())
    np.testing.assert_allclose(gates.value.sum(-1), 1.0, rtol=1e-14)


def test_importance_loss_of_075_025_gates_is_025_and_zero_when_even():
    """Seed fact T16: importance (3, 1) gives loss 0.25, even gates 0; top-1 sends all to 0."""
    gates = np.tile([0.75, 0.25], (4, 1))
    importance = gates.sum(axis=0)
    assert importance.tolist() == [3.0, 1.0]
    assert importance_loss(gates).item() == pytest.approx(0.25, rel=1e-15)
    assert importance_loss(np.tile([0.5, 0.5], (4, 1))).item() == 0.0
    # top-1 work: every token still goes to expert 0, so assigned counts are (4, 0)
    ledger = assign_capacity(ranked_experts(gates), 1, None)
    assert ledger.assigned.tolist() == [4, 0]


def test_importance_loss_gradient_matches_central_differences():
    gates = SplitMix64(8).uniform(0.1, 1.0, (5, 3))
    result = gradcheck(importance_loss, [gates])
    assert result.passed, result.message


def test_top1_gates_are_one_and_carry_no_score_gradient():
    """Seed fact T17: a top-1 gate renormalises to exactly 1, so no gradient reaches the scores."""
    scores = Tensor(SplitMix64(9).uniform(-2, 2, (6, 4)), requires_grad=True)
    _, gates = top_k_gates(scores.softmax(-1), 1)
    assert np.all(gates.value == 1.0)
    gates.sum().backward()
    assert np.all(scores.grad == 0.0)


def test_capacity_2_drops_the_third_token_or_reroutes_it_to_its_next_choice():
    """Seed fact T18: capacity 2, counts (3, 1): drop loses a token, next reroutes it to 1."""
    ranking = np.array([[0, 1], [0, 1], [0, 1], [1, 0]])  # top-1 counts (3, 1)
    drop = assign_capacity(ranking, 1, 2, "drop")
    assert drop.assigned.tolist() == [3, 1]
    assert drop.kept.tolist() == [2, 1] and drop.dropped.tolist() == [1, 0]
    assert drop.placement[:, 0].tolist() == [0, 0, -1, 1]
    rerouted = assign_capacity(ranking, 1, 2, "next")
    assert rerouted.kept.tolist() == [2, 2] and rerouted.dropped.tolist() == [0, 0]
    assert rerouted.placement[:, 0].tolist() == [0, 0, 1, 1]
    assert drop.rerouted.tolist() == [0, 0] and rerouted.rerouted.tolist() == [0, 1]  # e0 → e1


def test_policies_change_the_output():
    router = TopKRouter.from_parameters(np.array([[4.0, 0.0], [0.0, 0.0]]), 1)
    rng = SplitMix64(1)
    experts = [SwiGLU(2, 3, 2, name=f"moe.experts.{e}", rng=rng) for e in range(2)]
    moe = MixtureOfExperts.from_parameters(router, experts, capacity=2)
    x = np.array([[1.0, 0.5], [0.8, -0.2], [0.9, 0.1], [0.7, 0.3]])  # all prefer expert 0
    dropped, report = moe(x)
    assert report.assigned.tolist() == [4, 0] and report.dropped.tolist() == [2, 0]
    moe.overflow = "next"
    rerouted, report_next = moe(x)
    assert report_next.kept.tolist() == [2, 2] and report_next.dropped.tolist() == [0, 0]
    np.testing.assert_array_equal(dropped.value[2:], 0.0)
    assert not np.allclose(dropped.value, rerouted.value)


@given(
    st.integers(1, 8),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(0, 6),
    st.sampled_from(["drop", "next"]),
    st.integers(0, 2**31),
)
def test_ledger_invariant_for_any_capacity(tokens, num_experts, k_raw, capacity, overflow, seed):
    k = min(k_raw, num_experts)
    p = Tensor(SplitMix64(seed).uniform(-2, 2, (tokens, num_experts))).softmax(-1).value
    ledger = assign_capacity(ranked_experts(p), k, capacity, overflow)
    assert ledger.kept.sum() + ledger.dropped.sum() == tokens * k
    assert ledger.assigned.sum() == tokens * k
    assert np.all(ledger.kept <= capacity)
    assert np.all(
        np.bincount(ledger.placement[ledger.placement >= 0], minlength=num_experts) == ledger.kept
    )
    for row in ledger.placement.tolist():  # a token never lands twice on one expert
        served = [e for e in row if e >= 0]
        assert len(served) == len(set(served))


def test_dropped_tokens_contribute_zero():
    moe = MixtureOfExperts(3, 4, 2, 1, capacity=0, rng=SplitMix64(6))
    y, report = moe(SplitMix64(7).uniform(-1, 1, (5, 3)))
    assert report.kept.sum() == 0 and report.dropped.sum() == 5
    assert np.all(y.value == 0.0)


def test_output_equals_gated_sum_of_selected_experts():
    moe = MixtureOfExperts(4, 6, 3, 2, rng=SplitMix64(11))
    x = SplitMix64(12).uniform(-1, 1, (5, 4))
    y, report = moe(x)
    for n in range(5):
        expected = sum(
            report.gates[n, j] * moe.experts[report.selected[n, j]](x[n]).value for j in range(2)
        )
        np.testing.assert_allclose(y.value[n], expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        report.importance, dense_gates(report.selected, report.gates, 3).sum(0)
    )


def test_gradients_within_a_fixed_selection():
    moe = MixtureOfExperts(3, 4, 3, 2, rng=SplitMix64(13))
    x = SplitMix64(14).uniform(-1, 1, (4, 3))
    selection = moe(x)[1].selected

    def run(inputs):
        y, report = moe(inputs)
        assert np.array_equal(report.selected, selection)  # small steps keep the selection
        return y

    result = gradcheck(run, [x])
    assert result.passed, result.message
    router_weight = moe.router.projection.weight
    seed = SplitMix64(15).uniform(-1, 1, (4, 3))
    result = gradcheck_parameters(lambda: (moe(x)[0] * seed).sum(), [router_weight], atol=1e-6)
    assert result.passed, result.message
    moe.zero_grad()
    moe(x)[0].backward(seed)
    assert np.any(router_weight.grad != 0.0)  # the gates carry a gradient to the router


def test_errors_are_typed_and_construction_is_transactional():
    rng = SplitMix64(1)
    with pytest.raises(ArgumentError, match="k must be at most"):
        TopKRouter(4, 2, 3, rng=rng)
    with pytest.raises(ArgumentError, match="overflow must be one of"):
        MixtureOfExperts(4, 4, 2, 1, overflow="reroute", rng=rng)
    with pytest.raises(ArgumentError, match="capacity must be None or an integer"):
        MixtureOfExperts(4, 4, 2, 1, capacity=-1, rng=rng)
    with pytest.raises(ValueError, match="MixtureOfExperts hidden_width must be at least 1"):
        MixtureOfExperts(4, 0, 2, 1, rng=rng)  # hidden width 0 fails inside the first expert
    assert rng.state == SplitMix64(1).state
    with pytest.raises(WidthError, match="last axis is 4"):
        MixtureOfExperts(4, 4, 2, 1, rng=rng)(np.ones((2, 3)))


def test_capacity_from_factor():
    assert capacity_from_factor(4, 2, 1, 1.0) == 2
    assert capacity_from_factor(10, 4, 2, 1.25) == 7
    assert capacity_from_factor(100, 10, 1, 1.1) == 11  # float rounding must not add a slot
    for bad in (-0.5, float("nan"), float("inf")):
        with pytest.raises(ArgumentError, match="finite and non-negative"):
            capacity_from_factor(4, 2, 1, bad)


def test_noisy_routing_is_off_by_default_and_reproducible_when_on():
    x = SplitMix64(30).uniform(-1, 1, (6, 4))
    plain = TopKRouter(4, 3, 1, rng=SplitMix64(31))
    assert not plain.noisy
    assert np.array_equal(plain(x, noise_rng=SplitMix64(1)).scores.value, plain(x).scores.value)
    noisy = TopKRouter(4, 3, 1, noisy=True, rng=SplitMix64(31))
    assert [n for n, _ in noisy.named_parameters()] == ["router.weight", "router.noise.weight"]
    quiet = noisy(x).scores.value  # no generator given: no noise
    np.testing.assert_array_equal(quiet, plain(x).scores.value)
    first = noisy(x, noise_rng=SplitMix64(7)).scores.value
    again = noisy(x, noise_rng=SplitMix64(7)).scores.value
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, quiet)
    # the noise scale is softplus(x W_noise) > 0, so the perturbation is finite and nonzero
    assert np.all(np.isfinite(first)) and np.all(first != quiet)
