"""The KV cache with G < H key/value heads and a sliding window's rolling buffer."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, TokenError
from llm_from_scratch.generation import KVCache, decode_step, generate, prefill
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64

VOCAB, WIDTH, LAYERS, HEADS = 17, 16, 2, 4  # d_h = 4


def model(positions="rope", **options):
    return Decoder(
        VOCAB, WIDTH, LAYERS, HEADS, 24, positions=positions, rng=SplitMix64(5), **options
    )


def tokens(count, seed=3):
    rng = SplitMix64(seed)
    return (rng.u64_array(count) % np.uint64(VOCAB)).astype(np.int64)


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_cache_memory_is_two_n_t_g_dh_eight_bytes(kv_heads):
    m = model(num_kv_heads=kv_heads)
    batch, capacity = 3, 21
    cache = KVCache(m, batch, capacity)
    expected = 2 * LAYERS * capacity * kv_heads * (WIDTH // HEADS) * 8 * batch  # 2·N·T·G·d_h·8
    assert sum(a.nbytes for layer in cache.layers for a in (layer.keys, layer.values)) == expected
    assert cache.nbytes == expected
    assert cache.shapes()[0][0] == (batch, kv_heads, capacity, WIDTH // HEADS)


def _stepwise(m, prompt, steps, capacity):
    """Cached logits per step and the uncached decoder's logits at the same position."""
    forced = tokens(steps)
    cache = KVCache(m, 1, capacity)
    sequence = list(prompt)
    with_cache = [prefill(m, cache, np.array([sequence])).value[0, -1]]
    without = [m(np.array([sequence])).value[0, -1]]
    for t in range(steps):
        sequence.append(int(forced[t]))
        with_cache.append(decode_step(m, cache, [sequence[-1]], [len(sequence) - 1]).value[0])
        without.append(m(np.array([sequence])).value[0, -1])
    return np.array(with_cache), np.array(without), cache


@pytest.mark.parametrize("positions", ["rope", "alibi", "sinusoidal", None])
@pytest.mark.parametrize("kv_heads", [1, 2])
def test_grouped_cache_equals_the_uncached_decoder(positions, kv_heads):
    m = model(positions, num_kv_heads=kv_heads, qk_norm=positions == "rope")
    cached, plain, _ = _stepwise(m, [1, 2, 3, 4, 5], 12, 18)
    assert np.abs(cached - plain).max() < 1e-12


@pytest.mark.parametrize("positions", ["rope", "alibi", "sinusoidal", None])
def test_windowed_cache_equals_the_uncached_decoder_far_past_the_window(positions):
    window = 3
    m = model(positions, num_kv_heads=2, window=window)
    steps = 4 * window + 2  # T > 3w
    cached, plain, cache = _stepwise(m, [4, 1, 6, 2, 7], steps, 5 + steps + 1)
    assert len(cached) > 3 * window
    assert np.abs(cached - plain).max() < 1e-12
    # the window matters: the same model without it reads differently past w
    full = model(positions, num_kv_heads=2)
    assert (
        np.abs(
            full(np.array([[4, 1, 6, 2, 7]])).value - m(np.array([[4, 1, 6, 2, 7]])).value
        ).max()
        > 1e-6
    )
    for layer in cache.layers:  # at most w positions held per layer
        assert layer.keys.shape[2] == window and layer.values.shape[2] == window


def test_rolling_memory_is_flat_however_long_the_capacity():
    m = model(window=4, num_kv_heads=1)
    sizes = {KVCache(m, 2, capacity).nbytes for capacity in (5, 50, 5000)}
    assert sizes == {2 * LAYERS * 2 * 1 * 4 * 4 * 8}  # 2 · N · B · G · w · d_h · 8
    assert KVCache(m, 2, 3).nbytes == 2 * LAYERS * 2 * 1 * 3 * 4 * 8  # capacity below w


def test_windowed_generation_with_ragged_prompts_matches_uncached():
    """Prompts longer than w and of different lengths: each row keeps its own last w keys."""
    m = model("rope", window=3, num_kv_heads=2)
    prompts = [[3, 1, 4, 1, 5, 9, 2], [2, 6], [5, 3, 5, 8]]
    kwargs = {"max_new_tokens": 15, "temperature": 1.2, "keep_logits": True}
    a = generate(m, prompts, rng=SplitMix64(9), **kwargs)
    b = generate(m, prompts, rng=SplitMix64(9), use_cache=False, **kwargs)
    assert all(np.array_equal(x, y) for x, y in zip(a.sequences, b.sequences, strict=True))
    worst = max(np.abs(x - y).max() for x, y in zip(a.step_logits, b.step_logits, strict=True))
    assert worst < 1e-12
    assert a.cache.layers[0].keys.shape[2] == 3


def test_rolling_buffer_refuses_a_rewind_past_the_window():
    m = model(window=2)
    cache = KVCache(m, 1, 10)
    prefill(m, cache, np.array([[1, 2, 3, 4, 5]]))
    before = [layer.keys.copy() for layer in cache.layers]
    with pytest.raises(TokenError, match="rolling buffer"):
        decode_step(m, cache, [1], [2])  # needs positions 1 and 2: overwritten
    assert all(
        np.array_equal(a, layer.keys) for a, layer in zip(before, cache.layers, strict=True)
    )
    decode_step(m, cache, [1], [4])  # re-running the last position is fine


def test_a_cache_without_the_layers_window_is_refused():
    m = model(window=2)
    attention = m.blocks[0].attention

    class NoWindow:
        query_positions = np.array([[0]])

        def append(self, k, v):  # pragma: no cover - refused before
            raise AssertionError

    x = np.zeros((1, 1, WIDTH))
    with pytest.raises(ArgumentError, match="sliding window"):
        attention(x, cache=NoWindow())


def test_gpt2_and_mixtral_style_decoders_cache_exactly():
    """Learned positions with biases and gelu_tanh, and a Mixtral MoE with G < H and a window."""
    gpt2 = model(
        "learned", max_positions=32, attention_bias=True, ffn="gelu_tanh", tie_embeddings=True
    )
    mixtral = model(
        "rope", norm="rms", ffn="mixtral_moe", num_experts=3, top_k=2, num_kv_heads=2, window=4,
        rope_theta=1e6,
    )  # fmt: skip
    for m in (gpt2, mixtral):
        cached, plain, _ = _stepwise(m, [1, 2, 3], 14, 18)
        assert np.abs(cached - plain).max() < 1e-12
