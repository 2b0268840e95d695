"""TransformerBlock and Decoder options of current model families, against independent truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, TokenError, WidthError
from llm_from_scratch.nn import Decoder, FeedForward, SwiGLU, TransformerBlock
from llm_from_scratch.nn.positions import LearnedPositions
from llm_from_scratch.random import SplitMix64


def inputs(shape, seed=2):
    return SplitMix64(seed).uniform(-1.0, 1.0, shape)


def numpy_attention(x, wq, wk, wv, wo, heads, kv_heads, biases=None, window=None):
    """Causal attention by hand: H query heads, head h reads key/value head h // (H / G)."""
    b = biases or (0.0, 0.0, 0.0, 0.0)
    q, k, v = x @ wq + b[0], x @ wk + b[1], x @ wv + b[2]
    tokens, d_h = x.shape[0], wq.shape[1] // heads
    out = np.zeros((tokens, heads * d_h))
    for h in range(heads):
        g = h // (heads // kv_heads)
        qh, kh, vh = (a[:, c * d_h : (c + 1) * d_h] for a, c in ((q, h), (k, g), (v, g)))
        scores = qh @ kh.T / math.sqrt(d_h)
        i, j = np.indices(scores.shape)
        blocked = (j > i) | ((j <= i - window) if window else False)
        scores = np.where(blocked, -np.inf, scores)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        out[:, h * d_h : (h + 1) * d_h] = weights @ vh
    return out @ wo + b[3]


def test_defaults_build_todays_block_exactly():
    """Every new option at its default: the same parameters, drawn in the same order."""
    old = TransformerBlock(8, 2, 16, rng=SplitMix64(1))
    new = TransformerBlock(
        8, 2, 16, num_kv_heads=None, window=None, qk_norm=False, attention_bias=False,
        head_width=None, rope_theta=10000.0, rope_scaling=None, ffn_bias=None, norm_eps=None,
        rng=SplitMix64(1),
    )  # fmt: skip
    a, b = old.state_dict(), new.state_dict()
    assert list(a) == list(b) and all(np.array_equal(a[k], b[k]) for k in a)
    assert isinstance(new.ffn, FeedForward) and new.ffn.up.bias is not None  # GELU FFN biased


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_grouped_biased_attention_with_a_wider_head_equals_numpy(kv_heads):
    """G key/value heads, q/k/v/o biases and d_h = 6 ≠ D/H = 2 against attention by hand."""
    block = TransformerBlock(
        8, 4, 16, num_kv_heads=kv_heads, attention_bias=True, head_width=6, rng=SplitMix64(2)
    )
    att = block.attention
    assert att.query.weight.shape == (8, 24) and att.key.weight.shape == (8, 6 * kv_heads)
    assert att.output.weight.shape == (24, 8) and att.bias
    rng = SplitMix64(3)
    for linear in (att.query, att.key, att.value, att.output):
        linear.bias.value = rng.uniform(-0.5, 0.5, linear.bias.shape)  # non-zero biases
    x = inputs((1, 5, 8))
    got = att(Tensor(x))[0].value[0]
    weights = [p.value for p in (att.query.weight, att.key.weight, att.value.weight)]
    biases = [p.bias.value for p in (att.query, att.key, att.value, att.output)]
    expected = numpy_attention(x[0], *weights, att.output.weight.value, 4, kv_heads, biases)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)


def test_gradcheck_every_new_option_at_once():
    block = TransformerBlock(
        8, 4, 6, norm="rms", positions="rope", num_kv_heads=2, window=2, qk_norm=True,
        attention_bias=True, head_width=4, rope_theta=500000.0, ffn="gelu_tanh", ffn_bias=True,
        norm_eps=1e-5, rng=SplitMix64(4),
    )  # fmt: skip
    for p in block.parameters():  # move every gain and bias off its start
        p.value = p.value + SplitMix64(len(p.name)).uniform(-0.3, 0.3, p.shape)
    x, seed = Tensor(inputs((1, 4, 8))), inputs((1, 4, 8), seed=9)
    result = gradcheck_parameters(lambda: (block(x)[0] * seed).sum(), block.parameters())
    assert result.passed, result.message


@pytest.mark.parametrize("ffn", ["gelu", "gelu_tanh", "swiglu"])
@pytest.mark.parametrize("bias", [True, False])
def test_ffn_kinds_and_bias(ffn, bias):
    block = TransformerBlock(8, 2, 12, ffn=ffn, ffn_bias=bias, rng=SplitMix64(5))
    assert isinstance(block.ffn, SwiGLU if ffn == "swiglu" else FeedForward)
    names = [n for n, _ in block.ffn.named_parameters()]
    assert any(n.endswith(".bias") for n in names) == bias
    if ffn == "gelu_tanh":  # GPT-2's gelu_new on the hidden layer
        x = inputs((1, 3, 8))
        h = x @ block.ffn.up.weight.value + (block.ffn.up.bias.value if bias else 0.0)
        act = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
        out = act @ block.ffn.down.weight.value + (block.ffn.down.bias.value if bias else 0.0)
        np.testing.assert_allclose(block.ffn(Tensor(x)).value, out, rtol=0, atol=1e-13)


def test_norm_eps_reaches_every_norm():
    m = Decoder(11, 8, 2, 2, 16, norm="rms", norm_eps=1e-5, rng=SplitMix64(6))
    norms = [b.attention_norm for b in m.blocks] + [b.ffn_norm for b in m.blocks]
    assert {n.eps for n in [*norms, m.final_norm]} == {1e-5}
    default = Decoder(11, 8, 2, 2, 16, norm="rms", rng=SplitMix64(6))
    assert default.final_norm.eps == 1e-6 and default.blocks[0].ffn_norm.eps == 1e-6


def test_rope_theta_sets_the_frequencies():
    block = TransformerBlock(8, 2, 16, positions="rope", rope_theta=500000.0, rng=SplitMix64(7))
    d_h = 4
    expected = 500000.0 ** (-2 * np.arange(d_h // 2) / d_h)
    np.testing.assert_allclose(block.attention.positions.frequencies, expected, rtol=1e-15)


def test_learned_positions_add_a_table_row_per_position():
    m = Decoder(11, 8, 1, 2, 16, positions="learned", max_positions=6, rng=SplitMix64(8))
    assert isinstance(m.position_embedding, LearnedPositions)
    names = [n for n, _ in m.named_parameters()]
    assert names[:2] == ["decoder.embedding.weight", "decoder.positions.weight"]
    ids = np.array([[3, 1, 4, 1]])
    x = m.embedding.weight.value[ids[0]] + m.position_embedding.weight.value[:4]
    assert m.blocks[0].attention.positions is None
    block_out = m.blocks[0](Tensor(x[None]))[0]
    expected = m.final_norm(block_out).value @ m.embedding.weight.value.T
    np.testing.assert_allclose(m(ids).value, expected, rtol=0, atol=1e-13)
    with pytest.raises(TokenError, match=r"\[0, 6\)"):
        m(np.zeros((1, 7), dtype=np.int64))


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"num_kv_heads": 3}, ArgumentError, "must divide num_heads"),
        ({"num_kv_heads": 0}, ArgumentError, "num_kv_heads"),
        ({"window": 0}, ArgumentError, "window must be at least 1"),
        ({"window": 2, "causal": False}, ArgumentError, "causal=True"),
        ({"qk_norm": 1}, ArgumentError, "qk_norm"),
        ({"attention_bias": "yes"}, ArgumentError, "attention_bias"),
        ({"ffn_bias": 0}, ArgumentError, "ffn_bias"),
        ({"head_width": 0}, WidthError, "head_width"),
        ({"head_width": 3, "positions": "rope"}, WidthError, "must be even"),
        ({"rope_theta": -1.0, "positions": "rope"}, ArgumentError, "rope_theta"),
        ({"rope_theta": 5e5}, ArgumentError, "positions='rope'"),
        ({"rope_scaling": {"rope_type": "yarn"}, "positions": "rope"}, ArgumentError, "yarn"),
        ({"ffn": "gelu_new"}, ArgumentError, "ffn must be one of"),
        ({"ffn": "mixtral_moe"}, ArgumentError, "num_experts"),
        ({"ffn": "mixtral_moe", "num_experts": 2, "top_k": 3}, ArgumentError, "k <= E"),
        ({"ffn": "mixtral_moe", "num_experts": 2, "top_k": 1, "ffn_bias": True}, ArgumentError,
         "bias-free"),
        ({"num_experts": 4, "top_k": 2}, ArgumentError, "mixtral_moe"),
        ({"norm_eps": -1.0}, ArgumentError, "eps|ε"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_before_anything_is_drawn(options, error, match):
    rng = SplitMix64(9)
    before = rng.state
    with pytest.raises(error, match=match):
        TransformerBlock(8, 4, 16, rng=rng, **options)
    assert rng.state == before
    if "causal" not in options:  # the decoder refuses the same options the same way
        with pytest.raises(error, match=match):
            Decoder(11, 8, 1, 4, 16, positions=options.pop("positions", None), rng=rng, **options)
        assert rng.state == before


def test_decoder_refusals_of_learned_positions():
    with pytest.raises(ArgumentError, match="max_positions"):
        Decoder(11, 8, 1, 2, 16, positions="learned", rng=SplitMix64(1))
    with pytest.raises(ArgumentError, match="positions='learned'"):
        Decoder(11, 8, 1, 2, 16, max_positions=8, rng=SplitMix64(1))


def test_mixtral_moe_ffn_equals_its_formula_and_the_budget():
    """softmax router, top-2 renormalised, SwiGLU experts: written in numpy per token."""
    from llm_from_scratch.nn import parameter_budget

    block = TransformerBlock(
        8, 2, 6, norm="rms", ffn="mixtral_moe", num_experts=4, top_k=2, rng=SplitMix64(10)
    )
    moe = block.ffn
    x = inputs((1, 5, 8))
    router = moe.router.weight.value
    expected = np.zeros((5, 8))
    for t, row in enumerate(x[0]):
        logits = row @ router
        p = np.exp(logits - logits.max())
        p /= p.sum()
        chosen = np.argsort(-p, kind="stable")[:2]
        for e in chosen:
            ex = moe.experts[e]
            gate, up, down = (ex.gate.weight.value, ex.up.weight.value, ex.down.weight.value)
            a = row @ gate
            expected[t] += p[e] / p[chosen].sum() * (((a / (1 + np.exp(-a))) * (row @ up)) @ down)
    np.testing.assert_allclose(moe(Tensor(x)).value[0], expected, rtol=0, atol=1e-13)
    b = parameter_budget(
        8, num_layers=1, ffn_kind="gated", ffn_hidden_width=6, num_experts=4, norm="rmsnorm",
        num_heads=2,
    )  # fmt: skip
    assert b.per_block == block.parameter_count
    seed = inputs((1, 5, 8), seed=12)
    result = gradcheck_parameters(lambda: (block(Tensor(x))[0] * seed).sum(), block.parameters())
    assert result.passed, result.message
