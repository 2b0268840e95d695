"""Each composite op equals the chain of primitive ops it replaces.

The chains are written out here from primitive ops only (mul, sum, add, sqrt, div, getitem,
matmul, permute, masked_fill, softmax), independently of the layers that use the composite ops.
Forward values must be bit-for-bit equal (same numpy operations in the same order), or equal to
rounding where the op uses a cheaper exact formula (attention's softmax multiplies by a reciprocal
per row); gradients, computed by a different but equivalent formula, must agree to 1e-12 relative
to their scale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, ops
from llm_from_scratch.random import SplitMix64

seeds = st.integers(0, 2**32)


def draw(seed: int, shape: tuple[int, ...], low: float = -1.5, high: float = 1.5) -> np.ndarray:
    return SplitMix64(seed).uniform(low, high, shape)


def gradients(fn, arrays, seed_array):
    """Forward value and the gradient of sum(fn(...) ⊙ seed) for every input."""
    tensors = [Tensor(a, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    out.backward(seed_array)
    return out.value, [t.grad for t in tensors]


def assert_same(composite, chain, arrays, out_seed, value_rtol=0.0):
    """Values equal (bit for bit unless ``value_rtol``); gradients to 1e-12 of their scale."""
    value_a, grads_a = gradients(composite, arrays, out_seed)
    value_b, grads_b = gradients(chain, arrays, out_seed)
    if value_rtol:
        np.testing.assert_allclose(value_a, value_b, rtol=value_rtol, atol=0)
    else:
        np.testing.assert_array_equal(value_a, value_b)
    for a, b in zip(grads_a, grads_b, strict=True):
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale)


# --- rms_norm --------------------------------------------------------------------------------


def rms_chain(x, gain, eps):
    mean_square = (x * x).sum(axis=-1, keepdims=True) * (1.0 / x.shape[-1])
    return x / (mean_square + eps).sqrt() * gain


@given(
    st.lists(st.integers(0, 3), max_size=2).map(tuple),
    st.integers(1, 6),
    st.sampled_from([0.0, 1e-6, 0.5]),
    seeds,
)
def test_rms_norm_equals_its_chain(leading, width, eps, seed):
    x = draw(seed, (*leading, width))
    gain = draw(seed + 1, (width,))
    out_seed = draw(seed + 2, x.shape)
    assert_same(
        lambda a, g: ops.rms_norm(a, g, eps=eps),
        lambda a, g: rms_chain(a, g, eps),
        [x, gain],
        out_seed,
    )


# --- layer_norm ------------------------------------------------------------------------------


def layer_chain(x, gain, bias, eps):
    per_feature = 1.0 / x.shape[-1]
    centred = x - x.sum(axis=-1, keepdims=True) * per_feature
    variance = (centred * centred).sum(axis=-1, keepdims=True) * per_feature
    return centred / (variance + eps).sqrt() * gain + bias


@given(
    st.lists(st.integers(0, 3), max_size=2).map(tuple),
    st.integers(1, 6),
    st.sampled_from([1e-5, 0.5]),
    st.sampled_from([1.0, 1e-3, 1e3]),
    seeds,
)
def test_layer_norm_equals_its_chain(leading, width, eps, magnitude, seed):
    x = draw(seed, (*leading, width)) * magnitude + 0.25 * magnitude  # off-centre tokens
    gain = draw(seed + 1, (width,))
    bias = draw(seed + 2, (width,))
    out_seed = draw(seed + 3, x.shape)
    assert_same(
        lambda a, g, b: ops.layer_norm(a, g, b, eps=eps),
        lambda a, g, b: layer_chain(a, g, b, eps),
        [x, gain, bias],
        out_seed,
    )


def test_layer_norm_is_the_layers_chain_and_central_differences_agree():
    """The op against the LayerNorm layer's own chain (standardize ⊙ γ + β) and gradcheck."""
    from llm_from_scratch.autodiff import gradcheck
    from llm_from_scratch.nn.norms import standardize

    x = draw(7, (2, 3, 5)) * 3.0 - 1.0
    gain, bias = draw(8, (5,)), draw(9, (5,))
    assert_same(
        lambda a, g, b: ops.layer_norm(a, g, b, eps=1e-5),
        lambda a, g, b: standardize(a, axis=-1, eps=1e-5) * g + b,
        [x, gain, bias],
        draw(10, x.shape),
    )
    result = gradcheck(
        lambda a, g, b: ops.layer_norm(a, g, b, eps=1e-5), [x, gain, bias], name="layer_norm"
    )
    assert result.passed, result


# --- pair_rotate -----------------------------------------------------------------------------


@given(st.integers(1, 4), st.integers(0, 3), seeds, st.data())
def test_pair_rotate_equals_its_chain(half, rows, seed, data):
    width = 2 * half
    partner = np.array(data.draw(st.permutations(range(width))))
    x = draw(seed, (rows, 2, width))
    cos = draw(seed + 1, (2, width))
    sin = draw(seed + 2, (2, width))
    assert_same(
        lambda a: ops.pair_rotate(a, cos=cos, sin=sin, partner=partner),
        lambda a: a * cos + a[..., partner] * sin,
        [x],
        draw(seed + 3, x.shape),
    )


# --- attention_weights -----------------------------------------------------------------------


def attention_chain(q, k, *bias, scale, blocked, added):
    scores = (q * scale) @ k.permute(0, 1, 3, 2)
    if added is not None:
        scores = scores + added
    if bias:
        scores = scores + bias[0]
    if blocked is None:
        return scores.softmax(axis=-1)
    full = np.broadcast_to(blocked, scores.shape)
    empty = np.broadcast_to(full.all(axis=-1, keepdims=True), scores.shape)
    scores = scores.masked_fill(full & ~empty, -np.inf).masked_fill(empty, 0.0)
    return scores.softmax(axis=-1).masked_fill(empty, 0.0)


@st.composite
def attention_problem(draw_):
    batch, heads = draw_(st.integers(1, 2)), draw_(st.integers(1, 2))
    queries, keys, width = (
        draw_(st.integers(1, 4)),
        draw_(st.integers(1, 4)),
        draw_(st.integers(1, 4)),  # width 1 and 4: a power-of-two scale, applied to keys
    )
    seed = draw_(seeds)
    mask_kind = draw_(st.sampled_from(["none", "causal-like", "random", "with-empty-rows"]))
    blocked = None
    if mask_kind == "causal-like":
        blocked = np.triu(np.ones((queries, keys), bool), 1).reshape(1, 1, queries, keys)
    elif mask_kind != "none":
        blocked = draw(seed + 4, (batch, 1, queries, keys)) > 0.3
        if mask_kind == "with-empty-rows":
            blocked[:, :, 0, :] = True
    added = draw(seed + 5, (1, 1, queries, keys)) if draw_(st.booleans()) else None
    with_bias = draw_(st.booleans())
    arrays = [
        draw(seed, (batch, heads, queries, width)),
        draw(seed + 1, (batch, heads, keys, width)),
    ]
    if with_bias:
        arrays.append(draw(seed + 2, (1, heads, queries, keys)))
    out_seed = draw(seed + 3, (batch, heads, queries, keys))
    return arrays, dict(scale=1.0 / math.sqrt(width), blocked=blocked, added=added), out_seed


@given(attention_problem())
def test_attention_weights_equal_their_chain(problem):
    arrays, params, out_seed = problem
    assert_same(
        lambda *t: ops.attention_weights(*t, **params),
        lambda *t: attention_chain(*t, **params),
        arrays,
        out_seed,
        value_rtol=1e-15,  # one reciprocal per row: within two roundings of the division
    )


def test_attention_weights_of_a_row_with_no_open_key_are_zero_with_zero_gradient():
    q = Tensor(draw(1, (1, 1, 2, 3)), requires_grad=True)
    k = Tensor(draw(2, (1, 1, 2, 3)), requires_grad=True)
    blocked = np.array([[True, True], [False, True]]).reshape(1, 1, 2, 2)
    weights = ops.attention_weights(q, k, scale=1.0, blocked=blocked, added=None)
    np.testing.assert_array_equal(weights.value[0, 0], [[0.0, 0.0], [1.0, 0.0]])
    weights.backward(np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(q.grad, np.zeros_like(q.value))  # nothing depends on q
    assert np.isfinite(k.grad).all()


@pytest.mark.parametrize("name", ["rms_norm", "layer_norm", "pair_rotate", "attention_weights"])
def test_composite_ops_keep_only_their_output_on_the_tape(name):
    """The chain's intermediates are not recorded: one tape entry whose inputs are the leaves."""
    x = Tensor(draw(3, (1, 1, 2, 4)), requires_grad=True)
    k = Tensor(draw(4, (1, 1, 2, 4)), requires_grad=True)
    gain = Tensor(draw(5, (4,)), requires_grad=True)
    bias = Tensor(draw(6, (4,)), requires_grad=True)
    out = {
        "rms_norm": lambda: ops.rms_norm(x, gain, eps=1e-6),
        "layer_norm": lambda: ops.layer_norm(x, gain, bias, eps=1e-5),
        "pair_rotate": lambda: ops.pair_rotate(
            x, cos=np.ones(4), sin=np.ones(4), partner=np.array([1, 0, 3, 2])
        ),
        "attention_weights": lambda: ops.attention_weights(
            x, k, scale=0.5, blocked=None, added=None
        ),
    }[name]()
    assert out.op_name == name
    assert all(t.is_leaf for t in out.inputs)


def test_split_and_merge_heads_ops_are_their_reshape_permute_chains_bit_for_bit():
    """One tape entry each, with the chain's values and gradients exactly (they only move)."""
    from llm_from_scratch.autodiff import Tensor, ops
    from llm_from_scratch.random import SplitMix64

    rng = SplitMix64(11)
    x_value, seed = rng.uniform(-1, 1, (2, 5, 6)), rng.uniform(-1, 1, (2, 3, 5, 2))
    fused, chain = Tensor(x_value, requires_grad=True), Tensor(x_value, requires_grad=True)
    heads = ops.split_heads(fused, heads=3)
    reference = chain.reshape(2, 5, 3, 2).permute(0, 2, 1, 3)
    assert np.array_equal(heads.value, reference.value)
    (heads * seed).sum().backward()
    (reference * seed).sum().backward()
    assert np.array_equal(fused.grad, chain.grad)
    merged, merged_chain = ops.merge_heads(heads), reference.permute(0, 2, 1, 3).reshape(2, 5, 6)
    assert np.array_equal(merged.value, merged_chain.value) and np.array_equal(
        merged.value, x_value
    )
    assert (
        merged.op_name == "merge_heads"
        and ops.split_heads(fused, heads=3).op_name == "split_heads"
    )
    up = Tensor(rng.uniform(-1, 1, (2, 3, 5, 2)), requires_grad=True)
    up_chain = Tensor(up.value, requires_grad=True)
    g = rng.uniform(-1, 1, (2, 5, 6))
    ops.merge_heads(up).backward(g)
    up_chain.permute(0, 2, 1, 3).reshape(2, 5, 6).backward(g)
    assert np.array_equal(up.grad, up_chain.grad)
