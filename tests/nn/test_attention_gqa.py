"""Grouped-query attention: H query heads over G key/value heads, query head h reading h // (H/G).

Truth here is numpy built by hand from the same weights: H separate single-head attentions, and
for G = H a copy of the computation the layer performed before key/value heads could be shared.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters, ops
from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.nn import (
    ALiBiPositions,
    MultiHeadAttention,
    RoPEPositions,
    scaled_dot_product_attention,
)
from llm_from_scratch.nn import attention as attention_module
from llm_from_scratch.random import SplitMix64


def normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return SplitMix64(seed).normal(shape)


def softmax_rows(scores: np.ndarray, blocked: np.ndarray) -> np.ndarray:
    """Softmax over the last axis with blocked entries at weight 0 (a row of all blocked: 0)."""
    out = np.zeros_like(scores)
    for index in np.ndindex(scores.shape[:-1]):
        open_keys = ~blocked[index]
        if not open_keys.any():
            continue
        row = scores[index]
        e = np.where(open_keys, np.exp(row - row[open_keys].max()), 0.0)
        out[index] = e / e.sum()
    return out


def rope_numpy(x: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """Interleaved RoPE: pair (2j, 2j+1) of the row at position t rotated by t·base^(−2j/d)."""
    tokens, width = x.shape[-2:]
    out = np.empty_like(x)
    for t in range(tokens):
        for j in range(width // 2):
            angle = t * base ** (-2.0 * j / width)
            a, b = x[..., t, 2 * j], x[..., t, 2 * j + 1]
            out[..., t, 2 * j] = a * math.cos(angle) - b * math.sin(angle)
            out[..., t, 2 * j + 1] = a * math.sin(angle) + b * math.cos(angle)
    return out


def separate_heads(
    x, wq, wk, wv, wo, heads, kv_heads, *, causal=False, head_blocked=None, rope=False, alibi=None
):
    """H single-head attentions; query head h uses key/value columns of head h // (H/G)."""
    batch, tokens, width = x.shape
    d = width // heads
    group = heads // kv_heads
    outputs, weights = [], []
    for h in range(heads):
        g = h // group
        q = x @ wq[:, h * d : (h + 1) * d]  # (B, T, d)
        k = x @ wk[:, g * d : (g + 1) * d]
        v = x @ wv[:, g * d : (g + 1) * d]
        if rope:
            q, k = rope_numpy(q), rope_numpy(k)
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)  # (B, T, T)
        blocked = np.zeros((batch, tokens, tokens), dtype=bool)
        i, j = np.meshgrid(np.arange(tokens), np.arange(tokens), indexing="ij")
        if causal:
            blocked |= j > i
        if head_blocked is not None:
            blocked |= head_blocked[:, h]
        if alibi is not None:
            scores = scores - alibi[h] * np.where(j <= i, i - j, 0)
        w = softmax_rows(scores, blocked)
        weights.append(w)
        outputs.append(w @ v)  # (B, T, d)
    concat = np.concatenate(outputs, axis=-1)  # (B, T, H·d)
    return concat @ wo, np.stack(weights, axis=1)  # (B, T, D), (B, H, T, T)


def weights_for(seed, width, heads, kv_heads):
    d = width // heads
    return (
        normal(seed, (width, width)),
        normal(seed + 1, (width, kv_heads * d)),
        normal(seed + 2, (width, kv_heads * d)),
        normal(seed + 3, (width, width)),
    )


# --- forward against H separate attentions -----------------------------------------------------


@pytest.mark.parametrize(("heads", "kv_heads"), [(4, 1), (4, 2), (4, 4), (6, 3), (6, 2), (2, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_equals_separate_single_head_attentions(heads, kv_heads, causal):
    width = 2 * heads
    x = normal(1, (2, 5, width))
    wq, wk, wv, wo = weights_for(10, width, heads, kv_heads)
    layer = MultiHeadAttention.from_parameters(
        wq, wk, wv, wo, num_heads=heads, num_kv_heads=kv_heads, causal=causal
    )
    output, weights = layer(Tensor(x), average_weights=False)
    expected, expected_weights = separate_heads(x, wq, wk, wv, wo, heads, kv_heads, causal=causal)
    np.testing.assert_allclose(output.value, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights.value, expected_weights, rtol=0, atol=1e-14)
    assert weights.shape == (2, heads, 5, 5)


def test_group_order_is_h_floor_divided_by_group_size():
    """H = 4, G = 2: heads 0 and 1 read key head 0, heads 2 and 3 read key head 1 (not h mod G)."""
    x = normal(2, (1, 4, 8))
    wq, wk, wv, wo = weights_for(20, 8, 4, 2)
    layer = MultiHeadAttention.from_parameters(wq, wk, wv, wo, num_heads=4, num_kv_heads=2)
    _, weights = layer(Tensor(x), average_weights=False)
    expected = separate_heads(x, wq, wk, wv, wo, 4, 2)[1]
    # the interleaved assignment h mod G would give other weights for heads 1 and 2
    wrong_k = np.concatenate([wk[:, 2:], wk[:, :2]], axis=1)  # swap the two key heads
    wrong = separate_heads(x, wq, wrong_k, wv, wo, 4, 2)[1]
    np.testing.assert_allclose(weights.value, expected, atol=1e-14)
    assert np.abs(weights.value[:, 1] - wrong[:, 1]).max() > 1e-3


def test_per_head_mask_padding_rope_and_alibi_follow_the_query_head():
    heads, kv_heads, width, tokens, batch = 4, 2, 8, 5, 2
    d = width // heads
    x = normal(3, (batch, tokens, width))
    wq, wk, wv, wo = weights_for(30, width, heads, kv_heads)
    head_mask = (
        SplitMix64(4).uniform(0.0, 1.0, (batch * heads, tokens, tokens)) < 0.3
    )  # row b·H + h
    padding = np.zeros((batch, tokens), dtype=bool)
    padding[1, -2:] = True
    blocked = head_mask.reshape(batch, heads, tokens, tokens) | padding[:, None, None, :]
    layer = MultiHeadAttention.from_parameters(
        wq,
        wk,
        wv,
        wo,
        num_heads=heads,
        num_kv_heads=kv_heads,
        causal=True,
        positions=RoPEPositions(d),
    )
    out, w = layer(Tensor(x), mask=head_mask, key_padding_mask=padding, average_weights=False)
    expected, expected_w = separate_heads(
        x, wq, wk, wv, wo, heads, kv_heads, causal=True, head_blocked=blocked, rope=True
    )
    np.testing.assert_allclose(out.value, expected, atol=1e-12)
    np.testing.assert_allclose(w.value, expected_w, atol=1e-14)

    alibi = ALiBiPositions(heads)
    layer = MultiHeadAttention.from_parameters(
        wq, wk, wv, wo, num_heads=heads, num_kv_heads=kv_heads, causal=True, positions=alibi
    )
    out, w = layer(Tensor(x), average_weights=False)
    expected, expected_w = separate_heads(
        x, wq, wk, wv, wo, heads, kv_heads, causal=True, alibi=alibi.slopes
    )
    np.testing.assert_allclose(out.value, expected, atol=1e-12)
    np.testing.assert_allclose(w.value, expected_w, atol=1e-14)


def test_multi_query_attention_has_one_key_and_one_value_head():
    layer = MultiHeadAttention(12, 4, num_kv_heads=1, rng=SplitMix64(5))
    assert layer.key.weight.shape == (12, 3) and layer.value.weight.shape == (12, 3)
    assert layer.parameter_count == 2 * 12 * 12 + 2 * 12 * 3  # 2D² + 2·D·G·d_h
    assert layer.num_kv_heads == 1 and "G=1" in repr(layer)


# --- keys and values are broadcast, never copied per query head --------------------------------


def test_keys_and_values_reach_the_scores_as_views_with_g_heads(monkeypatch):
    seen, keys = [], []
    original = ops.attention_weights

    def spy(q, k, *bias, **options):
        seen.append((q.shape, k.shape))
        keys.append(k.value)
        return original(q, k, *bias, **options)

    monkeypatch.setattr(attention_module.ops, "attention_weights", spy)
    q, k, v = (
        Tensor(normal(6, (2, 6, 3, 4))),
        Tensor(normal(7, (2, 2, 3, 4))),
        Tensor(normal(8, (2, 2, 3, 4))),
    )
    out, weights = scaled_dot_product_attention(q, k, v, enable_gqa=True)
    # a group's H/G query heads are the rows of one matrix: (B, G, (H/G)·L, d) against (B, G, S, d)
    assert seen == [((2, 2, 9, 4), (2, 2, 3, 4))]
    assert np.shares_memory(keys[0], k.value)  # the G heads themselves, not a copy
    bias = Tensor(normal(9, (1, 6, 3, 3)))  # a per-head bias (ALiBi): the 5-D reading
    scaled_dot_product_attention(q, k, v, bias=bias, enable_gqa=True)
    assert seen[1] == ((2, 2, 3, 3, 4), (2, 2, 1, 3, 4))  # (B, G, H/G, L, d), (B, G, 1, S, d)
    assert np.shares_memory(keys[1], k.value)
    assert out.shape == (2, 6, 3, 4) and weights.shape == (2, 6, 3, 3)


# --- G = H is the layer as it was, bit for bit --------------------------------------------------


def old_layer_numpy(x, wq, wk, wv, wo, heads, causal):
    """The pre-GQA computation, op by op: projections, split, scaled scores, softmax, merge."""
    batch, tokens, width = x.shape
    d = width // heads

    def project(w):  # Linear: one 2-D gemm over all rows, then split heads
        y = (x.reshape(-1, width) @ w).reshape(batch, tokens, width)
        return y.reshape(batch, tokens, heads, d).transpose(0, 2, 1, 3)

    q, k, v = project(wq), project(wk), project(wv)
    scale = 1.0 / math.sqrt(d)
    if scale != 0.0 and np.frexp(scale)[0] == 0.5 and k.size < q.size:
        scores = np.ascontiguousarray(q) @ np.swapaxes(k * scale, -1, -2)
    else:
        scores = np.ascontiguousarray(q * scale) @ np.swapaxes(np.ascontiguousarray(k), -1, -2)
    if causal:
        np.copyto(scores, -np.inf, where=np.triu(np.ones((tokens, tokens), bool), k=1))
    scores -= np.max(scores, axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores *= 1.0 / scores.sum(axis=-1, keepdims=True)
    heads_out = scores @ np.ascontiguousarray(v)  # (B, H, T, d)
    merged = heads_out.transpose(0, 2, 1, 3).reshape(batch, tokens, width)
    return (merged.reshape(-1, width) @ wo).reshape(batch, tokens, width), scores


@pytest.mark.parametrize(
    ("width", "heads", "causal"), [(8, 2, True), (12, 3, False), (16, 4, True)]
)
def test_g_equal_h_is_bit_identical_to_the_layer_before(width, heads, causal):
    x = normal(40, (2, 6, width))
    wq, wk, wv, wo = weights_for(41, width, heads, heads)
    expected, expected_weights = old_layer_numpy(x, wq, wk, wv, wo, heads, causal)
    for kv in (None, heads):
        layer = MultiHeadAttention.from_parameters(
            wq, wk, wv, wo, num_heads=heads, num_kv_heads=kv, causal=causal
        )
        output, weights = layer(Tensor(x), average_weights=False)
        assert np.array_equal(output.value, expected)
        assert np.array_equal(weights.value, expected_weights)


def test_default_and_explicit_g_equal_h_draw_the_same_weights():
    a = MultiHeadAttention(8, 4, rng=SplitMix64(9))
    b = MultiHeadAttention(8, 4, num_kv_heads=4, rng=SplitMix64(9))
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    for (_, p), (_, r) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert np.array_equal(p.value, r.value)
    assert repr(a) == "MultiHeadAttention(D=8, H=4, d_h=2, causal=False, name='attention')"


# --- gradients: central differences ------------------------------------------------------------


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_layer_gradients_match_finite_differences(kv_heads):
    rng = SplitMix64(50 + kv_heads)
    layer = MultiHeadAttention(8, 4, num_kv_heads=kv_heads, causal=True, rng=rng)
    x = Tensor(rng.normal((2, 3, 8)), requires_grad=True)
    result = gradcheck(lambda t: layer(t)[0], [x], name="GQA input")
    assert result.passed, result.message
    seed = rng.normal((2, 3, 8))
    result = gradcheck_parameters(
        lambda: (layer(Tensor(x.value))[0] * seed).sum(), layer.parameters(), atol=2e-6
    )
    assert result.passed, result.message


def test_grouped_scores_gradcheck_with_masks_and_a_learnable_bias():
    q = normal(60, (2, 4, 3, 2))
    k = normal(61, (2, 2, 3, 2))
    v = normal(62, (2, 2, 3, 2))
    bias = normal(63, (4, 3, 3))
    padding = np.array([[False, False, True], [False, False, False]])
    head_mask = SplitMix64(64).uniform(0.0, 1.0, (8, 3, 3)) < 0.25

    def attend(q, k, v, bias):
        out, weights = scaled_dot_product_attention(
            q,
            k,
            v,
            bias=bias,
            mask=head_mask,
            key_padding_mask=padding,
            causal=True,
            enable_gqa=True,
        )
        return out + weights.sum(axis=-1, keepdims=True)

    result = gradcheck(attend, [q, k, v, bias], name="grouped attention")
    assert result.passed, result.message


# --- refusals ------------------------------------------------------------------------------------


def test_kv_heads_must_divide_query_heads():
    rng = SplitMix64(70)
    state = rng.state
    with pytest.raises(
        ArgumentError, match=r"G must divide num_heads H.*G = 3, H = 4.*\[1, 2, 4\]"
    ):
        MultiHeadAttention(8, 4, num_kv_heads=3, rng=rng)
    with pytest.raises(ArgumentError, match="G = 8, H = 4"):
        MultiHeadAttention(8, 4, num_kv_heads=8, rng=rng)
    for bad in (0, -2, 2.0, True, "2"):
        with pytest.raises(
            ArgumentError, match=r"num_kv_heads must be (a positive integer|at least 1)"
        ):
            MultiHeadAttention(8, 4, num_kv_heads=bad, rng=rng)
    assert rng.state == state  # nothing drawn by a refused construction


def test_from_parameters_checks_grouped_widths():
    wq, wk, wv, wo = weights_for(71, 8, 4, 2)
    with pytest.raises(ShapeError, match=r"wk must be \[D, G·d_h\] = \[8, 2\]"):
        MultiHeadAttention.from_parameters(wq, wk, wv, wo, num_heads=4, num_kv_heads=1)
    with pytest.raises(ShapeError, match=r"wv must be \[D, G·d_h\] = \[8, 4\]"):
        MultiHeadAttention.from_parameters(wq, wk, wv[:, :2], wo, num_heads=4, num_kv_heads=2)
    with pytest.raises(ShapeError, match=r"wk must be a square \[D, D\]"):
        MultiHeadAttention.from_parameters(wq, wk, wv, wo, num_heads=4)  # G = H by default
    with pytest.raises(ShapeError, match="wq and wo must share one shape"):
        MultiHeadAttention.from_parameters(wq, wk, wv, wo[:4, :4], num_heads=4, num_kv_heads=2)


def test_scaled_dot_product_attention_refuses_ungrouped_head_counts():
    q, k, v = normal(72, (1, 4, 2, 2)), normal(73, (1, 3, 2, 2)), normal(74, (1, 3, 2, 2))
    with pytest.raises(ShapeError, match=r"share batch and head.*enable_gqa=True"):
        scaled_dot_product_attention(q, k[:, :2], v[:, :2])
    with pytest.raises(ShapeError, match=r"G must divide H.*H = 4.*G = 3"):
        scaled_dot_product_attention(q, k, v, enable_gqa=True)
    with pytest.raises(ShapeError, match="k and v the head axis G"):
        scaled_dot_product_attention(q, k[:, :2], v[:, :1], enable_gqa=True)
    with pytest.raises(ArgumentError, match="enable_gqa must be True or False"):
        scaled_dot_product_attention(q, k, v, enable_gqa=1)


def test_cached_forward_stores_g_heads_and_reads_them_grouped():
    """The cache is handed k, v of G heads [B, G, L, d_h]; the output equals the uncached one."""
    seen = []

    class Cache:
        query_positions = np.array([[0, 1, 2]])

        def append(self, k, v):
            seen.append((k.shape, v.shape))
            return k, v, np.triu(np.ones((1, 3, 3), dtype=bool), k=1)  # keys after the query

    layer = MultiHeadAttention(8, 4, num_kv_heads=2, causal=True, rng=SplitMix64(75))
    x = Tensor(normal(76, (1, 3, 8)))
    cached, _ = layer(x, cache=Cache())
    assert seen == [((1, 2, 3, 2), (1, 2, 3, 2))]
    np.testing.assert_allclose(cached.value, layer(x)[0].value, rtol=0, atol=1e-14)


def test_empty_key_axis_gives_zero_outputs():
    q, k, v = normal(77, (1, 4, 2, 2)), np.zeros((1, 2, 0, 2)), np.zeros((1, 2, 0, 3))
    out, weights = scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert out.shape == (1, 4, 2, 3) and np.all(out.value == 0.0)
    assert weights.shape == (1, 4, 2, 0)
