"""fused_attention is the composed chain it stands for, bit for bit: values and every gradient.

The chain is the taught one, op by op: ``split_heads`` of the three projections' rows, RoPE's
``pair_rotate`` of q and k (or no rotation), ``attention_weights``, the product with the values
and ``merge_heads``. The fused op must give exactly the chain's output, weights and gradients
(``assert_array_equal``), match an independent numpy attention to rounding, pass central
differences, and record one entry where the chain records eight.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, no_grad, ops, recorded_ops
from llm_from_scratch.autodiff.ops.fused_attention import fused_attention_with_weights
from llm_from_scratch.errors import ArgumentError, ShapeError, TapeError
from llm_from_scratch.nn.attention import causal_mask, sliding_window_mask
from llm_from_scratch.nn.positions import RoPEPositions
from llm_from_scratch.random import SplitMix64

B, H, T, DH = 2, 3, 5, 4
D = H * DH
SCALE = 1.0 / math.sqrt(DH)
MASKS = {
    "causal": causal_mask(T, T),
    "window 2": sliding_window_mask(T, T, 2),
    "open": None,
}
ROTATIONS = ("none", "interleaved", "half")


def _tables(rotation: str) -> dict:
    """RoPE's shared tables for positions 0 … T − 1, or no rotation."""
    if rotation == "none":
        return {}
    cos, sin, partner = RoPEPositions(DH, pairing=rotation)._tables_for(T)
    return {"cos": cos, "sin": sin, "partner": partner}


def _rows(seed: int = 11, shape: tuple[int, ...] = (B, T, D)) -> list[Tensor]:
    rng = SplitMix64(seed)
    return [Tensor(rng.uniform(-1, 1, shape), requires_grad=True) for _ in range(3)]


def _chain(q_rows, k_rows, v_rows, blocked, tables):
    """The composed chain, one op per step: (merged [B,T,D], weights [B,H,T,T])."""
    q = ops.split_heads(q_rows, heads=H)
    k = ops.split_heads(k_rows, heads=H)
    v = ops.split_heads(v_rows, heads=H)
    if tables:
        q, k = ops.pair_rotate(q, **tables), ops.pair_rotate(k, **tables)
    weights = ops.attention_weights(q, k, scale=SCALE, blocked=blocked, added=None)
    return ops.merge_heads(weights @ v), weights


def _numpy(q_rows, k_rows, v_rows, blocked, rotation):
    """Independent numpy: RoPE by explicit pair angles, softmax(q kᵀ / √d_h, blocked → −∞) v."""

    def heads(x):
        return x.reshape(B, T, H, DH).transpose(0, 2, 1, 3)

    def rotate(x):
        if rotation == "none":
            return x
        omega = 10000.0 ** (-np.arange(0, DH, 2) / DH)  # (d_h / 2,)
        angle = np.arange(T)[:, None] * omega  # (T, d_h / 2)
        c, s = np.cos(angle), np.sin(angle)
        if rotation == "interleaved":
            a, b = x[..., 0::2], x[..., 1::2]
            out = np.empty_like(x)
            out[..., 0::2], out[..., 1::2] = a * c - b * s, a * s + b * c
            return out
        a, b = x[..., : DH // 2], x[..., DH // 2 :]
        return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)

    q, k, v = rotate(heads(q_rows)), rotate(heads(k_rows)), heads(v_rows)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(DH)
    if blocked is not None:
        scores = np.where(blocked, -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return (weights @ v).transpose(0, 2, 1, 3).reshape(B, T, D), weights


@pytest.mark.parametrize("rotation", ROTATIONS)
@pytest.mark.parametrize("mask", list(MASKS))
def test_values_and_gradients_are_the_chains_bit_for_bit(mask: str, rotation: str) -> None:
    blocked, tables = MASKS[mask], _tables(rotation)
    fused_rows, chain_rows = _rows(), _rows()
    merged, weights = fused_attention_with_weights(
        *fused_rows, heads=H, scale=SCALE, blocked=blocked, **tables
    )
    chain, chain_weights = _chain(*chain_rows, blocked, tables)
    np.testing.assert_array_equal(merged.value, chain.value)
    np.testing.assert_array_equal(weights.value, chain_weights.value)
    truth, truth_weights = _numpy(*(t.value for t in chain_rows), blocked, rotation)
    np.testing.assert_allclose(merged.value, truth, rtol=0, atol=1e-14)
    np.testing.assert_allclose(weights.value, truth_weights, rtol=0, atol=1e-14)
    seed = SplitMix64(3).uniform(-1, 1, (B, T, D))
    merged.backward(seed)
    chain.backward(seed)
    for fused_row, chain_row in zip(fused_rows, chain_rows, strict=True):
        np.testing.assert_array_equal(fused_row.grad, chain_row.grad)


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_a_loss_on_the_weights_alone_gets_the_chains_gradient(rotation: str) -> None:
    tables, blocked = _tables(rotation), MASKS["causal"]
    fused_rows, chain_rows = _rows(4), _rows(4)
    _, weights = fused_attention_with_weights(
        *fused_rows, heads=H, scale=SCALE, blocked=blocked, **tables
    )
    _, chain_weights = _chain(*chain_rows, blocked, tables)
    seed = SplitMix64(8).uniform(-1, 1, (B, H, T, T))
    weights.backward(seed)
    chain_weights.backward(seed)
    for fused_row, chain_row in zip(fused_rows[:2], chain_rows[:2], strict=True):
        np.testing.assert_array_equal(fused_row.grad, chain_row.grad)
    assert fused_rows[2].grad is None and chain_rows[2].grad is None  # weights ignore v


@pytest.mark.parametrize("rotation", ROTATIONS)
def test_a_loss_on_output_and_weights_sums_both_paths(rotation: str) -> None:
    """The chain sums both shares at the weights, the fused ops at q and k: equal to rounding."""
    tables, blocked = _tables(rotation), MASKS["window 2"]
    fused_rows, chain_rows = _rows(6), _rows(6)
    rng = SplitMix64(2)
    out_seed, weight_seed = rng.uniform(-1, 1, (B, T, D)), rng.uniform(-1, 1, (B, H, T, T))
    losses = []
    for rows, attend in (
        (
            fused_rows,
            lambda q, k, v: fused_attention_with_weights(
                q, k, v, heads=H, scale=SCALE, blocked=blocked, **tables
            ),
        ),
        (chain_rows, lambda q, k, v: _chain(q, k, v, blocked, tables)),
    ):
        merged, weights = attend(*rows)
        loss = (merged * out_seed).sum() + (weights.mean(axis=1) * weight_seed[:, 0]).sum()
        loss.backward()
        losses.append(loss.item())
    assert losses[0] == losses[1]
    for fused_row, chain_row in zip(fused_rows, chain_rows, strict=True):
        np.testing.assert_allclose(fused_row.grad, chain_row.grad, rtol=0, atol=1e-14)
        assert np.abs(chain_row.grad).max() > 1e-3  # both paths carry a gradient


def test_one_entry_stands_for_the_chains_eight() -> None:
    tables, blocked = _tables("interleaved"), MASKS["causal"]
    merged, weights = fused_attention_with_weights(
        *_rows(), heads=H, scale=SCALE, blocked=blocked, **tables
    )
    chain, _ = _chain(*_rows(), blocked, tables)
    assert recorded_ops(merged) == {"fused_attention": 1}
    assert recorded_ops(weights) == {"fused_attention_weights": 1}
    assert recorded_ops(chain) == {
        "split_heads": 3,
        "pair_rotate": 2,
        "attention_weights": 1,
        "matmul": 1,
        "merge_heads": 1,
    }


@pytest.mark.parametrize("rotation", ("none", "interleaved"))
def test_gradients_match_central_differences(rotation: str) -> None:
    tables, blocked = _tables(rotation), MASKS["causal"]
    for pick in (0, 1):  # the merged heads, then the weights

        def attend(q, k, v, pick=pick):
            return fused_attention_with_weights(
                q, k, v, heads=H, scale=SCALE, blocked=blocked, **tables
            )[pick]

        report = gradcheck(attend, _rows(5, (1, T, D)))
        assert report.passed, report.message


def test_without_recording_both_results_are_constants_of_the_same_values() -> None:
    tables, blocked = _tables("half"), MASKS["causal"]
    rows = _rows(7)
    recorded, recorded_weights = fused_attention_with_weights(
        *rows, heads=H, scale=SCALE, blocked=blocked, **tables
    )
    with no_grad():
        plain, plain_weights = fused_attention_with_weights(
            *rows, heads=H, scale=SCALE, blocked=blocked, **tables
        )
    constant, constant_weights = fused_attention_with_weights(
        *(t.value for t in rows), heads=H, scale=SCALE, blocked=blocked, **tables
    )
    for result in (plain, plain_weights, constant, constant_weights):
        assert result.is_leaf and not result.requires_grad
    np.testing.assert_array_equal(plain.value, recorded.value)
    np.testing.assert_array_equal(constant_weights.value, recorded_weights.value)


def test_only_v_recorded_gives_constant_weights_and_v_its_gradient() -> None:
    q_rows, k_rows, v_rows = _rows(9)
    merged, weights = fused_attention_with_weights(
        q_rows.value, k_rows.value, v_rows, heads=H, scale=SCALE, blocked=None
    )
    chain, _ = _chain(Tensor(q_rows.value), Tensor(k_rows.value), v_rows, None, {})
    assert weights.is_leaf and recorded_ops(merged) == {"fused_attention": 1}
    seed = SplitMix64(1).uniform(-1, 1, (B, T, D))
    merged.backward(seed)
    grad = v_rows.grad.copy()
    v_rows.grad = None
    chain.backward(seed)
    np.testing.assert_array_equal(grad, v_rows.grad)


def test_large_projections_are_let_go_once_only_the_tape_holds_them() -> None:
    """The VJPs read only the projections' shapes: q, k, v rows [B, T, D] go, the rest stays."""
    batch, tokens, width = 4, 32, 96  # 98 KiB per projection, above the 64 KiB threshold
    rng = SplitMix64(12)
    w = [Tensor(rng.uniform(-0.1, 0.1, (width, width)), requires_grad=True) for _ in range(4)]
    x = Tensor(rng.uniform(-1, 1, (batch, tokens, width)))
    blocked = causal_mask(tokens, tokens)
    merged, weights = fused_attention_with_weights(
        x @ w[0], x @ w[1], x @ w[2], heads=4, scale=0.2, blocked=blocked
    )
    out = merged @ w[3]  # the fused entry's result becomes an input: its expression is over
    for projection in merged.inputs:
        with pytest.raises(TapeError, match="let go"):
            _ = projection.value
    assert weights.value.shape == (batch, 4, tokens, tokens)  # the weights are kept
    out.sum().backward()
    assert all(p.grad is not None and np.isfinite(p.grad).all() for p in w)


def test_bad_inputs_are_refused_with_typed_errors() -> None:
    q, k, v = _rows()
    tables = _tables("interleaved")
    with pytest.raises(ShapeError, match=r"fused_attention needs the projections' rows"):
        ops.fused_attention(q, k[:, :2], v, heads=H, scale=SCALE, blocked=None)
    with pytest.raises(ShapeError, match=r"fused_attention needs the projections' rows"):
        ops.fused_attention(q.reshape(B * T, D), k, v, heads=H, scale=SCALE, blocked=None)
    with pytest.raises(ShapeError, match=r"split_heads needs \[B, T, D\] with D a multiple"):
        ops.fused_attention(q, k, v, heads=5, scale=SCALE, blocked=None)
    with pytest.raises(ArgumentError, match=r"all three of cos, sin and partner.*partner None"):
        ops.fused_attention(
            q, k, v, heads=H, scale=SCALE, blocked=None, cos=tables["cos"], sin=tables["sin"]
        )
    with pytest.raises(ArgumentError, match="pair_rotate's partner must be a permutation"):
        ops.fused_attention(
            q, k, v, heads=H, scale=SCALE, blocked=None, **{**tables, "partner": [0, 0, 1, 2]}
        )
    with pytest.raises(ShapeError, match="pair_rotate's cos"):
        ops.fused_attention(
            q, k, v, heads=H, scale=SCALE, blocked=None, **{**tables, "cos": np.ones((T + 1, DH))}
        )
    with pytest.raises(ShapeError, match="attention_weights' blocked must broadcast"):
        ops.fused_attention(q, k, v, heads=H, scale=SCALE, blocked=np.zeros((T, T + 1), bool))
    with pytest.raises(ArgumentError, match="blocked must be None or a Boolean array"):
        ops.fused_attention(q, k, v, heads=H, scale=SCALE, blocked=np.zeros((T, T)))
    with pytest.raises(ArgumentError, match="Call fused_attention_with_weights instead"):
        ops.fused_attention_weights(
            q,
            k,
            v,
            heads=H,
            scale=SCALE,
            blocked=None,
            cos=None,
            sin=None,
            partner=None,
            saved=None,
            needs=None,
        )
    assert q.grad is None and k.grad is None and v.grad is None
