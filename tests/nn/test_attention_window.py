"""Sliding-window causal attention: query i sees keys j with i − w < j <= i (Mistral's window)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.nn import MultiHeadAttention, RoPEPositions, scaled_dot_product_attention
from llm_from_scratch.nn.attention import sliding_window_mask
from llm_from_scratch.random import SplitMix64


def normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return SplitMix64(seed).normal(shape)


def window_blocked(query_len: int, key_len: int, window: int) -> np.ndarray:
    """The definition, entry by entry: query i sits at p = S − L + i and sees p − w < j <= p."""
    blocked = np.ones((query_len, key_len), dtype=bool)
    for i in range(query_len):
        p = key_len - query_len + i
        for j in range(key_len):
            if p - window < j <= p:
                blocked[i, j] = False
    return blocked


def attention_numpy(q, k, v, blocked):
    """softmax(q kᵀ/√d, blocked → weight 0) v, row by row."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    weights = np.zeros_like(scores)
    for index in np.ndindex(scores.shape[:-1]):
        open_keys = ~blocked[index[-1]]
        row = scores[index]
        e = np.where(open_keys, np.exp(row - row[open_keys].max()), 0.0)
        weights[index] = e / e.sum()
    return weights @ v, weights


@pytest.mark.parametrize(
    ("queries", "keys", "window"),
    [(5, 5, 1), (5, 5, 2), (5, 5, 3), (6, 6, 6), (3, 7, 2), (1, 4, 2)],
)
def test_mask_matches_the_definition(queries, keys, window):
    assert np.array_equal(
        sliding_window_mask(queries, keys, window), window_blocked(queries, keys, window)
    )


def test_each_query_sees_min_of_w_and_its_position_plus_one_keys():
    mask = sliding_window_mask(7, 7, 3)
    assert (~mask).sum(axis=1).tolist() == [1, 2, 3, 3, 3, 3, 3]


@pytest.mark.parametrize("window", [1, 2, 4])
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_layer_equals_numpy_with_the_window_mask(window, kv_heads):
    heads, width, tokens = 4, 8, 6
    d = width // heads
    group = heads // kv_heads
    x = normal(1, (2, tokens, width))
    wq, wo = normal(2, (width, width)), normal(3, (width, width))
    wk, wv = normal(4, (width, kv_heads * d)), normal(5, (width, kv_heads * d))
    layer = MultiHeadAttention.from_parameters(
        wq, wk, wv, wo, num_heads=heads, num_kv_heads=kv_heads, causal=True, window=window
    )
    out, weights = layer(Tensor(x), average_weights=False)
    blocked = window_blocked(tokens, tokens, window)
    heads_out, expected_weights = [], []
    for h in range(heads):
        g = h // group
        o, w = attention_numpy(
            x @ wq[:, h * d : (h + 1) * d],
            x @ wk[:, g * d : (g + 1) * d],
            x @ wv[:, g * d : (g + 1) * d],
            blocked,
        )
        heads_out.append(o)
        expected_weights.append(w)
    expected = np.concatenate(heads_out, axis=-1) @ wo
    np.testing.assert_allclose(out.value, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights.value, np.stack(expected_weights, 1), rtol=0, atol=1e-14)
    assert np.all(weights.value[..., blocked] == 0.0)


def test_window_one_reads_only_the_own_value():
    """w = 1: every weight is 1 on the diagonal, so the output is x W_V W_O exactly per row."""
    rng = SplitMix64(6)
    layer = MultiHeadAttention(6, 3, causal=True, window=1, rng=rng)
    x = rng.normal((2, 5, 6))
    out, weights = layer(Tensor(x), average_weights=False)
    assert np.array_equal(weights.value, np.broadcast_to(np.eye(5), (2, 3, 5, 5)))
    np.testing.assert_allclose(
        out.value, x @ layer.value.weight.value @ layer.output.weight.value, atol=1e-13
    )


@pytest.mark.parametrize("extra", [0, 1, 5])
def test_window_at_least_t_equals_full_causal_exactly(extra):
    tokens = 5
    rng = SplitMix64(7)
    full = MultiHeadAttention(8, 2, causal=True, positions=RoPEPositions(4), rng=rng)
    windowed = MultiHeadAttention.from_parameters(
        *(p.value for p in full.parameters()),
        num_heads=2,
        causal=True,
        window=tokens + extra,
        positions=RoPEPositions(4),
    )
    x = rng.normal((2, tokens, 8))
    a, wa = full(Tensor(x), average_weights=False)
    b, wb = windowed(Tensor(x), average_weights=False)
    assert np.array_equal(a.value, b.value) and np.array_equal(wa.value, wb.value)


def test_sdpa_window_with_fewer_queries_than_keys():
    q, k, v = normal(8, (1, 2, 2, 3)), normal(9, (1, 2, 6, 3)), normal(10, (1, 2, 6, 3))
    out, weights = scaled_dot_product_attention(q, k, v, causal=True, window=3)
    expected, expected_weights = attention_numpy(q, k, v, window_blocked(2, 6, 3))
    np.testing.assert_allclose(out.value, expected, atol=1e-13)
    np.testing.assert_allclose(weights.value, expected_weights, atol=1e-15)


def test_outputs_ignore_keys_outside_the_window():
    """Changing token 0 leaves every output at i >= w unchanged (it lies outside their window)."""
    rng = SplitMix64(11)
    layer = MultiHeadAttention(8, 2, causal=True, window=3, rng=rng)
    x = rng.normal((1, 6, 8))
    y = x.copy()
    y[0, 0] += 10.0
    a, b = layer(Tensor(x))[0].value, layer(Tensor(y))[0].value
    assert np.array_equal(a[0, 3:], b[0, 3:])
    assert np.abs(a[0, :3] - b[0, :3]).min() > 1e-6


def test_windowed_gradients_match_finite_differences():
    rng = SplitMix64(12)
    layer = MultiHeadAttention(8, 4, num_kv_heads=2, causal=True, window=2, rng=rng)
    x = Tensor(rng.normal((2, 4, 8)), requires_grad=True)
    result = gradcheck(lambda t: layer(t)[0], [x], name="windowed attention input")
    assert result.passed, result.message
    seed = rng.normal((2, 4, 8))
    result = gradcheck_parameters(
        lambda: (layer(Tensor(x.value))[0] * seed).sum(), layer.parameters(), atol=2e-6
    )
    assert result.passed, result.message


@pytest.mark.parametrize("bad", [0, -1, 2.5, 3.0, True, np.bool_(True), "3"])
def test_bad_windows_are_refused_before_anything_is_drawn(bad):
    rng = SplitMix64(13)
    state = rng.state
    with pytest.raises(ArgumentError, match="window must be"):
        MultiHeadAttention(8, 2, causal=True, window=bad, rng=rng)
    assert rng.state == state
    q = normal(14, (1, 2, 3, 4))
    with pytest.raises(ArgumentError, match="window must be"):
        scaled_dot_product_attention(q, q, q, causal=True, window=bad)
    with pytest.raises(ArgumentError, match="window must be"):
        sliding_window_mask(3, 3, bad)


def test_window_without_causal_is_refused():
    rng = SplitMix64(15)
    with pytest.raises(ArgumentError, match=r"window needs causal=True; got window=2"):
        MultiHeadAttention(8, 2, window=2, rng=rng)
    q = normal(16, (1, 2, 3, 4))
    with pytest.raises(ArgumentError, match="window needs causal=True"):
        scaled_dot_product_attention(q, q, q, window=2)
    w = normal(17, (8, 8))
    with pytest.raises(ArgumentError, match="window needs causal=True"):
        MultiHeadAttention.from_parameters(w, w, w, w, num_heads=2, window=2)


def test_window_accepts_numpy_integers_and_keeps_none_as_full_causal():
    layer = MultiHeadAttention(8, 2, causal=True, window=np.int64(3), rng=SplitMix64(18))
    assert layer.window == 3 and type(layer.window) is int and "window=3" in repr(layer)
    assert MultiHeadAttention(8, 2, causal=True, rng=SplitMix64(18)).window is None
    with pytest.raises(ShapeError, match="L <= S"):
        sliding_window_mask(4, 3, 2)


def test_cached_forward_refuses_a_cache_without_the_window():
    class Cache:
        query_positions = np.zeros((1, 1), dtype=np.int64)

        def append(self, k, v):  # pragma: no cover - refused before any append
            raise AssertionError("append reached")

    layer = MultiHeadAttention(8, 2, causal=True, window=2, rng=SplitMix64(19))
    with pytest.raises(ArgumentError, match=r"sliding window of 2 positions.*cache.window = 2"):
        layer(Tensor(normal(20, (1, 1, 8))), cache=Cache())
