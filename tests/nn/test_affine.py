"""Fused affine layers and in-place gradient sums: the taught chain's numbers, less memory.

``ops.affine(x, W, b)`` is ``matmul`` then ``add`` in one entry; a Linear with ``fused = True``
(set by ``fuse_affine``, which a block built with ``fused=True`` applies to its own layers)
records it. Its values and gradients must be the chain's bit for bit. The engine also adds a
gradient share into a pending sum in place when nothing else holds that sum: whatever else
holds it (the same array sent to two inputs by ``add``'s VJP) must keep its value.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, ops, recorded_ops
from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.generation import decoder_step_work
from llm_from_scratch.nn import Decoder, FeedForward, Linear, TransformerBlock
from llm_from_scratch.nn.linear import fuse_affine
from llm_from_scratch.random import SplitMix64


def _run(layer: Linear, x: np.ndarray, seed: np.ndarray, wants_x: bool) -> dict:
    """Output, gradients and recorded ops of ``sum(seed ⊙ layer(x))``."""
    layer.zero_grad()
    xt = Tensor(x, requires_grad=wants_x)
    out = layer(xt)
    ops_seen = recorded_ops(out)
    (out * seed).sum().backward()
    return {
        "out": out.value.copy(),
        "grads": [layer.weight.grad.copy(), layer.bias.grad.copy()]
        + ([xt.grad.copy()] if wants_x else []),
        "ops": ops_seen,
    }


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (2, 1, 4, 3)])
@pytest.mark.parametrize("wants_x", [True, False])
def test_fused_linear_is_matmul_then_add_bit_for_bit(shape, wants_x) -> None:
    rng = SplitMix64(11)
    plain = Linear(3, 6, rng=SplitMix64(4))
    plain.bias.value = rng.uniform(-1.0, 1.0, 6)
    fused = Linear.from_parameters(plain.weight.value, plain.bias.value)
    fuse_affine(fused)
    x = rng.uniform(-2.0, 2.0, shape)
    seed = rng.uniform(-1.0, 1.0, (*shape[:-1], 6))
    a, b = _run(plain, x, seed, wants_x), _run(fused, x, seed, wants_x)
    np.testing.assert_array_equal(b["out"], a["out"])
    for mine, chain in zip(b["grads"], a["grads"], strict=True):
        np.testing.assert_array_equal(mine, chain)
    assert a["ops"] == {"matmul": 1, "add": 1} and b["ops"] == {"affine": 1}
    # and both are the closed form: y = xW + b, ∂/∂W = xᵀ s, ∂/∂b = Σ s, ∂/∂x = s Wᵀ
    rows, seeds = x.reshape(-1, 3), seed.reshape(-1, 6)
    expected = rows @ plain.weight.value + plain.bias.value
    np.testing.assert_allclose(b["out"].reshape(-1, 6), expected)
    np.testing.assert_allclose(b["grads"][0], rows.T @ seeds)
    np.testing.assert_allclose(b["grads"][1], seeds.sum(axis=0))


def test_a_bias_free_or_vector_input_layer_keeps_the_chain() -> None:
    layer = Linear(3, 2, bias=False, rng=SplitMix64(1))
    fuse_affine(layer)
    assert recorded_ops(layer(Tensor(np.ones((2, 3)), requires_grad=True))) == {"matmul": 1}
    biased = Linear(3, 2, rng=SplitMix64(1))
    fuse_affine(biased)
    ops_seen = recorded_ops(biased(Tensor(np.ones(3), requires_grad=True)))
    assert "affine" not in ops_seen and ops_seen["matmul"] == 1


@pytest.mark.parametrize(
    ("x", "w", "b", "names"),
    [
        ((2, 3), (3, 4), (5,), "b (5,)"),  # bias of the wrong width
        ((2, 3), (3,), (3,), "W (3,)"),  # a vector weight
        ((2, 5), (3, 4), (4,), "x (2, 5)"),  # rows of the wrong width
        ((2, 3), (3, 4), (1, 4), "b (1, 4)"),  # a bias that would broadcast the output
    ],
)
def test_affine_refuses_shapes_it_does_not_take(x, w, b, names) -> None:
    with pytest.raises(ShapeError, match="affine takes rows x") as caught:
        ops.affine(np.ones(x), Tensor(np.ones(w), requires_grad=True), np.ones(b))
    assert names in str(caught.value) and "matmul and add" in str(caught.value)


def test_a_fused_block_marks_the_layers_it_builds_and_not_a_given_ffn() -> None:
    block = TransformerBlock(8, 2, 12, attention_bias=True, fused=True, rng=SplitMix64(3))
    layers = [block.ffn.up, block.ffn.down, block.attention.query, block.attention.output]
    assert all(layer.fused for layer in layers)
    plain = TransformerBlock(8, 2, 12, rng=SplitMix64(3))
    assert not any(layer.fused for layer in (plain.ffn.up, plain.ffn.down))
    given = FeedForward(8, 12, rng=SplitMix64(4))
    TransformerBlock(8, 2, 12, ffn=given, fused=True, rng=SplitMix64(3))
    assert not given.up.fused and not given.down.fused  # the caller's module is left as it was


def test_a_fused_decoder_counts_the_same_work_as_the_closed_form() -> None:
    # per block: q, k, v, o (4 T D²), up and down (2 T D F), scores and weights · V (2 T² D);
    # the head T D V
    length, width, hidden, vocab, layers = 6, 8, 12, 10, 2
    closed = layers * (4 * length * width**2 + 2 * length * width * hidden)
    closed += layers * 2 * length**2 * width + length * width * vocab
    for fused in (False, True):
        model = Decoder(
            vocab, width, layers, 2, hidden, positions="rope", fused=fused, rng=SplitMix64(2)
        )
        assert decoder_step_work(model, length, cached=False) == closed


def test_an_in_place_sum_leaves_a_share_another_input_holds() -> None:
    # s = a + b sends one array to both a and b; then t = a ⊙ w (recorded before s, so its VJP
    # runs after s's) sends a its second share. Adding that share into the array in place
    # would also change b's gradient.
    rng = SplitMix64(8)
    x = Tensor(rng.uniform(-1.0, 1.0, (3, 300)), requires_grad=True)
    w = rng.uniform(-1.0, 1.0, (3, 300))
    a, b = x * 2.0, x * 3.0
    t = a * w
    s = a + b
    loss = (s * s).sum() + t.sum()
    loss.backward()
    # L = Σ (5x)² + Σ 2x w, so ∂L/∂x = 50x + 2w
    np.testing.assert_allclose(x.grad, 50.0 * x.value + 2.0 * w, rtol=1e-13, atol=1e-13)


def test_shares_summed_in_place_give_the_closed_form() -> None:
    # x feeds five products: their shares meet at the one pending sum of h = 2x
    rng = SplitMix64(9)
    x = Tensor(rng.uniform(-1.0, 1.0, (4, 500)), requires_grad=True)
    h = x * 2.0
    weights = [rng.uniform(-1.0, 1.0, (4, 500)) for _ in range(5)]
    loss = sum(((h * w).sum() for w in weights), Tensor(0.0))
    loss.backward()
    np.testing.assert_allclose(x.grad, 2.0 * sum(weights), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("value", [None, "up", np.ones(2), [Linear(2, 2, rng=SplitMix64(1))]])
def test_fuse_affine_refuses_what_is_not_a_module(value) -> None:
    with pytest.raises(ArgumentError, match="fuse_affine marks the Linear layers of a Module"):
        fuse_affine(value)
