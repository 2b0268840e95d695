"""The composed block: T1, T2, T19 shapes and orderings, causality, gradients."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, WidthError
from llm_from_scratch.nn import MixtureOfExperts, TransformerBlock
from llm_from_scratch.random import SplitMix64


def inputs(shape, seed=2):
    return SplitMix64(seed).uniform(-1.0, 1.0, shape)


def test_block_returns_b_t_d_outputs_and_attention_weights():
    """Seed fact T19: the block returns [B, T, D] and weights [B, T, T] or [B, H, T, T]."""
    block = TransformerBlock(8, 2, 16, rng=SplitMix64(1))
    y, averaged = block(inputs((2, 4, 8)))
    assert y.shape == (2, 4, 8) and averaged.shape == (2, 4, 4)
    _, per_head = block(inputs((2, 4, 8)), average_weights=False)
    assert per_head.shape == (2, 2, 4, 4)
    np.testing.assert_allclose(per_head.value.mean(axis=1), averaged.value, rtol=1e-15)


def test_pre_norm_cycle_matches_its_formula():
    """Seed fact T1: pre-norm x₁ = x + Attn(LN(x)), x₂ = x₁ + FFN(LN(x₁)), FFN width 16."""
    block = TransformerBlock(4, 2, 16, rng=SplitMix64(3))
    x = inputs((1, 2, 4))
    stages = block.stages(x)
    assert stages.ffn_output.shape == (1, 2, 4)
    hidden = block.ffn.up(block.ffn_norm(stages.x1))
    assert hidden.shape == (1, 2, 16)  # the FFN expands to [1, 2, 16] and back
    x1 = Tensor(x) + block.attention(block.attention_norm(Tensor(x)))[0]
    x2 = x1 + block.ffn(block.ffn_norm(x1))
    np.testing.assert_array_equal(stages.output.value, x2.value)


def test_post_norm_uses_the_same_parameters_in_the_other_order():
    block = TransformerBlock(4, 2, 8, rng=SplitMix64(4))
    post = block.with_order("post")
    assert [p for _, p in post.named_parameters()] == [p for _, p in block.named_parameters()]
    x = Tensor(inputs((1, 3, 4)))
    x1 = block.attention_norm(x + block.attention(x)[0])
    expected = block.ffn_norm(x1 + block.ffn(x1))
    np.testing.assert_array_equal(post(x)[0].value, expected.value)
    assert not np.allclose(post(x)[0].value, block(x)[0].value)


def test_ffn_is_per_position_attention_mixes():
    """Seed fact T2: editing one position changes only its FFN output; attention carries it on."""
    block = TransformerBlock(4, 2, 8, causal=False, rng=SplitMix64(5))
    x = inputs((1, 3, 4))
    changed = x.copy()
    changed[0, 1] += [0.5, -0.3, 0.2, 0.1]  # not a uniform shift, which LayerNorm would erase
    ffn_before, ffn_after = block.ffn(x).value, block.ffn(changed).value
    assert np.array_equal(ffn_before[0, [0, 2]], ffn_after[0, [0, 2]])
    assert not np.array_equal(ffn_before[0, 1], ffn_after[0, 1])
    mixed_before, mixed_after = block(x)[0].value, block(changed)[0].value
    assert not np.allclose(mixed_before[0, 0], mixed_after[0, 0])  # attention carried it over


@pytest.mark.parametrize("positions", [None, "rope", "alibi"])
def test_causal_output_at_t_ignores_later_inputs(positions):
    block = TransformerBlock(4, 2, 8, positions=positions, rng=SplitMix64(6))
    x = inputs((1, 5, 4))
    later = x.copy()
    later[0, 3:] = inputs((2, 4), seed=9)
    np.testing.assert_array_equal(block(x)[0].value[0, :3], block(later)[0].value[0, :3])


@pytest.mark.parametrize(
    ("norm", "ffn", "positions", "order"),
    [
        ("layer", "gelu", None, "pre"),
        ("rms", "swiglu", "rope", "pre"),
        ("layer", "swiglu", "alibi", "post"),
        ("rms", "gelu", "rope", "post"),
    ],
)
def test_block_gradients_match_central_differences(norm, ffn, positions, order):
    block = TransformerBlock(
        4, 2, 6, norm=norm, ffn=ffn, positions=positions, order=order, rng=SplitMix64(7)
    )
    result = gradcheck(lambda t: block(t)[0], [inputs((1, 3, 4))])
    assert result.passed, result.message
    seed = inputs((1, 3, 4), seed=11)
    x = Tensor(inputs((1, 3, 4)))
    result = gradcheck_parameters(lambda: (block(x)[0] * seed).sum(), block.parameters())
    assert result.passed, result.message


def test_block_with_a_mixture_of_experts_keeps_its_routing_report():
    rng = SplitMix64(8)
    moe = MixtureOfExperts(4, 6, 3, 2, capacity=3, name="block.ffn", rng=rng)
    block = TransformerBlock(4, 2, 6, ffn=moe, rng=rng)
    y, _ = block(inputs((1, 4, 4)))
    assert y.shape == (1, 4, 4)
    report = block.last_routing
    assert report is not None and report.kept.sum() + report.dropped.sum() == 4 * 2


def test_bad_options_are_typed_and_leave_the_generator_alone():
    rng = SplitMix64(1)
    for kwargs in (
        {"norm": "batch"},
        {"order": "middle"},
        {"ffn": "relu"},
        {"positions": "learned"},
    ):
        with pytest.raises(ArgumentError, match="must be one of"):
            TransformerBlock(4, 2, 8, rng=rng, **kwargs)
    with pytest.raises(ValueError, match="divisible"):
        TransformerBlock(5, 2, 8, rng=rng)
    assert rng.state == SplitMix64(1).state
    with pytest.raises(WidthError, match=r"expects input \[B, T, 4\]"):
        TransformerBlock(4, 2, 8, rng=rng)(np.ones((2, 4)))
