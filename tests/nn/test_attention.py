"""Multi-head attention: seed facts T3, T4, T11, T19, the mask contract, gradients, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, gradcheck, gradcheck_parameters
from llm_from_scratch.errors import ArgumentError, RankError, ShapeError, WidthError
from llm_from_scratch.nn import (
    MultiHeadAttention,
    PositionScheme,
    causal_mask,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)
from llm_from_scratch.random import SplitMix64


def normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return SplitMix64(seed).normal(shape)


def reference_attention(q, k, v, blocked=None, added=None):
    """Independent per-(b, h, i) loop with the textbook formula, for comparison."""
    batch, heads, queries, width = q.shape
    keys = k.shape[2]
    out = np.zeros((batch, heads, queries, v.shape[3]))
    weights = np.zeros((batch, heads, queries, keys))
    for b in range(batch):
        for h in range(heads):
            for i in range(queries):
                scores = np.array(
                    [q[b, h, i] @ k[b, h, j] / math.sqrt(width) for j in range(keys)]
                )
                if added is not None:
                    scores = scores + added[b, h, i]
                open_keys = (
                    np.ones(keys, bool) if blocked is None else ~np.asarray(blocked[b, h, i])
                )
                if not open_keys.any():
                    continue
                e = np.where(open_keys, np.exp(scores - scores[open_keys].max()), 0.0)
                weights[b, h, i] = e / e.sum()
                out[b, h, i] = weights[b, h, i] @ v[b, h]
    return out, weights


# --- T3: heads, widths, 4D² ------------------------------------------------------------------


def test_four_d_squared_bias_free_projections_named_in_forward_order():
    """Seed fact T3: 4·D² parameters: bias-free [D, D] query, key, value, output, in that order."""
    for width, heads in [(8, 2), (4, 2), (12, 3), (768, 12)]:
        layer = MultiHeadAttention(width, heads, rng=SplitMix64(1))
        assert layer.parameter_count == 4 * width**2
        assert layer.head_width == width // heads
    layer = MultiHeadAttention(8, 2, rng=SplitMix64(1))
    assert [n for n, _ in layer.named_parameters()] == [
        "attention.query.weight",
        "attention.key.weight",
        "attention.value.weight",
        "attention.output.weight",
    ]
    assert all(child.bias is None for child in layer.children())


def test_each_head_is_one_projection_set_and_mha_is_concat_then_output():
    """head_i = Attention(X W_Q,i, X W_K,i, X W_V,i), column blocks; MHA = concat · W_O (T3)."""
    width, heads = 6, 3
    head_width = width // heads
    x = normal(2, (2, 4, width))
    wq, wk, wv, wo = (normal(10 + i, (width, width)) for i in range(4))
    layer = MultiHeadAttention.from_parameters(wq, wk, wv, wo, num_heads=heads)
    output, _ = layer(Tensor(x))
    joined = []
    for i in range(heads):
        cols = slice(i * head_width, (i + 1) * head_width)
        q, k, v = x @ wq[:, cols], x @ wk[:, cols], x @ wv[:, cols]  # [B, T, d_h]
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(head_width)
        e = np.exp(scores - scores.max(-1, keepdims=True))
        joined.append((e / e.sum(-1, keepdims=True)) @ v)
    expected = np.concatenate(joined, axis=-1) @ wo
    np.testing.assert_allclose(output.value, expected, atol=1e-12)


def test_from_parameters_holds_exact_values_and_round_trips_the_state_dict():
    arrays = [normal(20 + i, (4, 4)) for i in range(4)]
    layer = MultiHeadAttention.from_parameters(*arrays, num_heads=2, name="mixer")
    state = layer.state_dict()
    assert list(state) == [f"mixer.{r}.weight" for r in ("query", "key", "value", "output")]
    for array, value in zip(arrays, state.values(), strict=True):
        np.testing.assert_array_equal(array, value)
    other = MultiHeadAttention(4, 2, name="mixer", rng=SplitMix64(3))
    other.load_state_dict(state)
    x = Tensor(normal(4, (1, 3, 4)))
    np.testing.assert_array_equal(layer(x)[0].value, other(x)[0].value)


def test_initialisation_is_deterministic_and_transactional():
    a = MultiHeadAttention(8, 2, rng=SplitMix64(19))
    b = MultiHeadAttention(8, 2, rng=SplitMix64(19))
    for (_, p), (_, r) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        np.testing.assert_array_equal(p.value, r.value)
    rng = SplitMix64(19)
    before = rng.state
    with pytest.raises(WidthError, match="D = 8 must be divisible by num_heads H = 3"):
        MultiHeadAttention(8, 3, rng=rng)
    with pytest.raises(ArgumentError, match="name"):
        MultiHeadAttention(8, 2, name="", rng=rng)
    assert rng.state == before
    MultiHeadAttention(8, 2, rng=rng)
    assert rng.state != before
    # four Xavier matrices drawn in order query, key, value, output from one stream
    stream = SplitMix64(19)
    bound = math.sqrt(6.0 / 16)
    for _, p in a.named_parameters():
        np.testing.assert_array_equal(p.value, stream.uniform(-bound, bound, (8, 8)))


# --- T4: the head split ----------------------------------------------------------------------


def test_split_heads_keeps_each_token_row_within_its_heads():
    """Seed fact T4: [2, 4, 8] splits to [2, 2, 4, 4]; token 0's 0..7 becomes heads' 0..3, 4..7."""
    x = np.arange(64.0).reshape(2, 4, 8)
    inner = Tensor(x).reshape(2, 4, 2, 4)
    assert inner.shape == (2, 4, 2, 4)
    heads = split_heads(Tensor(x), 2)
    assert heads.shape == (2, 2, 4, 4)
    # token 0's row (0..7) splits into head rows (0,1,2,3) and (4,5,6,7)
    np.testing.assert_array_equal(heads.value[0, 0, 0], [0, 1, 2, 3])
    np.testing.assert_array_equal(heads.value[0, 1, 0], [4, 5, 6, 7])
    # the next token keeps its own two head rows
    np.testing.assert_array_equal(heads.value[0, 0, 1], [8, 9, 10, 11])
    np.testing.assert_array_equal(heads.value[0, 1, 1], [12, 13, 14, 15])
    np.testing.assert_array_equal(heads.value, x.reshape(2, 4, 2, 4).transpose(0, 2, 1, 3))


def test_direct_reshape_groups_values_wrongly():
    """Seed fact T4: reshaping straight to [B, H, T, d_h] puts whole tokens into one head."""
    x = np.arange(64.0).reshape(2, 4, 8)
    wrong = Tensor(x).reshape(2, 2, 4, 4).value
    right = split_heads(Tensor(x), 2).value
    assert wrong.shape == right.shape == (2, 2, 4, 4)
    assert not np.array_equal(wrong, right)
    # the wrong "head 0" holds tokens 0 and 1 entirely: (0..3), (4..7), (8..11), (12..15)
    np.testing.assert_array_equal(wrong[0, 0].ravel(), np.arange(16.0))
    np.testing.assert_array_equal(wrong[0, 0, 1], [4, 5, 6, 7])


def test_equal_lengths_hide_a_wrong_rearrangement():
    """B=1, T=2, D=4, H=2: split and permuted shapes are both [1,2,2,2], values differ. (T4)"""
    x = Tensor(np.arange(8.0).reshape(1, 2, 4))
    split = x.reshape(1, 2, 2, 2)
    permuted = split_heads(x, 2)
    assert split.shape == permuted.shape == (1, 2, 2, 2)
    assert not np.array_equal(split.value, permuted.value)
    np.testing.assert_array_equal(permuted.value[0, 0], [[0, 1], [4, 5]])
    np.testing.assert_array_equal(split.value[0, 0], [[0, 1], [2, 3]])
    assert merge_heads(permuted).shape == (1, 2, 4)


@given(
    batch=st.integers(0, 3),
    tokens=st.integers(0, 4),
    heads=st.integers(1, 4),
    head_width=st.integers(1, 3),
)
def test_merge_inverts_split(batch, tokens, heads, head_width):
    x = normal(5, (batch, tokens, heads * head_width))
    split = split_heads(Tensor(x), heads)
    assert split.shape == (batch, heads, tokens, head_width)
    np.testing.assert_array_equal(merge_heads(split).value, x)


def test_split_and_merge_gradients():
    x = Tensor(normal(6, (2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: split_heads(t, 2), [x]).passed
    h = Tensor(normal(7, (2, 2, 3, 2)), requires_grad=True)
    assert gradcheck(merge_heads, [h]).passed


# --- the attention function: values and gradients --------------------------------------------


def qkv(seed: int, batch=2, heads=2, queries=3, keys=3, width=2):
    rng = SplitMix64(seed)
    return (
        rng.normal((batch, heads, queries, width)),
        rng.normal((batch, heads, keys, width)),
        rng.normal((batch, heads, keys, width)),
    )


def test_attention_matches_an_independent_loop():
    q, k, v = qkv(8, queries=3, keys=5)
    out, weights = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v))
    expected_out, expected_weights = reference_attention(q, k, v)
    np.testing.assert_allclose(out.value, expected_out, atol=1e-12)
    np.testing.assert_allclose(weights.value, expected_weights, atol=1e-12)


def test_single_head_closed_form():
    """One query, keys (1,0) and (0,1), d_h = 2: weights softmax(q·k/√2)."""
    q = np.array([[[[2.0, 0.0]]]])
    k = np.array([[[[1.0, 0.0], [0.0, 1.0]]]])
    v = np.array([[[[10.0], [20.0]]]])
    out, weights = scaled_dot_product_attention(q, k, v)
    a = math.exp(2 / math.sqrt(2))
    np.testing.assert_allclose(weights.value.ravel(), [a / (a + 1), 1 / (a + 1)], atol=1e-15)
    np.testing.assert_allclose(out.value.ravel(), [(10 * a + 20) / (a + 1)], atol=1e-12)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"causal": True},
        {"key_padding_mask": np.array([[False, False, True], [False, True, True]])},
        {"mask": np.array([[0.0, -1.0, 0.5], [0.2, 0.0, -np.inf], [1.0, 0.0, 0.0]])},
        {"bias": normal(9, (2, 3, 3))},
    ],
    ids=["plain", "causal", "padding", "float-mask", "bias"],
)
def test_attention_full_jacobian_gradcheck(options):
    q, k, v = qkv(10)
    inputs = [Tensor(a, requires_grad=True) for a in (q, k, v)]

    def both(q, k, v):
        out, weights = scaled_dot_product_attention(q, k, v, **options)
        return out, weights

    result = gradcheck(lambda q, k, v: both(q, k, v)[0], inputs, name="attention outputs")
    assert result.passed, result.message
    result = gradcheck(lambda q, k, v: both(q, k, v)[1], inputs, name="attention weights")
    assert result.passed, result.message


def test_gradcheck_with_a_fully_masked_row_and_learnable_bias():
    q, k, v = qkv(11, batch=1)
    padding = np.array([[True, True, True]])
    bias = Tensor(normal(12, (1, 2, 3, 3)), requires_grad=True)
    inputs = [Tensor(a, requires_grad=True) for a in (q, k, v)] + [bias]
    mask = np.array([[False, True, True], [True, True, True], [False, False, False]])
    result = gradcheck(
        lambda q, k, v, b: scaled_dot_product_attention(q, k, v, mask=mask, bias=b)[0], inputs
    )
    assert result.passed, result.message
    out, weights = scaled_dot_product_attention(*inputs[:3], key_padding_mask=padding)
    assert np.all(out.value == 0.0) and np.all(weights.value == 0.0)


def test_multi_head_attention_full_jacobian_gradcheck():
    rng = SplitMix64(13)
    layer = MultiHeadAttention(4, 2, causal=True, rng=rng)
    x = Tensor(rng.normal((2, 3, 4)), requires_grad=True)
    params = layer.parameters()
    result = gradcheck(lambda x: layer(x)[0], [x], name="MultiHeadAttention input")
    assert result.passed, result.message
    result = gradcheck(lambda x: layer(x)[1], [x], name="MultiHeadAttention weights")
    assert result.passed, result.message
    result = gradcheck(lambda x, *ws: _mha_with(x, ws, causal=True), [x, *params])
    assert result.passed, result.message
    np.testing.assert_allclose(
        _mha_with(x, params, causal=True).value, layer(x)[0].value, atol=1e-15
    )


def _mha_with(x, weights, causal):
    """MHA built directly from ops on the given weight tensors (so gradcheck sees them)."""
    q = split_heads(x @ weights[0], 2)
    k = split_heads(x @ weights[1], 2)
    v = split_heads(x @ weights[2], 2)
    out, _ = scaled_dot_product_attention(q, k, v, causal=causal)
    return merge_heads(out) @ weights[3]


def test_module_parameter_gradients_match_finite_differences():
    rng = SplitMix64(14)
    layer = MultiHeadAttention(4, 2, rng=rng)
    x = rng.normal((1, 3, 4))
    seed = rng.normal((1, 3, 4))
    result = gradcheck_parameters(
        lambda: (layer(Tensor(x))[0] * seed).sum(), layer.parameters(), step=1e-6, atol=2e-6
    )
    assert result.passed, result.message


# --- T19: mask contract and returned shapes --------------------------------------------------


def test_attention_returns_b_t_d_outputs_and_b_t_t_or_b_h_t_t_weights():
    """Seed fact T19: outputs [B, T, D]; weights averaged [B, T, T] or per head [B, H, T, T]."""
    rng = SplitMix64(15)
    layer = MultiHeadAttention(8, 2, rng=rng)
    x = Tensor(rng.normal((2, 4, 8)))
    output, averaged = layer(x)
    assert output.shape == (2, 4, 8)
    assert averaged.shape == (2, 4, 4)
    _, per_head = layer(x, average_weights=False)
    assert per_head.shape == (2, 2, 4, 4)
    np.testing.assert_allclose(averaged.value, per_head.value.mean(axis=1), atol=1e-15)


def test_shared_mask_applies_to_every_batch_row_and_head():
    """Seed fact T19: an [L, S] mask blocks the same keys in every batch row and head."""
    q, k, v = qkv(16, batch=2, heads=3, queries=3, keys=4)
    shared = np.array([[False, True, False, True]] * 3)
    _, weights = scaled_dot_product_attention(q, k, v, mask=shared)
    assert np.all(weights.value[..., [1, 3]] == 0.0)
    np.testing.assert_allclose(weights.value.sum(-1), 1.0, atol=1e-15)


def test_per_batch_head_mask_is_indexed_b_times_h_plus_h():
    """Seed fact T19: a [B·H, L, S] mask's row b·H + h applies to batch b, head h."""
    batch, heads, keys = 2, 3, 4
    q, k, v = qkv(17, batch=batch, heads=heads, queries=2, keys=keys)
    mask = np.zeros((batch * heads, 2, keys), dtype=bool)
    for b in range(batch):
        for h in range(heads):
            mask[b * heads + h, :, (b * heads + h) % keys] = True  # block one key per (b, h)
    _, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    for b in range(batch):
        for h in range(heads):
            blocked = (b * heads + h) % keys
            assert np.all(weights.value[b, h, :, blocked] == 0.0)
            others = [j for j in range(keys) if j != blocked]
            assert np.all(weights.value[b, h][:, others] > 0.0)


def test_boolean_true_blocks_and_float_adds():
    """Seed fact T19: a Boolean mask's True blocks a key; a float mask is added to the scores."""
    q, k, v = qkv(18, batch=1, heads=1, queries=2, keys=3)
    boolean = np.array([[False, True, False], [False, False, False]])
    additive = np.array([[0.0, -np.inf, 0.0], [0.0, 0.0, 0.0]])
    _, wb = scaled_dot_product_attention(q, k, v, mask=boolean)
    _, wf = scaled_dot_product_attention(q, k, v, mask=additive)
    np.testing.assert_allclose(wb.value, wf.value, atol=1e-15)
    shift = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])
    _, ws = scaled_dot_product_attention(q, k, v, mask=shift)
    _, expected = reference_attention(q, k, v, added=np.broadcast_to(shift, (1, 1, 2, 3)))
    np.testing.assert_allclose(ws.value, expected, atol=1e-12)
    # a float mask adds exactly like a bias of the same values
    _, wbias = scaled_dot_product_attention(q, k, v, bias=shift)
    np.testing.assert_allclose(ws.value, wbias.value, atol=1e-15)


def test_padding_mask_gives_padded_keys_zero_weight():
    """Seed fact T19: a [B, S] key padding mask gives padded keys exactly zero weight."""
    q, k, v = qkv(19, batch=2, heads=2, queries=4, keys=4)
    padding = np.array([[False, False, False, True], [False, True, True, True]])
    _, weights = scaled_dot_product_attention(q, k, v, key_padding_mask=padding)
    assert np.all(weights.value[0, :, :, 3] == 0.0)
    assert np.all(weights.value[1, :, :, 1:] == 0.0)
    np.testing.assert_allclose(weights.value[1, :, :, 0], 1.0, atol=1e-15)
    float_padding = np.where(padding, -np.inf, 0.0)
    _, float_weights = scaled_dot_product_attention(q, k, v, key_padding_mask=float_padding)
    np.testing.assert_array_equal(weights.value, float_weights.value)


def test_module_forwards_masks():
    rng = SplitMix64(20)
    layer = MultiHeadAttention(4, 2, rng=rng)
    x = Tensor(rng.normal((2, 3, 4)))
    padding = np.array([[False, False, True], [False, False, False]])
    _, weights = layer(x, key_padding_mask=padding, average_weights=False)
    assert np.all(weights.value[0, :, :, 2] == 0.0)
    _, causal = layer(x, mask=causal_mask(3, 3))
    causal_layer = MultiHeadAttention.from_parameters(
        *layer.parameters(), num_heads=2, causal=True
    )
    np.testing.assert_array_equal(causal.value, causal_layer(x)[1].value)


@given(
    batch=st.integers(1, 3),
    heads=st.integers(1, 3),
    queries=st.integers(1, 4),
    keys=st.integers(1, 5),
    seed=st.integers(0, 1000),
)
def test_weights_sum_to_one_over_unmasked_keys(batch, heads, queries, keys, seed):
    rng = SplitMix64(seed)
    q, k, v = qkv(seed, batch, heads, queries, keys)
    padding = rng.uniform(0, 1, (batch, keys)) < 0.4
    shared = rng.uniform(0, 1, (queries, keys)) < 0.3
    out, weights = scaled_dot_product_attention(q, k, v, mask=shared, key_padding_mask=padding)
    blocked = shared[None, None] | padding[:, None, None, :]
    blocked = np.broadcast_to(blocked, weights.shape)
    assert np.all(weights.value[blocked] == 0.0)
    open_rows = ~blocked.all(-1)
    np.testing.assert_allclose(weights.value.sum(-1)[open_rows], 1.0, atol=1e-12)
    assert np.all(weights.value.sum(-1)[~open_rows] == 0.0)
    assert np.all(out.value[~open_rows] == 0.0)
    assert np.all(np.isfinite(out.value))
    expected_out, expected_weights = reference_attention(q, k, v, blocked=blocked)
    np.testing.assert_allclose(weights.value, expected_weights, atol=1e-12)
    np.testing.assert_allclose(out.value, expected_out, atol=1e-12)


def test_fully_masked_rows_are_finite_zero_and_warning_free():
    """pyproject turns warnings into errors, so any numpy RuntimeWarning would fail here."""
    q, k, v = qkv(21, batch=1, heads=2, queries=2, keys=3)
    inputs = [Tensor(a, requires_grad=True) for a in (q, k, v)]
    everything = np.ones((2, 3), dtype=bool)
    for options in (
        {"mask": everything},
        {"mask": np.full((2, 3), -np.inf)},
        {"key_padding_mask": np.array([[True, True, True]])},
    ):
        out, weights = scaled_dot_product_attention(*inputs, **options)
        assert np.all(out.value == 0.0) and np.all(weights.value == 0.0)
        out.sum().backward()
        for t in inputs:
            assert np.all(t.grad == 0.0)
            t.zero_grad()


# --- causal masks ----------------------------------------------------------------------------


def test_causal_mask_with_fewer_queries_puts_them_last():
    np.testing.assert_array_equal(
        causal_mask(2, 4),
        [[False, False, False, True], [False, False, False, False]],
    )
    np.testing.assert_array_equal(causal_mask(3, 3), np.triu(np.ones((3, 3), bool), 1))
    q, k, v = qkv(22, batch=1, heads=1, queries=2, keys=4)
    _, weights = scaled_dot_product_attention(q, k, v, causal=True)
    assert weights.value[0, 0, 0, 3] == 0.0 and np.all(weights.value[0, 0, 1] > 0.0)


def test_causal_output_at_t_ignores_inputs_after_t():
    rng = SplitMix64(23)
    layer = MultiHeadAttention(4, 2, causal=True, rng=rng)
    x = rng.normal((1, 5, 4))
    base, _ = layer(Tensor(x))
    for t in range(5):
        changed = x.copy()
        changed[0, t + 1 :] += rng.normal(changed[0, t + 1 :].shape) * 3.0
        out, _ = layer(Tensor(changed))
        np.testing.assert_array_equal(out.value[0, : t + 1], base.value[0, : t + 1])
        if t < 4:
            assert not np.allclose(out.value[0, t + 1 :], base.value[0, t + 1 :])
    # and the gradient of output t with respect to later inputs is exactly zero
    xt = Tensor(x, requires_grad=True)
    out, _ = layer(xt)
    out[0, 1].sum().backward()
    assert np.all(xt.grad[0, 2:] == 0.0) and np.any(xt.grad[0, :2] != 0.0)


# --- T11: permutation equivariance ------------------------------------------------------------


def test_equivariant_without_mask_and_not_with_a_causal_one():
    """Seed fact T11: permuting tokens permutes the output without a mask, not with causal."""
    rng = SplitMix64(24)
    plain = MultiHeadAttention(6, 3, rng=rng)
    causal = MultiHeadAttention.from_parameters(*plain.parameters(), num_heads=3, causal=True)
    x = rng.normal((1, 5, 6))
    order = np.array([3, 0, 4, 1, 2])
    for layer, equivariant in ((plain, True), (causal, False)):
        out, weights = layer(Tensor(x))
        permuted_out, permuted_weights = layer(Tensor(x[:, order]))
        same = np.allclose(permuted_out.value, out.value[:, order], atol=1e-12)
        assert same is equivariant
        same_weights = np.allclose(
            permuted_weights.value, weights.value[:, order][:, :, order], atol=1e-12
        )
        assert same_weights is equivariant


@given(seed=st.integers(0, 10_000))
def test_equivariance_for_any_permutation(seed):
    """Seed fact T11: attention without positions or masks is equivariant for any permutation."""
    rng = SplitMix64(seed)
    layer = MultiHeadAttention(4, 2, rng=rng)
    x = rng.normal((2, 4, 4))
    order = np.argsort(rng.uniform(0, 1, (4,)))
    out, _ = layer(Tensor(x))
    permuted, _ = layer(Tensor(x[:, order]))
    np.testing.assert_allclose(permuted.value, out.value[:, order], atol=1e-12)


# --- the position hook ------------------------------------------------------------------------


class StubPositions:
    """A tiny scheme: bias −slope·|i − j| per head, and q/k scaled by (1 + position)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def score_bias(self, num_heads, query_len, key_len):
        self.calls.append(("score_bias", num_heads, query_len, key_len))
        slopes = np.arange(1, num_heads + 1, dtype=float)[:, None, None]
        distance = np.abs(np.arange(query_len)[:, None] - np.arange(key_len)[None, :])
        return -slopes * distance

    def rotate(self, x):
        self.calls.append(("rotate", x.shape))
        scale = 1.0 + np.arange(x.shape[2], dtype=float)[:, None]
        return x * scale


def test_position_hook_is_called_and_changes_scores():
    stub = StubPositions()
    assert isinstance(stub, PositionScheme)
    rng = SplitMix64(25)
    weights = [rng.normal((4, 4)) for _ in range(4)]
    with_positions = MultiHeadAttention.from_parameters(*weights, num_heads=2, positions=stub)
    x = rng.normal((2, 3, 4))
    out, per_head = with_positions(Tensor(x), average_weights=False)
    assert stub.calls == [
        ("rotate", (2, 2, 3, 2)),
        ("rotate", (2, 2, 3, 2)),
        ("score_bias", 2, 3, 3),
    ]
    wq, wk, wv, _ = weights
    q = split_heads(Tensor(x @ wq), 2).value * (1.0 + np.arange(3.0)[:, None])
    k = split_heads(Tensor(x @ wk), 2).value * (1.0 + np.arange(3.0)[:, None])
    v = split_heads(Tensor(x @ wv), 2).value
    bias = stub.score_bias(2, 3, 3)[None]
    _, expected = reference_attention(q, k, v, added=np.broadcast_to(bias, (2, 2, 3, 3)))
    np.testing.assert_allclose(per_head.value, expected, atol=1e-12)
    # positions break equivariance
    order = np.array([2, 0, 1])
    permuted, _ = with_positions(Tensor(x[:, order]))
    assert not np.allclose(permuted.value, out.value[:, order])


def test_position_hook_may_return_no_bias_and_identity_rotation():
    class Nothing:
        def score_bias(self, num_heads, query_len, key_len):
            return None

        def rotate(self, x):
            return x

    rng = SplitMix64(26)
    weights = [rng.normal((4, 4)) for _ in range(4)]
    x = Tensor(rng.normal((1, 3, 4)))
    a = MultiHeadAttention.from_parameters(*weights, num_heads=2, positions=Nothing())
    b = MultiHeadAttention.from_parameters(*weights, num_heads=2)
    np.testing.assert_array_equal(a(x)[0].value, b(x)[0].value)


def test_position_hook_errors():
    class BadBias:
        def score_bias(self, num_heads, query_len, key_len):
            return np.zeros((query_len, key_len))

        def rotate(self, x):
            return x

    class BadRotate:
        def score_bias(self, num_heads, query_len, key_len):
            return None

        def rotate(self, x):
            return x[..., :1]

    rng = SplitMix64(27)
    x = Tensor(rng.normal((1, 3, 4)))
    layer = MultiHeadAttention(4, 2, positions=BadBias(), rng=rng)
    with pytest.raises(ShapeError, match=r"must return \[H, L, S\] = \[2, 3, 3\]"):
        layer(x)
    layer.positions = BadRotate()
    with pytest.raises(ShapeError, match="rotate must keep the shape"):
        layer(x)
    with pytest.raises(ArgumentError, match="PositionScheme protocol"):
        MultiHeadAttention(4, 2, positions=object(), rng=rng)


# --- typed errors ------------------------------------------------------------------------------


def test_head_errors():
    x = Tensor(np.zeros((1, 2, 6)))
    with pytest.raises(WidthError, match=r"D = 6 must be divisible by num_heads H = 4"):
        split_heads(x, 4)
    with pytest.raises(ArgumentError, match="at least 1; got 0"):
        split_heads(x, 0)
    with pytest.raises(ArgumentError, match=r"positive integer; got 2\.0"):
        split_heads(x, 2.0)
    with pytest.raises(RankError, match=r"\[B, T, D\] \(rank 3\); got shape \(2, 6\)"):
        split_heads(Tensor(np.zeros((2, 6))), 2)
    with pytest.raises(RankError, match=r"rank 4\); got shape \(1, 2, 6\)"):
        merge_heads(x)


def test_module_errors():
    rng = SplitMix64(28)
    with pytest.raises(WidthError, match="D = 6 must be divisible by num_heads H = 4"):
        MultiHeadAttention(6, 4, rng=rng)
    with pytest.raises(WidthError, match="at least 1; got 0"):
        MultiHeadAttention(0, 1, rng=rng)
    with pytest.raises(ArgumentError, match="must be a positive integer"):
        MultiHeadAttention(4.0, 2, rng=rng)
    with pytest.raises(ArgumentError, match="SplitMix64"):
        MultiHeadAttention(4, 2, rng=None)
    square = np.zeros((4, 4))
    with pytest.raises(ShapeError, match=r"wk must be a square \[D, D\]"):
        MultiHeadAttention.from_parameters(square, np.zeros((4, 2)), square, square, num_heads=2)
    with pytest.raises(ShapeError, match="share one shape"):
        MultiHeadAttention.from_parameters(square, square, np.zeros((2, 2)), square, num_heads=2)
    with pytest.raises(WidthError, match="D = 4 must be divisible by num_heads H = 3"):
        MultiHeadAttention.from_parameters(square, square, square, square, num_heads=3)
    layer = MultiHeadAttention(4, 2, rng=rng)
    with pytest.raises(WidthError, match=r"last axis is 4; got shape \(1, 2, 5\)"):
        layer(Tensor(np.zeros((1, 2, 5))))
    with pytest.raises(RankError, match=r"rank 3\); got shape \(2, 4\)"):
        layer(Tensor(np.zeros((2, 4))))


def test_attention_shape_errors():
    q, k, v = qkv(29, batch=1, heads=2, queries=2, keys=3)
    with pytest.raises(RankError, match="k of rank 4"):
        scaled_dot_product_attention(q, k[0], v)
    with pytest.raises(ShapeError, match="share batch and head"):
        scaled_dot_product_attention(q, k[:, :1], v)
    with pytest.raises(ShapeError, match="same width d_h"):
        scaled_dot_product_attention(q, k[..., :1], v)
    with pytest.raises(ShapeError, match="same length S"):
        scaled_dot_product_attention(q, k, v[:, :, :2])
    with pytest.raises(ShapeError, match="width d_h of at least 1"):
        scaled_dot_product_attention(q[..., :0], k[..., :0], v)
    with pytest.raises(ShapeError, match="L <= S; got L = 2, S = 1"):
        scaled_dot_product_attention(q, k[:, :, :1], v[:, :, :1], causal=True)


def test_mask_errors():
    q, k, v = qkv(30, batch=2, heads=2, queries=2, keys=3)
    with pytest.raises(ShapeError, match=r"\[L, S\] = \[2, 3\].*\[B·H, L, S\] = \[4, 2, 3\]"):
        scaled_dot_product_attention(q, k, v, mask=np.zeros((2, 2, 2, 3), bool))
    with pytest.raises(ShapeError, match=r"\[B, S\] = \[2, 3\]"):
        scaled_dot_product_attention(q, k, v, key_padding_mask=np.zeros((3,), bool))
    with pytest.raises(ArgumentError, match=r"Boolean .* or float"):
        scaled_dot_product_attention(q, k, v, mask=np.zeros((2, 3), int))
    with pytest.raises(ArgumentError, match="NaN or \\+inf"):
        scaled_dot_product_attention(q, k, v, mask=np.full((2, 3), np.inf))
    with pytest.raises(ArgumentError, match="same type"):
        scaled_dot_product_attention(
            q, k, v, mask=np.zeros((2, 3), bool), key_padding_mask=np.zeros((2, 3))
        )
    with pytest.raises(ShapeError, match=r"broadcast to that shape"):
        scaled_dot_product_attention(q, k, v, bias=np.zeros((3, 2, 3)))
    with pytest.raises(ShapeError, match="finite"):
        scaled_dot_product_attention(q, k, v, bias=np.full((2, 3), -np.inf))
    with pytest.raises(ArgumentError, match="non-negative integer"):
        causal_mask(-1, 2)


@pytest.mark.parametrize(
    ("batch", "queries", "causal"), [(0, 3, False), (2, 0, False), (2, 0, True), (0, 2, True)]
)
def test_empty_batch_or_query_axes(batch, queries, causal):
    q, k, v = qkv(31, batch=batch, heads=2, queries=queries, keys=3)
    out, weights = scaled_dot_product_attention(q, k, v, causal=causal)
    assert out.shape == (batch, 2, queries, 2)
    assert weights.shape == (batch, 2, queries, 3)
    out, weights = scaled_dot_product_attention(q, k[:, :, :0], v[:, :, :0])  # S = 0
    assert np.all(out.value == 0.0) and out.shape == (batch, 2, queries, 2)
    assert weights.shape == (batch, 2, queries, 0)
    layer = MultiHeadAttention(4, 2, causal=causal, rng=SplitMix64(32))
    output, averaged = layer(Tensor(np.zeros((batch, queries, 4))))
    assert output.shape == (batch, queries, 4) and averaged.shape == (batch, queries, queries)
