"""RoPE as the real families configure it: rope_theta, Llama 3's scaling, the two pairings.

Truth: θ^(−2j/d_h) by math.pow, Llama 3's published rule written out below per frequency with
if/elif/else (Meta's ``apply_scaling`` in llama-models, ``_compute_llama3_parameters`` in
transformers), and Hugging Face's ``rotate_half`` and GPT-J's ``rotate_every_two`` by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError, ShapeError, WidthError
from llm_from_scratch.nn.positions import (
    RoPEPositions,
    RotaryEmbedding,
    llama3_scaled_frequencies,
    pair_frequencies,
    rope_frequencies,
)
from llm_from_scratch.random import SplitMix64

LLAMA31 = {  # meta-llama/Llama-3.1-8B config.json: rope_theta 500000.0, head_dim 128
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3",
}


def published_rule(omega, factor, low, high, original):
    """Llama 3's rule, one frequency at a time: wavelength λ = 2π/ω."""
    out = []
    for w in omega:
        wavelength = 2.0 * math.pi / w
        if wavelength < original / high:
            out.append(w)  # high frequency: unchanged
        elif wavelength > original / low:
            out.append(w / factor)  # low frequency: stretched
        else:
            smooth = (original / wavelength - low) / (high - low)
            out.append((1.0 - smooth) * w / factor + smooth * w)
    return np.array(out)


def llama31_omega() -> np.ndarray:
    return np.array([math.pow(500000.0, -2.0 * j / 128) for j in range(64)])


def test_theta_gives_theta_to_the_minus_2j_over_d():
    for theta in (10000.0, 500000.0, 1000000.0):
        expected = [math.pow(theta, -2.0 * j / 8) for j in range(4)]
        np.testing.assert_allclose(rope_frequencies(8, theta), expected, rtol=1e-15)
    np.testing.assert_array_equal(rope_frequencies(8), pair_frequencies(8, 10000.0))
    np.testing.assert_array_equal(
        rope_frequencies(8, 500000.0, {"rope_type": "default"}), rope_frequencies(8, 500000.0)
    )


def test_llama3_scaling_equals_the_published_rule_for_llama_3_1():
    omega = llama31_omega()
    got = rope_frequencies(128, 500000.0, LLAMA31)
    expected = published_rule(omega, 8.0, 1.0, 4.0, 8192)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    wavelength = 2.0 * math.pi / omega
    kept, stretched = wavelength < 2048.0, wavelength > 8192.0
    between = ~kept & ~stretched
    assert kept.sum() and stretched.sum() and between.sum()  # all three regimes occur
    np.testing.assert_allclose(got[kept], omega[kept], rtol=2e-16)  # untouched (up to pow ulps)
    np.testing.assert_allclose(got[stretched], omega[stretched] / 8.0, rtol=1e-15)


def test_llama3_scaling_numbers_at_the_three_regimes():
    """ω = 1 (λ = 2π) kept; ω = 2π/16384 stretched to 2π/131072; λ = 4096 half way: s = 1/3."""
    got = llama3_scaled_frequencies(
        [1.0, 2 * math.pi / 16384, 2 * math.pi / 4096],
        factor=8.0,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=8192,
    )
    assert got[0] == 1.0
    assert got[1] == pytest.approx(2 * math.pi / 131072, rel=1e-15)
    w = 2 * math.pi / 4096  # s = (8192/4096 − 1)/(4 − 1) = 1/3: ω′ = (2/3)(ω/8) + ω/3 = 5ω/12
    assert got[2] == pytest.approx(5.0 * w / 12.0, rel=1e-14)


def test_llama3_boundaries_belong_to_the_interpolated_band_and_are_continuous():
    """λ = L/h gives s = 1 (ω kept), λ = L/l gives s = 0 (ω/f): no jump at either edge."""
    options = dict(
        factor=8.0,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=8192,
    )
    edges = [2 * math.pi / 2048, 2 * math.pi / 8192]
    got = llama3_scaled_frequencies(edges, **options)
    assert got[0] == pytest.approx(edges[0], rel=1e-14)
    assert got[1] == pytest.approx(edges[1] / 8.0, rel=1e-14)
    near = [edges[0] * (1 + 1e-9), edges[0] * (1 - 1e-9), edges[1] * (1 + 1e-9)]
    np.testing.assert_allclose(llama3_scaled_frequencies(near, **options)[:2], edges[0], rtol=1e-8)


def test_rotary_embedding_with_llama3_scaling_rotates_by_t_times_scaled_omega():
    omega = published_rule(
        [math.pow(500000.0, -2.0 * j / 8) for j in range(4)], 8.0, 1.0, 4.0, 8192
    )
    rope = RotaryEmbedding(8, pairing="half", theta=500000.0, scaling=LLAMA31)
    x = SplitMix64(4).normal((3, 8))
    out = rope(Tensor(x), [0.0, 5.0, 70000.0]).value
    for row, t in enumerate([0.0, 5.0, 70000.0]):
        for j in range(4):
            a, b = x[row, j], x[row, j + 4]
            c, s = math.cos(t * omega[j]), math.sin(t * omega[j])
            assert out[row, j] == pytest.approx(a * c - b * s, abs=1e-12)
            assert out[row, j + 4] == pytest.approx(a * s + b * c, abs=1e-12)
    assert "scaling=" in repr(rope) and rope.theta == 500000.0


def test_theta_and_base_are_one_number():
    x = SplitMix64(2).normal((5, 6))
    by_base = RotaryEmbedding(6, base=1e6)(Tensor(x)).value
    by_theta = RotaryEmbedding(6, theta=1e6)(Tensor(x)).value
    np.testing.assert_array_equal(by_base, by_theta)
    assert RoPEPositions(6, theta=1e6).theta == 1e6
    with pytest.raises(ArgumentError, match=r"base=100.0 and theta=1000000.0.*only one"):
        RotaryEmbedding(6, base=100.0, theta=1e6)
    with pytest.raises(ArgumentError, match="rope theta must be greater than 0"):
        RotaryEmbedding(6, theta=-1.0)
    assert repr(RotaryEmbedding(4)) == (
        "RotaryEmbedding(head_width=4, base=10000, pairing='interleaved', name='rope')"
    )


def rotate_half(x):
    """Hugging Face's rotate_half: cat(−x₂, x₁) of the two halves."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rotate_every_two(x):
    """GPT-J's rotate_every_two: (−x_{2i+1}, x_{2i}) in each interleaved pair."""
    return np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)


def test_half_pairing_is_hugging_face_rotate_half():
    """q cos + rotate_half(q) sin with cos = cat(tω, tω), as in apply_rotary_pos_emb."""
    width, theta = 8, 1e6
    x = SplitMix64(7).normal((2, 5, width))  # [B, T, d_h]
    inv_freq = 1.0 / theta ** (np.arange(0, width, 2) / width)
    freqs = np.arange(5.0)[:, None] * inv_freq[None, :]  # (T, d/2)
    emb = np.concatenate([freqs, freqs], axis=-1)
    expected = x * np.cos(emb) + rotate_half(x) * np.sin(emb)
    out = RotaryEmbedding(width, pairing="half", theta=theta)(Tensor(x)).value
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-14)
    interleaved = RotaryEmbedding(width, pairing="interleaved", theta=theta)(Tensor(x)).value
    assert np.abs(interleaved - expected).max() > 0.1  # the other pairing is another function


def test_interleaved_pairing_is_gpt_j_rotate_every_two():
    width = 6
    x = SplitMix64(8).normal((4, width))
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, width, 2) / width)
    freqs = np.arange(4.0)[:, None] * inv_freq[None, :]
    emb = np.repeat(freqs, 2, axis=-1)  # repeat_interleave: (ω₀, ω₀, ω₁, ω₁, …)
    expected = x * np.cos(emb) + rotate_every_two(x) * np.sin(emb)
    out = RotaryEmbedding(width, pairing="interleaved")(Tensor(x)).value
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("kind", ["linear", "dynamic", "yarn", "longrope", "su", None, 3])
def test_other_rope_types_are_refused_by_name(kind):
    with pytest.raises(ArgumentError, match=rf"rope_type must be one of .*got {kind!r}"):
        rope_frequencies(8, 10000.0, {"rope_type": kind, "factor": 2.0})
    with pytest.raises(ArgumentError, match="rope_type must be one of"):
        RotaryEmbedding(8, scaling={"type": kind, "factor": 2.0})


def test_old_type_key_is_read_and_a_disagreeing_pair_refused():
    old = {k: v for k, v in LLAMA31.items() if k != "rope_type"} | {"type": "llama3"}
    np.testing.assert_array_equal(
        rope_frequencies(128, 500000.0, old), rope_frequencies(128, 500000.0, LLAMA31)
    )
    with pytest.raises(ArgumentError, match="two different kinds"):
        rope_frequencies(8, 10000.0, LLAMA31 | {"type": "linear"})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"factor": 0.5}, "llama3 factor must be at least 1"),
        ({"factor": float("nan")}, "llama3 factor must be finite"),
        ({"low_freq_factor": 0.0}, "low_freq_factor must be greater than 0"),
        ({"high_freq_factor": 1.0}, "high_freq_factor > low_freq_factor"),
        ({"original_max_position_embeddings": 8192.0}, "must be a positive integer"),
        ({"original_max_position_embeddings": 0}, "must be at least 1"),
        ({"attention_factor": 1.0}, r"got also \['attention_factor'\]"),
    ],
)
def test_bad_llama3_values_are_refused_at_construction(change, message):
    with pytest.raises(ArgumentError, match=message):
        RotaryEmbedding(8, scaling=LLAMA31 | change)


def test_missing_keys_and_non_dicts_are_refused():
    partial = {k: v for k, v in LLAMA31.items() if k != "factor"}
    with pytest.raises(ArgumentError, match=r"missing \['factor'\]"):
        rope_frequencies(8, 10000.0, partial)
    with pytest.raises(ArgumentError, match="rope_scaling must be None or a dict"):
        rope_frequencies(8, 10000.0, [("rope_type", "llama3")])
    with pytest.raises(WidthError, match="head_width must be even"):
        rope_frequencies(7)
    with pytest.raises(ShapeError, match="non-empty vector"):
        llama3_scaled_frequencies(
            np.ones((2, 2)),
            factor=8.0,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
            original_max_position_embeddings=8192,
        )
    with pytest.raises(ArgumentError, match="must be positive"):
        llama3_scaled_frequencies(
            [1.0, 0.0],
            factor=8.0,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
            original_max_position_embeddings=8192,
        )


def test_the_callers_dict_is_copied():
    scaling = dict(LLAMA31)
    rope = RotaryEmbedding(8, scaling=scaling)
    scaling["factor"] = 32.0
    assert rope.scaling["factor"] == 8.0
