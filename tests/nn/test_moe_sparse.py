"""SparseMoE: Mixtral's block, against its definition written out and the Chapter 8 layer.

Truth: ``MixtralSparseMoeBlock``'s forward written out per token in numpy (softmax over the
router logits, the k largest, divided by their sum, SwiGLU experts w2(SiLU(x w1) ⊙ x w3)),
central differences, and closed forms at ties and at k = 1 and k = E.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, RankError, WidthError
from llm_from_scratch.nn.moe import MixtureOfExperts, SparseMoE
from llm_from_scratch.random import SplitMix64

D, F, E = 4, 6, 4


def silu(z):
    return z / (1.0 + np.exp(-z))


def weights(seed: int, experts: int = E, width: int = D, hidden: int = F):
    rng = SplitMix64(seed)
    router = rng.normal((width, experts))
    triples = [
        (rng.normal((width, hidden)), rng.normal((width, hidden)), rng.normal((hidden, width)))
        for _ in range(experts)
    ]
    return router, triples


def expert_weights(layer):
    """(gate, up, down) weight values of each SwiGLU expert of a layer."""
    return [(m.gate.weight.value, m.up.weight.value, m.down.weight.value) for m in layer.experts]


def mixtral_reference(x, router, triples, k):
    """One token at a time, as the Hugging Face block computes it (float64, no jitter)."""
    rows = x.reshape(-1, x.shape[-1])
    out = np.zeros_like(rows)
    for n, token in enumerate(rows):
        logits = token @ router
        p = np.exp(logits - logits.max())
        p /= p.sum()
        top = sorted(range(len(p)), key=lambda e: (-p[e], e))[:k]
        weights_k = p[top] / p[top].sum()
        for w, e in zip(weights_k, top, strict=True):
            gate, up, down = triples[e]
            out[n] += w * ((silu(token @ gate) * (token @ up)) @ down)
    return out.reshape(x.shape)


def separated(x, router, k, margin=1e-3):
    """True when every token's k-th and (k+1)-th probabilities differ by more than ``margin``."""
    logits = x.reshape(-1, x.shape[-1]) @ router
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    ordered = -np.sort(-p, axis=-1)
    return k == p.shape[-1] or bool(np.all(ordered[:, k - 1] - ordered[:, k] > margin))


@pytest.mark.parametrize("k", [1, 2, 4])
def test_forward_equals_mixtrals_definition(k):
    router, triples = weights(1)
    x = SplitMix64(2).normal((2, 5, D))
    moe = SparseMoE.from_parameters(router, triples, top_k=k)
    np.testing.assert_allclose(
        moe(x).value, mixtral_reference(x, router, triples, k), rtol=1e-12, atol=1e-12
    )


def test_routing_softmax_topk_renormalised():
    router, triples = weights(3)
    x = SplitMix64(4).normal((6, D))
    routing = SparseMoE.from_parameters(router, triples, top_k=2).route(x)
    logits = x @ router
    p = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(routing.probabilities.value, p, rtol=1e-13)
    expected = np.argsort(-p, axis=-1)[:, :2]
    np.testing.assert_array_equal(routing.selected, expected)
    chosen = np.take_along_axis(p, expected, axis=-1)
    np.testing.assert_allclose(
        routing.gates.value, chosen / chosen.sum(-1, keepdims=True), rtol=1e-13
    )
    np.testing.assert_allclose(routing.gates.value.sum(-1), 1.0, rtol=1e-15)


def test_gradcheck_every_parameter_including_the_router_and_the_input():
    router, triples = weights(9, experts=3, hidden=3)
    x = SplitMix64(6).normal((5, D))
    assert separated(x, router, 2, margin=1e-2)  # no token near a change of selection
    moe = SparseMoE.from_parameters(router, triples, top_k=2)
    seed = SplitMix64(7).normal((5, D))
    result = gradcheck_parameters(lambda: (moe(x) * seed).sum(), moe.parameters(), atol=1e-6)
    assert result.passed, result.message
    inputs = gradcheck(lambda t: moe(t), [x], atol=1e-6)
    assert inputs.passed, inputs.message
    moe.zero_grad()
    (moe(x) * seed).sum().backward()
    assert np.abs(moe.router.weight.grad).max() > 1e-3  # the gates carry a router gradient


def test_top_1_gates_are_one_and_give_the_router_no_gradient():
    """k = 1: g = p/p = 1, so y = expert(x) and ∂y/∂W_r = 0 (as in Mixtral's formula)."""
    router, triples = weights(8)
    x = SplitMix64(9).normal((4, D))
    moe = SparseMoE.from_parameters(router, triples, top_k=1)
    np.testing.assert_array_equal(moe.route(x).gates.value, 1.0)
    moe(x).sum().backward()
    np.testing.assert_allclose(moe.router.weight.grad, 0.0, atol=1e-15)


def test_ties_go_to_the_lower_expert_index():
    """A zero router gives p = 1/E for every expert: experts 0 … k−1, each with gate 1/k."""
    _, triples = weights(10)
    x = SplitMix64(11).normal((3, D))
    moe = SparseMoE.from_parameters(np.zeros((D, E)), triples, top_k=2)
    np.testing.assert_array_equal(moe.route(x).selected, [[0, 1]] * 3)
    expected = sum(0.5 * (silu(x @ g) * (x @ u)) @ d for g, u, d in triples[:2])
    np.testing.assert_allclose(moe(x).value, expected, rtol=1e-13)


def test_an_expert_no_token_chose_gets_no_gradient():
    router, triples = weights(12)
    router[:, 3] = -50.0  # expert 3's logit is far below the others for these inputs
    x = np.abs(SplitMix64(13).normal((5, D)))
    moe = SparseMoE.from_parameters(router, triples, top_k=2)
    assert 3 not in moe.route(x).selected
    moe(x).sum().backward()
    assert all(p.grad is None for p in moe.experts[3].parameters())


def test_equals_the_chapter_8_layer_without_capacity_forward_and_gradient():
    chapter8 = MixtureOfExperts(D, F, E, 2, rng=SplitMix64(14))
    router = chapter8.router.projection.weight.value
    triples = [
        (m.gate.weight.value, m.up.weight.value, m.down.weight.value) for m in chapter8.experts
    ]
    sparse = SparseMoE.from_parameters(router, triples, top_k=2)
    drawn = SparseMoE(D, F, E, 2, rng=SplitMix64(14))  # the same draws, in the same order
    for (_, a), (_, b) in zip(drawn.named_parameters(), sparse.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.value, b.value)
    x = SplitMix64(15).normal((3, 4, D))
    seed = SplitMix64(16).normal((3, 4, D))
    ours, theirs = sparse(x), chapter8(x)[0]
    np.testing.assert_allclose(ours.value, theirs.value, rtol=1e-13, atol=1e-14)
    (ours * seed).sum().backward()
    (theirs * seed).sum().backward()
    pairs = zip(sparse.parameters(), chapter8.parameters(), strict=True)
    for mine, chapter in pairs:
        np.testing.assert_allclose(mine.grad, chapter.grad, rtol=1e-12, atol=1e-13)


def test_differs_from_the_chapter_8_layer_when_its_capacity_drops_tokens():
    chapter8 = MixtureOfExperts(D, F, E, 2, capacity=1, rng=SplitMix64(17))
    router = chapter8.router.projection.weight.value
    triples = [
        (m.gate.weight.value, m.up.weight.value, m.down.weight.value) for m in chapter8.experts
    ]
    sparse = SparseMoE.from_parameters(router, triples, top_k=2)
    x = SplitMix64(18).normal((8, D))
    capped, report = chapter8(x)
    assert report.dropped.sum() > 0  # 16 choices, 4 slots: most are dropped
    dropped_rows = np.any(report.placement < 0, axis=1)
    assert not np.allclose(capped.value[dropped_rows], sparse(x).value[dropped_rows])
    np.testing.assert_allclose(
        sparse(x).value, mixtral_reference(x, router, triples, 2), atol=1e-12
    )


def test_shapes_and_names():
    moe = SparseMoE(D, F, 3, 2, name="block.moe", rng=SplitMix64(19))
    names = [n for n, _ in moe.named_parameters()]
    assert names[0] == "block.moe.router.weight"
    assert names[1:4] == [f"block.moe.experts.0.{p}.weight" for p in ("gate", "up", "down")]
    assert len(names) == 1 + 3 * 3
    assert moe.router.weight.shape == (D, 3) and moe.experts[2].down.weight.shape == (F, D)
    assert moe(np.ones(D)).shape == (D,)
    assert moe(np.ones((2, 3, D))).shape == (2, 3, D)
    assert moe(np.ones((0, D))).shape == (0, D)
    assert repr(moe) == "SparseMoE(D=4, F=6, experts=3, top_k=2, name='block.moe')"
    assert moe.parameter_count == D * 3 + 3 * 3 * D * F


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda rng: SparseMoE(D, F, 2, 3, rng=rng), ArgumentError, "k must be at most"),
        (lambda rng: SparseMoE(D, F, 0, 1, rng=rng), ArgumentError, "num_experts"),
        (lambda rng: SparseMoE(0, F, 2, 1, rng=rng), WidthError, "model_width"),
        (lambda rng: SparseMoE(D, 2.0, 2, 1, rng=rng), ArgumentError, "hidden_width"),
        (lambda rng: SparseMoE(D, F, 2, True, rng=rng), ArgumentError, "k must be"),
        (lambda rng: SparseMoE(D, F, 2, 1, name="", rng=rng), ArgumentError, "name"),
        (lambda rng: SparseMoE(10**5, 10**5, 2, 1, rng=rng), ArgumentError, "refuses more"),
        (lambda rng: SparseMoE(D, F, 2, 1, rng=None), ArgumentError, "SplitMix64"),
    ],
)
def test_failed_construction_is_typed_and_leaves_the_generator_untouched(build, error, message):
    rng = SplitMix64(20)
    with pytest.raises(error, match=message):
        build(rng if message != "SplitMix64" else None)
    assert rng.state == SplitMix64(20).state


def test_from_parameters_refusals():
    router, triples = weights(21, experts=2)
    with pytest.raises(ArgumentError, match=r"list of 2 .* got 1 triples"):
        SparseMoE.from_parameters(router, triples[:1], top_k=1)
    with pytest.raises(ArgumentError, match=r"expert 1 must be a \(gate, up, down\) triple"):
        SparseMoE.from_parameters(router, [triples[0], triples[1][:2]], top_k=1)
    with pytest.raises(ArgumentError, match="k must be at most"):
        SparseMoE.from_parameters(router, triples, top_k=3)
    narrow = [(*t[:2], t[2][:3]) for t in triples]
    with pytest.raises(WidthError, match="down projection"):
        SparseMoE.from_parameters(router, [triples[0], narrow[1]], top_k=1)
    other_hidden = weights(22, experts=1, hidden=5)[1][0]
    with pytest.raises(WidthError, match="share one hidden width"):
        SparseMoE.from_parameters(router, [triples[0], other_hidden], top_k=1)
    wide = weights(23, experts=1, width=5)[1][0]
    with pytest.raises(WidthError, match="model width 4"):
        SparseMoE.from_parameters(router, [triples[0], wide], top_k=1)
    with pytest.raises(RankError, match="rank 2"):
        SparseMoE.from_parameters(np.ones(4), triples, top_k=1)


def test_forward_refusals():
    moe = SparseMoE(D, F, 2, 1, rng=SplitMix64(24))
    with pytest.raises(WidthError, match="last axis is 4; got shape \\(2, 3\\)"):
        moe(np.ones((2, 3)))
    with pytest.raises(RankError, match="feature axis"):
        moe(Tensor(1.0))
