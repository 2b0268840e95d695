"""QK-norm: RMSNorm (gain [d_h] shared by heads, ε = 1e-6) on each head's q and k, before RoPE."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.nn import MultiHeadAttention, RoPEPositions
from llm_from_scratch.random import SplitMix64


def normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return SplitMix64(seed).normal(shape)


def rms_numpy(x: np.ndarray, gain: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """γ ⊙ x / √(mean(x²) + ε) over the last axis."""
    return gain * x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


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


def qknorm_numpy(x, wq, wk, wv, wo, heads, kv_heads, gq, gk, *, norm_first=True, rope=True):
    """Causal attention per head, q and k normalised then rotated (or rotated then normalised)."""
    width = x.shape[-1]
    d = width // heads
    group = heads // kv_heads
    tokens = x.shape[1]
    blocked = np.triu(np.ones((tokens, tokens), dtype=bool), k=1)
    outputs = []
    for h in range(heads):
        g = h // group
        q = x @ wq[:, h * d : (h + 1) * d]
        k = x @ wk[:, g * d : (g + 1) * d]
        v = x @ wv[:, g * d : (g + 1) * d]
        if norm_first:
            q, k = rms_numpy(q, gq), rms_numpy(k, gk)
            if rope:
                q, k = rope_numpy(q), rope_numpy(k)
        else:
            q, k = rms_numpy(rope_numpy(q), gq), rms_numpy(rope_numpy(k), gk)
        scores = np.where(blocked, -np.inf, q @ np.swapaxes(k, -1, -2) / math.sqrt(d))
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        outputs.append((e / e.sum(axis=-1, keepdims=True)) @ v)
    return np.concatenate(outputs, axis=-1) @ wo


def layer_and_weights(seed, width, heads, kv_heads, *, rope=True, scale=1.0):
    d = width // heads
    wq, wo = normal(seed, (width, width)), normal(seed + 1, (width, width))
    wk, wv = normal(seed + 2, (width, kv_heads * d)), normal(seed + 3, (width, kv_heads * d))
    gq, gk = normal(seed + 4, (d,)), normal(seed + 5, (d,))
    layer = MultiHeadAttention.from_parameters(
        wq * scale,
        wk * scale,
        wv,
        wo,
        num_heads=heads,
        num_kv_heads=kv_heads,
        causal=True,
        qk_norm=True,
        query_norm_gain=gq,
        key_norm_gain=gk,
        positions=RoPEPositions(d) if rope else None,
    )
    return layer, (wq * scale, wk * scale, wv, wo, gq, gk)


@pytest.mark.parametrize(("heads", "kv_heads"), [(2, 2), (4, 2), (4, 1)])
@pytest.mark.parametrize("input_scale", [1.0, 1e-4])  # at 1e-4 the ε = 1e-6 is felt
def test_equals_numpy_norm_then_rope(heads, kv_heads, input_scale):
    layer, (wq, wk, wv, wo, gq, gk) = layer_and_weights(1, 8, heads, kv_heads)
    x = normal(9, (2, 5, 8)) * input_scale
    out, _ = layer(Tensor(x))
    expected = qknorm_numpy(x, wq, wk, wv, wo, heads, kv_heads, gq, gk)
    np.testing.assert_allclose(out.value, expected, rtol=1e-12, atol=1e-13 * input_scale)


def test_epsilon_is_qwen3s_one_in_a_million():
    layer, (wq, wk, wv, wo, gq, gk) = layer_and_weights(2, 8, 2, 2)
    assert layer.query_norm.eps == 1e-6 and layer.key_norm.eps == 1e-6
    x = normal(10, (1, 4, 8)) * 1e-4  # mean square of q ~ 1e-7: ε changes the result
    out = layer(Tensor(x))[0].value
    plain = MultiHeadAttention.from_parameters(wq, wk, wv, wo, num_heads=2, causal=True)
    assert not np.allclose(out, plain(Tensor(x))[0].value, atol=1e-9)  # it does normalise
    at_qwen_eps = np.abs(out - qknorm_numpy(x, wq, wk, wv, wo, 2, 2, gq, gk)).max()
    at_larger_eps = np.abs(out - _with_eps(x, wq, wk, wv, wo, gq, gk, 1e-5)).max()
    assert at_qwen_eps < 1e-13 and at_larger_eps > 1e-8


def _with_eps(x, wq, wk, wv, wo, gq, gk, eps):
    d = 4
    q_rows = [rms_numpy(x @ wq[:, h * d : (h + 1) * d], gq, eps) for h in range(2)]
    k_rows = [rms_numpy(x @ wk[:, h * d : (h + 1) * d], gk, eps) for h in range(2)]
    tokens = x.shape[1]
    blocked = np.triu(np.ones((tokens, tokens), dtype=bool), k=1)
    outs = []
    for h in range(2):
        q, k = rope_numpy(q_rows[h]), rope_numpy(k_rows[h])
        scores = np.where(blocked, -np.inf, q @ np.swapaxes(k, -1, -2) / 2.0)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        outs.append((e / e.sum(axis=-1, keepdims=True)) @ (x @ wv[:, h * d : (h + 1) * d]))
    return np.concatenate(outs, axis=-1) @ wo


def test_norm_is_applied_before_rope_not_after():
    """With unequal gains the two orders differ; the layer matches norm-then-rotate."""
    layer, (wq, wk, wv, wo, gq, gk) = layer_and_weights(3, 8, 2, 2)
    x = normal(11, (1, 6, 8))
    out = layer(Tensor(x))[0].value
    before = qknorm_numpy(x, wq, wk, wv, wo, 2, 2, gq, gk, norm_first=True)
    after = qknorm_numpy(x, wq, wk, wv, wo, 2, 2, gq, gk, norm_first=False)
    np.testing.assert_allclose(out, before, rtol=1e-12, atol=1e-13)
    assert np.abs(out - after).max() > 1e-3


def test_parameters_two_gains_of_width_d_h_after_the_projections():
    layer = MultiHeadAttention(12, 3, num_kv_heads=1, qk_norm=True, rng=SplitMix64(4))
    assert [(n, p.shape) for n, p in layer.named_parameters()] == [
        ("attention.query.weight", (12, 12)),
        ("attention.key.weight", (12, 4)),
        ("attention.value.weight", (12, 4)),
        ("attention.query_norm.gain", (4,)),
        ("attention.key_norm.gain", (4,)),
        ("attention.output.weight", (12, 12)),
    ]
    assert np.array_equal(layer.query_norm.gain.value, np.ones(4)) and "qk_norm=True" in repr(
        layer
    )
    plain = MultiHeadAttention(12, 3, rng=SplitMix64(4))
    assert plain.query_norm is None and plain.key_norm is None and not plain.qk_norm


def test_gradients_including_the_gains_match_finite_differences():
    layer, _ = layer_and_weights(5, 8, 4, 2)
    x = Tensor(normal(12, (2, 3, 8)), requires_grad=True)
    result = gradcheck(lambda t: layer(t)[0], [x], name="QK-norm attention input")
    assert result.passed, result.message
    seed = normal(13, (2, 3, 8))
    result = gradcheck_parameters(
        lambda: (layer(Tensor(x.value))[0] * seed).sum(), layer.parameters(), atol=2e-6
    )
    assert result.passed, result.message
    names = [n for n, _ in layer.named_parameters()]
    assert "attention.query_norm.gain" in names and "attention.key_norm.gain" in names


def largest_score(layer, x):
    q, k, _ = layer.project_heads(Tensor(x))
    group = q.shape[1] // k.shape[1]
    keys = np.repeat(k.value, group, axis=1)  # (B, H, T, d_h): query head h reads h // group
    return float(np.abs(q.value @ np.swapaxes(keys, -1, -2)).max() / math.sqrt(q.shape[-1]))


def test_largest_score_stays_below_the_closed_form_bound_as_weights_grow():
    """|q̂·k̂|/√d_h <= ‖q̂‖‖k̂‖/√d_h < √d_h·max|γ_q|·max|γ_k|: ‖x/rms(x)‖ = √d_h, rotations keep it."""
    x = normal(14, (2, 6, 8))
    with_norm, without = [], []
    for scale in (1.0, 10.0, 100.0, 1e4):
        layer, (wq, wk, wv, wo, gq, gk) = layer_and_weights(6, 8, 4, 2, scale=scale)
        bound = math.sqrt(2) * np.abs(gq).max() * np.abs(gk).max()
        with_norm.append(largest_score(layer, x))
        assert with_norm[-1] <= bound
        plain = MultiHeadAttention.from_parameters(
            wq, wk, wv, wo, num_heads=4, num_kv_heads=2, causal=True, positions=RoPEPositions(2)
        )
        without.append(largest_score(plain, x))
    assert without[-1] > 1e6 * without[0] * 0.99  # grows as scale²: 1e8 over the sweep
    assert without[-1] > 1e3 * bound  # far past what QK-norm allows
    assert max(with_norm) / min(with_norm) < 1.01  # scale-free once ‖Wx‖² >> ε


def test_bound_is_reached_by_aligned_queries_and_keys():
    """Not loose: one-coordinate q and k, gains peaking there, give √d_h·γ_q·γ_k exactly."""
    d, width = 4, 4
    wq = np.zeros((width, width))
    wq[0, 0] = 3.0
    wk = np.zeros((width, width))
    wk[0, 0] = -5.0
    gq, gk = np.array([2.0, 0.5, 0.1, 1.0]), np.array([1.5, 0.2, 1.0, 0.3])
    layer = MultiHeadAttention.from_parameters(
        wq, wk, wq, wq, num_heads=1, qk_norm=True, query_norm_gain=gq, key_norm_gain=gk
    )
    x = np.zeros((1, 2, width))
    x[0, :, 0] = 1.0
    bound = math.sqrt(d) * 2.0 * 1.5  # √d_h · max|γ_q| · max|γ_k| = 6
    # q̂_0 = 2·3/√(9/4 + ε), k̂_0 = 1.5·(−5)/√(25/4 + ε), |score| = |q̂_0 k̂_0|/√d_h: 6 at ε = 0
    exact = 2.0 * 3.0 * 1.5 * 5.0 / math.sqrt((9.0 / 4 + 1e-6) * (25.0 / 4 + 1e-6)) / 2.0
    assert math.isclose(largest_score(layer, x), exact, rel_tol=1e-12)
    assert exact < bound < exact * (1 + 1e-6)


def test_refusals():
    rng = SplitMix64(15)
    with pytest.raises(ArgumentError, match="qk_norm must be True or False"):
        MultiHeadAttention(8, 2, qk_norm=1, rng=rng)
    w = normal(16, (8, 8))
    with pytest.raises(ArgumentError, match=r"gains of QK-norm.*qk_norm=False"):
        MultiHeadAttention.from_parameters(w, w, w, w, num_heads=2, query_norm_gain=np.ones(4))
    with pytest.raises(ShapeError, match=r"key QK-norm gain.*d_h = 4.*shape \(8,\)"):
        MultiHeadAttention.from_parameters(
            w, w, w, w, num_heads=2, qk_norm=True, key_norm_gain=np.ones(8)
        )
    with pytest.raises(ShapeError, match="finite"):
        MultiHeadAttention.from_parameters(
            w, w, w, w, num_heads=2, qk_norm=True, query_norm_gain=np.array([1, 2, np.nan, 4])
        )
