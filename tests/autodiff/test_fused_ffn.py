"""fused_gated_ffn is the chain a bias-free gated layer records, bit for bit: values and gradients.

The chain is the taught one, op by op: ``matmul`` with W_g, the gate activation (SwiGLU's SiLU,
GLU's sigmoid), ``matmul`` with W_u, ``mul`` and ``matmul`` with W_2. The fused op must give
exactly the chain's output and gradients (``assert_array_equal``) whichever inputs want a
gradient, match an independent numpy formula to rounding, pass central differences, record one
entry where the chain records five, and refuse what it cannot compute by name. A gated layer
marked ``fused`` records it only where it computes the same thing: bias-free, on rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor, gradcheck, ops, recorded_ops
from llm_from_scratch.errors import ArgumentError, ShapeError, WidthError
from llm_from_scratch.generation import decoder_step_work
from llm_from_scratch.nn import GLU, Decoder, SwiGLU, TransformerBlock
from llm_from_scratch.nn.swiglu import fuse_gated
from llm_from_scratch.random import SplitMix64

D, F, DOUT = 6, 10, 5
GATES = ("silu", "sigmoid")


def _inputs(shape: tuple[int, ...], seed: int = 3) -> list[np.ndarray]:
    rng = SplitMix64(seed)
    return [
        rng.uniform(-2.0, 2.0, shape),
        rng.uniform(-1.0, 1.0, (D, F)),
        rng.uniform(-1.0, 1.0, (D, F)),
        rng.uniform(-1.0, 1.0, (F, DOUT)),
    ]


def _chain(x, w_gate, w_up, w_down, activation):
    """The composed chain, one op per step (what GatedFeedForward records)."""
    return (getattr(x @ w_gate, activation)() * (x @ w_up)) @ w_down


def _run(call, arrays, wants, seed) -> tuple[np.ndarray, list, dict]:
    tensors = [Tensor(a, requires_grad=w) for a, w in zip(arrays, wants, strict=True)]
    out = call(*tensors)
    counts = recorded_ops(out)
    out.backward(SplitMix64(seed).uniform(-1.0, 1.0, out.shape))
    return out.value, [t.grad for t in tensors], counts


@pytest.mark.parametrize("activation", GATES)
@pytest.mark.parametrize("shape", [(4, D), (2, 3, D), (2, 1, 3, D), (0, D)])
@pytest.mark.parametrize(
    "wants",
    [(True,) * 4, (False, True, True, True), (True, False, False, False), (False,) * 3 + (True,),
     (False, False, True, False), (False, True, False, False)],
)  # fmt: skip
def test_fused_ffn_is_the_chain_bit_for_bit(activation, shape, wants) -> None:
    arrays = _inputs(shape)
    fused = _run(lambda *t: ops.fused_gated_ffn(*t, activation=activation), arrays, wants, seed=9)
    chain = _run(lambda *t: _chain(*t, activation), arrays, wants, seed=9)
    np.testing.assert_array_equal(fused[0], chain[0])
    for got, expected in zip(fused[1], chain[1], strict=True):
        assert (got is None) == (expected is None)
        if got is not None:
            np.testing.assert_array_equal(got, expected)
    assert fused[2] == {"fused_gated_ffn": 1}
    assert sum(chain[2].values()) == 5 or not wants[0]  # with x recorded, all five are


@pytest.mark.parametrize("activation", GATES)
def test_fused_ffn_matches_an_independent_formula(activation) -> None:
    x, w_gate, w_up, w_down = _inputs((3, 4, D))
    a = x @ w_gate
    sigma = 1.0 / (1.0 + np.exp(-a))
    gate = a * sigma if activation == "silu" else sigma
    expected = (gate * (x @ w_up)) @ w_down
    got = ops.fused_gated_ffn(x, w_gate, w_up, w_down, activation=activation).value
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("activation", GATES)
def test_fused_ffn_passes_central_differences(activation) -> None:
    rng = SplitMix64(5)
    arrays = [rng.uniform(-1.0, 1.0, s) for s in ((2, 3, 4), (4, 5), (4, 5), (5, 3))]
    report = gradcheck(lambda *t: ops.fused_gated_ffn(*t, activation=activation), arrays)
    assert report.passed, report


@pytest.mark.parametrize(
    ("shapes", "activation", "error", "match"),
    [
        (((D,), (D, F), (D, F), (F, DOUT)), "silu", ShapeError, r"rank 2 or more.*got x \(6,\)"),
        (((2, D), (D + 1, F), (D + 1, F), (F, DOUT)), "silu", ShapeError, r"W_g \(7, 10\)"),
        (((2, D), (D, F), (D, F + 1), (F, DOUT)), "silu", ShapeError, r"W_u \(6, 11\)"),
        (((2, D), (D, F), (D, F), (F + 1, DOUT)), "silu", ShapeError, r"W_2 \[d_ff, D_out\]"),
        (((2, D), (D, F), (D, F), (F,)), "silu", ShapeError, r"W_2 \(10,\)"),
        (((2, D), (D, F), (D, F), (F, DOUT)), "relu", ArgumentError, r"one of \('silu'.*'relu'"),
        (((2, D), (D, F), (D, F), (F, DOUT)), None, ArgumentError, r"one of .*got None"),
        (((2, D), (D, F), (D, F), (F, DOUT)), np.array(["silu", "silu"]), ArgumentError, "one of"),
    ],
)
def test_fused_ffn_refuses_by_name(shapes, activation, error, match) -> None:
    arrays = [np.ones(s) for s in shapes]
    with pytest.raises(error, match=match):
        ops.fused_gated_ffn(*arrays, activation=activation)


def _layer_run(layer, x: np.ndarray) -> tuple[np.ndarray, list, dict]:
    layer.zero_grad()
    xt = Tensor(x, requires_grad=True)
    out = layer(xt)
    counts = recorded_ops(out)
    out.backward(SplitMix64(8).uniform(-1.0, 1.0, out.shape))
    return out.value, [xt.grad, *(p.grad for p in layer.parameters())], counts


@pytest.mark.parametrize("kind", [SwiGLU, GLU])
@pytest.mark.parametrize("shape", [(3, D), (2, 4, D)])
def test_a_fused_gated_layer_records_one_entry_with_the_same_numbers(kind, shape) -> None:
    plain = kind(D, F, DOUT, rng=SplitMix64(1))
    fused = kind(D, F, DOUT, rng=SplitMix64(1))
    fuse_gated(fused)
    x = SplitMix64(2).uniform(-1.0, 1.0, shape)
    a, b = _layer_run(plain, x), _layer_run(fused, x)
    np.testing.assert_array_equal(a[0], b[0])
    for got, expected in zip(b[1], a[1], strict=True):
        np.testing.assert_array_equal(got, expected)
    assert b[2] == {"fused_gated_ffn": 1} and sum(a[2].values()) == 5
    # the stages a reader inspects are the chain's, fused or not
    stages = fused.forward_with_intermediates(Tensor(x))
    np.testing.assert_array_equal(stages.Y.value, a[0])


def test_a_fused_layer_keeps_the_chain_where_the_fused_op_does_not_apply() -> None:
    biased = SwiGLU(D, F, DOUT, bias=True, rng=SplitMix64(1))
    fuse_gated(biased)
    x = Tensor(SplitMix64(2).uniform(-1.0, 1.0, (3, D)), requires_grad=True)
    assert "fused_gated_ffn" not in recorded_ops(biased(x))
    vector = SwiGLU(D, F, DOUT, rng=SplitMix64(1))
    fuse_gated(vector)
    v = Tensor(SplitMix64(2).uniform(-1.0, 1.0, (D,)), requires_grad=True)
    out = vector(v)
    assert out.shape == (DOUT,) and "fused_gated_ffn" not in recorded_ops(out)


class TanhGated(SwiGLU):
    activation = "tanh"  # a gate fused_gated_ffn does not know


class DoubledGate(SwiGLU):
    def activate(self, a: Tensor) -> Tensor:  # SiLU's name, another computation
        return a.silu() * 2.0


@pytest.mark.parametrize("kind", [TanhGated, DoubledGate])
def test_a_fused_layer_whose_gate_the_op_does_not_compute_keeps_the_chain(kind) -> None:
    plain, fused = kind(D, F, DOUT, rng=SplitMix64(1)), kind(D, F, DOUT, rng=SplitMix64(1))
    fuse_gated(fused)
    x = SplitMix64(2).uniform(-1.0, 1.0, (3, D))
    a, b = _layer_run(plain, x), _layer_run(fused, x)
    np.testing.assert_array_equal(a[0], b[0])
    assert "fused_gated_ffn" not in b[2] and b[2] == a[2]


def test_a_fused_layer_refuses_a_wrong_width_as_the_plain_one_does() -> None:
    plain = SwiGLU(D, F, DOUT, rng=SplitMix64(1))
    fused = SwiGLU(D, F, DOUT, rng=SplitMix64(1))
    fuse_gated(fused)
    x = np.ones((2, D + 1))
    messages = []
    for layer in (plain, fused):
        with pytest.raises(WidthError) as caught:
            layer(x)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and messages[0].startswith("SwiGLU gate projection: ")


@pytest.mark.parametrize("value", [None, 3, "ffn", np.ones(2)])
def test_fuse_gated_refuses_what_is_not_a_module(value) -> None:
    with pytest.raises(
        ArgumentError, match="fuse_gated marks the GatedFeedForward layers of a Module"
    ):
        fuse_gated(value)


def test_a_fused_swiglu_block_records_one_ffn_entry_and_the_same_gradients() -> None:
    def run(fused: bool):
        block = TransformerBlock(
            8, 2, 12, norm="rms", positions="rope", ffn="swiglu", fused=fused,
            rng=SplitMix64(4),
        )  # fmt: skip
        return _layer_run(block_output(block), SplitMix64(6).uniform(-1.0, 1.0, (2, 5, 8)))

    plain, fused = run(False), run(True)
    np.testing.assert_array_equal(plain[0], fused[0])
    for got, expected in zip(fused[1], plain[1], strict=True):
        np.testing.assert_array_equal(got, expected)
    assert fused[2]["fused_gated_ffn"] == 1 and "fused_gated_ffn" not in plain[2]
    # the gated network's five entries are one; attention's core is one entry already
    assert sum(plain[2].values()) - sum(fused[2].values()) == 4 + 7


class block_output:  # noqa: N801  (a layer-like view: the block's output without its weights)
    def __init__(self, block: TransformerBlock) -> None:
        self.block = block

    def __call__(self, x: Tensor) -> Tensor:
        return self.block(x, average_weights=False)[0]

    def zero_grad(self) -> None:
        self.block.zero_grad()

    def parameters(self) -> list:
        return self.block.parameters()


def test_the_work_count_of_a_fused_swiglu_decoder_is_the_plain_ones() -> None:
    def model(fused: bool) -> Decoder:
        return Decoder(
            11, 8, 2, 2, 12, norm="rms", positions="rope", ffn="swiglu", fused=fused,
            rng=SplitMix64(7),
        )  # fmt: skip

    for cached in (False, True):
        assert decoder_step_work(model(True), 6, cached=cached) == decoder_step_work(
            model(False), 6, cached=cached
        )
