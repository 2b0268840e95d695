"""MultiHeadAttention(fused=True): the composed chain's values and gradients, fewer entries.

The flag is opt-in: a default layer, block or decoder records the composed chain (so the bug
zoo's mutants of its ops reach it), and a fused layer falls back to that chain for whatever the
fused op does not do (masks, grouped heads, ALiBi, QK-norm, a cache, explicit positions).
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, recorded_ops
from llm_from_scratch.bugs import bug
from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.generation import KVCache
from llm_from_scratch.generation.loop import decode_step, prefill
from llm_from_scratch.nn.attention import MultiHeadAttention
from llm_from_scratch.nn.block import TransformerBlock
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.nn.positions import ALiBiPositions, RoPEPositions
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import TrainConfig, build_model, cross_entropy

B, T, H, DH = 2, 5, 3, 4
D = H * DH
X = SplitMix64(9).uniform(-1, 1, (B, T, D))


def _pair(**options) -> tuple[MultiHeadAttention, MultiHeadAttention]:
    """The same layer (one seed) composed and fused."""
    return tuple(  # type: ignore[return-value]
        MultiHeadAttention(D, H, fused=fused, rng=SplitMix64(5), **options)
        for fused in (False, True)
    )


def _run(layer: MultiHeadAttention, seed: np.ndarray, **call) -> dict:
    x = Tensor(X, requires_grad=True)
    out, weights = layer(x, average_weights=False, **call)
    result = {"out": out.value.copy(), "weights": weights.value.copy(), "ops": recorded_ops(out)}
    out.backward(seed)
    result["grads"] = [x.grad, *(p.grad for p in layer.parameters())]
    return result


@pytest.mark.parametrize("positions", [None, "interleaved", "half"])
@pytest.mark.parametrize(("causal", "window"), [(True, None), (True, 2), (False, None)])
def test_fused_layer_is_the_composed_layer_bit_for_bit(positions, causal, window) -> None:
    scheme = None if positions is None else (lambda: RoPEPositions(DH, pairing=positions))
    layers = [
        MultiHeadAttention(
            D,
            H,
            causal=causal,
            window=window,
            positions=None if scheme is None else scheme(),
            fused=fused,
            rng=SplitMix64(5),
        )
        for fused in (False, True)
    ]
    seed = SplitMix64(10).uniform(-1, 1, (B, T, D))
    composed, fused = (_run(layer, seed) for layer in layers)
    np.testing.assert_array_equal(fused["out"], composed["out"])
    np.testing.assert_array_equal(fused["weights"], composed["weights"])
    for a, b in zip(fused["grads"], composed["grads"], strict=True):
        np.testing.assert_array_equal(a, b)
    chain = 10 if positions is None else 12  # 4 projections and the core's 6 or 8 entries
    assert sum(composed["ops"].values()) == chain
    assert fused["ops"] == {"matmul": 4, "fused_attention": 1}


def test_averaged_weights_are_the_composed_layers_and_stay_differentiable() -> None:
    composed, fused = _pair(causal=True, positions=RoPEPositions(DH))
    results = []
    for layer in (composed, fused):
        x = Tensor(X, requires_grad=True)
        out, weights = layer(x)  # weights averaged over heads: [B, T, T]
        loss = out.sum() + (weights * np.arange(T)).sum()  # reads both
        loss.backward()
        results.append((weights.value.copy(), loss.item(), x.grad))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=0, atol=1e-13)


@pytest.mark.parametrize(
    ("options", "call"),
    [
        ({"num_kv_heads": 1, "causal": True}, {}),
        ({"positions": ALiBiPositions(H), "causal": True}, {}),
        ({"qk_norm": True, "causal": True}, {}),
        ({"causal": True}, {"mask": np.triu(np.ones((T, T), dtype=bool), 2)}),
        ({}, {"key_padding_mask": np.array([[False] * T, [False] * (T - 1) + [True]])}),
    ],
    ids=["grouped", "alibi", "qk-norm", "mask", "key-padding"],
)
def test_fused_layer_falls_back_to_the_composed_chain(options, call) -> None:
    composed, fused = _pair(**options)
    seed = SplitMix64(4).uniform(-1, 1, (B, T, D))
    a, b = _run(composed, seed, **call), _run(fused, seed, **call)
    assert "fused_attention" not in b["ops"] and b["ops"] == a["ops"]
    np.testing.assert_array_equal(a["out"], b["out"])
    for x, y in zip(a["grads"], b["grads"], strict=True):
        np.testing.assert_array_equal(x, y)


def test_explicit_positions_and_other_schemes_take_the_composed_chain() -> None:
    class Shifted(RoPEPositions):  # a scheme of its own: not RoPE at positions 0 … T − 1
        def rotate(self, t, positions=None):
            return super().rotate(t, np.arange(T) + 3 if positions is None else positions)

    layer = MultiHeadAttention(
        D, H, causal=True, positions=Shifted(DH), fused=True, rng=SplitMix64(1)
    )
    out, _ = layer(Tensor(X, requires_grad=True))
    assert "fused_attention" not in recorded_ops(out) and "pair_rotate" in recorded_ops(out)


def test_a_cached_pass_of_a_fused_decoder_takes_the_composed_chain() -> None:
    models = [Decoder(13, D, 2, H, 16, fused=f, rng=SplitMix64(2)) for f in (False, True)]
    ids = np.array([[1, 4, 2, 7], [3, 3, 0, 5]])
    logits = []
    for model in models:
        cache = KVCache(model, 2, 5)
        prefill(model, cache, ids[:, :-1])
        step = decode_step(model, cache, ids[:, -1], [3, 3])
        assert "fused_attention" not in recorded_ops(step)
        logits.append(step.value)
    np.testing.assert_array_equal(logits[0], logits[1])


def test_default_models_never_take_the_fused_path() -> None:
    layer = MultiHeadAttention(D, H, causal=True, positions=RoPEPositions(DH), rng=SplitMix64(3))
    block = TransformerBlock(D, H, 16, positions="rope", rng=SplitMix64(3))
    model = Decoder(13, D, 1, H, 16, rng=SplitMix64(3))
    x = Tensor(X, requires_grad=True)
    ids = np.array([[1, 2, 3, 4, 5]])
    for out in (layer(x)[0], block(x)[0], model(ids)):
        assert "fused_attention" not in recorded_ops(out)
        assert recorded_ops(out)["attention_weights"] >= 1
    assert not (layer.fused or block.attention.fused or model.blocks[0].attention.fused)


def test_a_mutant_of_attention_weights_reaches_default_models_only() -> None:
    """The bug zoo's seam is ops.attention_weights: the fused op calls the op's own forward."""
    composed, fused = _pair(causal=True, positions=RoPEPositions(DH))
    before = [layer(Tensor(X))[0].value.copy() for layer in (composed, fused)]
    with bug("unscaled-scores"):
        during = [layer(Tensor(X))[0].value.copy() for layer in (composed, fused)]
    assert np.abs(during[0] - before[0]).max() > 1e-3  # the default layer reads the mutant
    np.testing.assert_array_equal(during[1], before[1])  # the fused layer does not


def test_the_flag_is_checked_passed_through_and_shown_only_when_on() -> None:
    for build in (
        lambda v: MultiHeadAttention(D, H, fused=v, rng=SplitMix64(0)),
        lambda v: TransformerBlock(D, H, 16, fused=v, rng=SplitMix64(0)),
        lambda v: Decoder(13, D, 1, H, 16, fused=v, rng=SplitMix64(0)),
    ):
        with pytest.raises(ArgumentError, match="fused must be True or False; got 1"):
            build(1)
    with pytest.raises(ArgumentError, match="fused must be True or False"):
        MultiHeadAttention.from_parameters(*np.eye(D)[None].repeat(4, 0), num_heads=H, fused="y")
    rng = SplitMix64(0)
    assert "fused" not in repr(MultiHeadAttention(D, H, rng=rng))
    assert repr(MultiHeadAttention(D, H, fused=True, rng=rng)).endswith(
        "fused=True, causal=False, name='attention')"
    )
    assert TransformerBlock(D, H, 16, fused=True, rng=rng).attention.fused is True
    model = Decoder(13, D, 2, H, 16, fused=True, rng=rng)
    assert all(block.attention.fused for block in model.blocks)
    assert MultiHeadAttention.from_parameters(
        *np.eye(D)[None].repeat(4, 0), num_heads=H, fused=True
    ).fused


@pytest.mark.parametrize(
    "options",
    [
        {"positions": "rope", "norm": "layer", "ffn": "gelu"},
        {"positions": "rope", "norm": "rms", "ffn": "swiglu", "rope_pairing": "half"},
        {"positions": None, "norm": "layer", "ffn": "gelu", "window": 3},
        {"positions": "learned", "max_positions": 8, "norm": "layer", "ffn": "gelu"},
    ],
    ids=["rope-layer-gelu", "rope-half-rms-swiglu", "none-window", "learned"],
)
def test_a_fused_decoder_gives_the_same_loss_and_gradients(options) -> None:
    ids = np.array([[1, 4, 2, 7, 9, 0], [3, 3, 0, 5, 12, 8]])
    results = []
    for fused in (False, True):
        model = Decoder(13, D, 2, H, 16, fused=fused, rng=SplitMix64(7), **options)
        logits = model(ids[:, :-1])
        loss = cross_entropy(logits, ids[:, 1:])
        entries = recorded_ops(loss)
        loss.backward()
        results.append((loss.item(), [p.grad for p in model.parameters()], entries))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1], results[1][1], strict=True):
        np.testing.assert_array_equal(a, b)
    assert sum(results[1][2].values()) < sum(results[0][2].values())
    assert results[1][2]["fused_attention"] == 2  # one per block


def test_the_training_command_builds_fused_models() -> None:
    model = build_model(TrainConfig(), 10, SplitMix64(0))
    assert all(block.attention.fused for block in model.blocks)


def test_the_fused_layer_follows_the_length_and_the_window_between_calls() -> None:
    """The fused path keeps the last call's causal mask; a new T or window builds a new one."""
    composed, fused = _pair(causal=True, positions=RoPEPositions(DH))
    for tokens, window in ((5, None), (3, None), (5, 2), (5, None)):
        composed.window = fused.window = window
        x = X[:, :tokens]
        np.testing.assert_array_equal(fused(Tensor(x))[0].value, composed(Tensor(x))[0].value)
    blocked = fused._fused_blocked[1]
    assert blocked.shape == (1, 1, T, T) and not blocked.flags.writeable
