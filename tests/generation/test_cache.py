"""The KV cache against the uncached decoder: logits equal at every step, memory by formula."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, TokenError
from llm_from_scratch.generation import KVCache, cache_bytes, decode_step, generate, prefill
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64

SCHEMES = ["rope", "alibi", "sinusoidal", None]


def model(positions="rope", **kwargs):
    options = {"num_layers": 2, "num_heads": 2, "hidden_width": 24} | kwargs
    return Decoder(
        17,
        12,
        options.pop("num_layers"),
        options.pop("num_heads"),
        options.pop("hidden_width"),
        positions=positions,
        rng=SplitMix64(11),
        **options,
    )


def forced_tokens(rows, steps, vocab, seed=4):
    rng = SplitMix64(seed)
    return (rng.u64_array(rows * steps) % np.uint64(vocab)).astype(np.int64).reshape(rows, steps)


@pytest.mark.parametrize("positions", SCHEMES)
def test_cached_logits_equal_the_uncached_decoders_at_every_step(positions):
    """Rows of lengths 5, 1 and 3 fed 30 forced tokens: each step's logits to 1e-12."""
    m = model(positions)
    prompts = [[1, 2, 3, 4, 5], [6], [7, 8, 9]]
    lengths = np.array([5, 1, 3])
    steps = 30
    extra = forced_tokens(3, steps, m.vocab_size)
    ids = np.zeros((3, 5), dtype=np.int64)
    for b, p in enumerate(prompts):
        ids[b, : len(p)] = p
    cache = KVCache(m, 3, 5 + steps + 1)
    logits = prefill(m, cache, ids).value  # (B, T, V)
    full = [list(p) for p in prompts]
    reference = m(ids, lengths).value
    for b in range(3):  # every valid prompt position, not only the last
        assert np.abs(logits[b, : lengths[b]] - reference[b, : lengths[b]]).max() < 1e-12
    worst = 0.0
    for t in range(steps):
        positions_now = np.array([len(f) for f in full])
        step = decode_step(m, cache, extra[:, t], positions_now).value  # (B, V)
        for b in range(3):
            full[b].append(int(extra[b, t]))
        padded = np.zeros((3, max(map(len, full))), dtype=np.int64)
        for b, f in enumerate(full):
            padded[b, : len(f)] = f
        truth = m.next_token_logits(padded, np.array([len(f) for f in full])).value
        worst = max(worst, float(np.abs(step - truth).max()))
    assert worst < 1e-12


@pytest.mark.parametrize(
    ("positions", "options"),
    [
        ("rope", {"norm": "rms", "ffn": "swiglu"}),
        ("alibi", {"norm": "rms", "ffn": "swiglu"}),
        ("sinusoidal", {"order": "post"}),
        ("rope", {"order": "post", "tie_embeddings": False}),
    ],
)
def test_generate_with_and_without_cache_agree(positions, options):
    m = model(positions, **options)
    prompts = [[3, 1, 4, 1, 5, 9], [2, 6], [5, 3, 5]]
    kwargs = {"max_new_tokens": 25, "temperature": 1.3, "top_k": 9, "keep_logits": True}
    a = generate(m, prompts, rng=SplitMix64(7), **kwargs)
    b = generate(m, prompts, rng=SplitMix64(7), use_cache=False, **kwargs)
    for x, y in zip(a.sequences, b.sequences, strict=True):
        assert np.array_equal(x, y)
    assert len(a.step_logits) == 25
    for x, y in zip(a.step_logits, b.step_logits, strict=True):
        assert np.abs(x - y).max() < 1e-12


def test_rope_cache_holds_each_key_rotated_by_its_own_absolute_position():
    """Layer 0's cached keys = W_K·LN(embedding) rotated by t·ω at slot t, after two steps."""
    m = model("rope")
    cache = KVCache(m, 1, 8)
    prefill(m, cache, np.array([[1, 2, 3]]))
    decode_step(m, cache, [4], [3])
    decode_step(m, cache, [5], [4])
    block = m.blocks[0]
    raw = block.attention.key(block.attention_norm(m.embedding(np.array([[1, 2, 3, 4, 5]]))))
    raw = raw.value.reshape(1, 5, 2, 6).transpose(0, 2, 1, 3)  # (B, H, T, d_h), unrotated
    angles = np.arange(5)[:, None] * block.attention.positions.frequencies  # (T, d_h/2)
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = raw[..., 0::2], raw[..., 1::2]  # interleaved pairs (2j, 2j + 1)
    expected = np.empty_like(raw)
    expected[..., 0::2], expected[..., 1::2] = a * cos - b * sin, a * sin + b * cos
    np.testing.assert_allclose(cache.layers[0].keys[:, :, :5], expected, atol=1e-14)
    assert not np.allclose(cache.layers[0].keys[:, :, 1:5], raw[:, :, 1:5])  # rotated


def test_cache_memory_is_two_layers_positions_width_eight_bytes_per_row():
    m = model("rope", num_layers=3)
    cache = KVCache(m, batch=4, capacity=21)
    per_row = 2 * 3 * 21 * 12 * 8
    assert cache.nbytes == 4 * per_row == cache_bytes(3, 21, 12, batch=4)
    assert cache.shapes() == [((4, 2, 21, 6), (4, 2, 21, 6))] * 3
    assert cache_bytes(12, 1024, 768) == 150_994_944  # GPT-2 small, float64: 144 MiB per row


def test_cache_refuses_positions_outside_its_capacity():
    m = model("rope")
    cache = KVCache(m, 1, 4)
    with pytest.raises(TokenError, match=r"\[0, 4\)"):
        cache.start(np.array([[4]]))
    with pytest.raises(ArgumentError, match="B = 1"):
        cache.start(np.array([[0], [1]]))
    with pytest.raises(ArgumentError, match="capacity"):
        KVCache(m, 1, 0)


def test_cached_decoder_refuses_lengths_and_masks():
    m = model("rope")
    cache = KVCache(m, 1, 4)
    cache.start(np.array([[0, 1]]))
    with pytest.raises(ArgumentError, match="lengths=None"):
        m(np.array([[1, 2]]), np.array([2]), cache=cache)
    with pytest.raises(ArgumentError, match="DecoderCache"):
        m(np.array([[1, 2]]), cache=object())
    attention = m.blocks[0].attention
    with pytest.raises(ArgumentError, match="mask=None"):
        attention(np.zeros((1, 2, 12)), mask=np.zeros((2, 2), bool), cache=cache.layer(0))


def test_cache_and_generate_need_a_decoder():
    with pytest.raises(ArgumentError, match="Decoder"):
        KVCache(object(), 1, 4)
    with pytest.raises(ArgumentError, match="Decoder"):
        generate(object(), [[1]], max_new_tokens=1, do_sample=False)
