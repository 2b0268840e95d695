"""FeedForward and GLU: seed facts T8–T10, gradient checks, independence, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import erf

from llm_from_scratch.autodiff import Tensor, gradcheck
from llm_from_scratch.errors import ArgumentError, RankError, WidthError
from llm_from_scratch.nn import GLU, FeedForward, SwiGLU
from llm_from_scratch.nn.feedforward import ACTIVATIONS, activate
from llm_from_scratch.random import SplitMix64

TOL = 5e-7


def draw(seed: int, shape: tuple[int, ...], low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return SplitMix64(seed).uniform(low, high, shape)


# --- T8: the scalar FFN check --------------------------------------------------------------------


def test_scalar_ffn_with_identity_activation_is_8_5() -> None:
    """Seed fact T8: the scalar FFN with an identity activation gives 8.5."""
    ffn = FeedForward.from_parameters([[2.0]], [0.5], [[3.0]], [1.0], activation="identity")
    assert ffn(np.array([1.0])).value.tolist() == [8.5]
    assert ffn(np.array([[[1.0]]])).value.tolist() == [[[8.5]]]


# --- T9: GELU = x Φ(x) ---------------------------------------------------------------------------


def test_gelu_is_x_times_normal_cdf_0_at_0_and_0841345_at_1() -> None:
    """Seed fact T9: GELU(x) = x Φ(x): 0 at 0, 0.841345 at 1, and x Φ(x) on a grid."""
    phi_0 = 0.5 * (1.0 + erf(0.0))
    assert phi_0 == 0.5
    assert activate(np.array(0.0), "gelu").item() == 0.0
    assert activate(np.array(1.0), "gelu").item() == pytest.approx(0.841345, abs=TOL)
    # x Φ(x) with Φ the standard normal CDF, written independently.
    xs = np.linspace(-3, 3, 13)
    expected = xs * 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in xs]))
    np.testing.assert_allclose(activate(xs, "gelu").value, expected, rtol=1e-14, atol=1e-15)


def test_activations_by_name() -> None:
    z = np.array([-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(activate(z, "relu").value, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(activate(z, "silu").value, [-0.268941, 0.0, 0.731059], atol=TOL)
    np.testing.assert_array_equal(activate(z, "identity").value, z)
    assert ACTIVATIONS == ("gelu", "relu", "silu", "identity", "gelu_tanh")


# --- T10: GLU 1 versus SwiGLU 0 ------------------------------------------------------------------


def test_glu_gives_1_and_swiglu_gives_0_for_a_2_b_0() -> None:
    """Seed fact T10: with a = 2 and b = 0, GLU gives a·σ(0) = 1 and SwiGLU gives a·SiLU(0) = 0."""
    # 1-wide weights so that a = x W_u = 2 (linear branch) and b = x W_g = 0 (gate projection).
    x = np.array([1.0])
    gate, up, down = [[0.0]], [[2.0]], [[1.0]]
    assert GLU.from_parameters(gate, up, down)(x).value.tolist() == [1.0]
    assert SwiGLU.from_parameters(gate, up, down)(x).value.tolist() == [0.0]


def test_glu_gates_the_up_branch_with_sigmoid_of_the_gate_branch() -> None:
    x = draw(1, (3, 2))
    Wg, Wu, Wd = draw(2, (2, 4)), draw(3, (2, 4)), draw(4, (4, 2))
    expected = ((x @ Wu) / (1.0 + np.exp(-(x @ Wg)))) @ Wd
    np.testing.assert_allclose(GLU.from_parameters(Wg, Wu, Wd)(x).value, expected, rtol=1e-13)


def test_glu_sigmoid_gate_is_bounded_silu_is_not() -> None:
    x = np.array([[1.0]])
    for b in (-20.0, 0.0, 5.0, 20.0):
        layer = GLU.from_parameters([[b]], [[1.0]], [[1.0]])
        inter = layer.forward_with_intermediates(x)
        assert 0.0 <= inter.S.item() <= 1.0
    silu_gate = SwiGLU.from_parameters([[20.0]], [[1.0]], [[1.0]]).forward_with_intermediates(x)
    assert silu_gate.S.item() > 19.0


def test_glu_layout_matches_swiglu() -> None:
    glu = GLU(2, 3, 2, rng=SplitMix64(20))
    swi = SwiGLU(2, 3, 2, rng=SplitMix64(20))
    assert [n for n, _ in glu.named_parameters()] == [
        "ffn.gate.weight",
        "ffn.up.weight",
        "ffn.down.weight",
    ]
    for (_, a), (_, b) in zip(glu.named_parameters(), swi.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.value, b.value)
    assert glu.parameter_count == 18
    assert repr(glu) == "GLU(2 -> 3 -> 2, bias-free, name='ffn')"


def test_glu_gradcheck() -> None:
    x = draw(5, (2, 2))
    Wg, Wu, Wd = draw(6, (2, 3)), draw(7, (2, 3)), draw(8, (3, 2))

    def fn(x_: Tensor, g_: Tensor, u_: Tensor, d_: Tensor) -> Tensor:
        return ((x_ @ g_).sigmoid() * (x_ @ u_)) @ d_

    np.testing.assert_allclose(
        fn(*(Tensor(a) for a in (x, Wg, Wu, Wd))).value,
        GLU.from_parameters(Wg, Wu, Wd)(x).value,
    )
    layer = GLU.from_parameters(Wg, Wu, Wd)
    result = gradcheck(lambda t: layer(t), [x], atol=2e-6, name="GLU input")
    assert result.passed, result.message


def test_glu_errors_name_the_projection() -> None:
    with pytest.raises(WidthError, match=r"^GLU down projection must read the hidden width 3"):
        GLU.from_parameters(np.ones((2, 3)), np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(RankError, match=r"^GLU gate projection: Linear weight must be rank 2"):
        GLU.from_parameters(np.ones(3), np.ones((2, 3)), np.ones((3, 2)))


# --- FeedForward construction --------------------------------------------------------------------


def test_construction_names_shapes_and_zero_biases() -> None:
    ffn = FeedForward(4, 16, rng=SplitMix64(3))
    assert [(n, p.shape) for n, p in ffn.named_parameters()] == [
        ("ffn.up.weight", (4, 16)),
        ("ffn.up.bias", (16,)),
        ("ffn.down.weight", (16, 4)),
        ("ffn.down.bias", (4,)),
    ]
    assert ffn.parameter_count == 4 * 16 + 16 + 16 * 4 + 4
    np.testing.assert_array_equal(ffn.up.bias.value, 0.0)
    assert ffn.activation == "gelu"
    assert repr(ffn) == "FeedForward(4 -> 16 -> 4, gelu, affine, name='ffn')"
    bias_free = FeedForward(4, 16, bias=False, rng=SplitMix64(3))
    assert bias_free.parameter_count == 2 * 4 * 16
    np.testing.assert_array_equal(bias_free.up.weight.value, ffn.up.weight.value)


def test_equal_seeds_equal_weights_and_xavier_bounds() -> None:
    a, b = FeedForward(3, 5, rng=SplitMix64(9)), FeedForward(3, 5, rng=SplitMix64(9))
    for (_, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        np.testing.assert_array_equal(p.value, q.value)
    bound = math.sqrt(6 / (3 + 5))
    assert np.all(np.abs(a.up.weight.value) <= bound)
    assert np.all(np.abs(a.down.weight.value) <= bound)


def test_output_width_other_than_the_input_width_as_the_gated_layers_allow() -> None:
    """FeedForward(D, hidden, output_width=d_out) maps D → d_out, as SwiGLU(D, hidden, d_out)."""
    rng = SplitMix64(5)
    ffn = FeedForward(2, 3, output_width=4, activation="relu", rng=rng)
    replay = SplitMix64(5)  # W₁ then W₂ from one stream, each with its own Xavier bound
    w1 = replay.uniform(-math.sqrt(6 / 5), math.sqrt(6 / 5), (2, 3))
    w2 = replay.uniform(-math.sqrt(6 / 7), math.sqrt(6 / 7), (3, 4))
    assert rng.state == replay.state
    x = draw(6, (5, 2))
    expected = np.maximum(x @ w1, 0.0) @ w2  # the biases start at zero
    np.testing.assert_allclose(ffn(x).value, expected, rtol=0, atol=1e-15)
    assert (ffn.input_width, ffn.hidden_width, ffn.output_width) == (2, 3, 4)
    assert repr(ffn) == "FeedForward(2 -> 3 -> 4, relu, affine, name='ffn')"
    gated = SwiGLU(2, 3, 4, rng=SplitMix64(5))
    assert gated(x).shape == ffn(x).shape == (5, 4)
    loaded = FeedForward.from_parameters(np.ones((2, 3)), None, np.ones((3, 5)), None)
    assert loaded.output_width == 5 and loaded(np.ones(2)).shape == (5,)


def test_output_width_is_validated_before_any_draw() -> None:
    rng = SplitMix64(5)
    before = rng.state
    with pytest.raises(WidthError, match="FeedForward output width"):
        FeedForward(2, 3, output_width=0, rng=rng)
    with pytest.raises(ArgumentError, match="FeedForward output width"):
        FeedForward(2, 3, output_width=2.5, rng=rng)
    assert rng.state == before


def test_up_then_down_drawn_from_one_stream() -> None:
    rng = SplitMix64(11)
    ffn = FeedForward(2, 3, rng=rng)
    replay = SplitMix64(11)
    first = replay.uniform(-math.sqrt(6 / 5), math.sqrt(6 / 5), (2, 3))
    second = replay.uniform(-math.sqrt(6 / 5), math.sqrt(6 / 5), (3, 2))
    np.testing.assert_array_equal(ffn.up.weight.value, first)
    np.testing.assert_array_equal(ffn.down.weight.value, second)
    assert rng.state == replay.state


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model_width": 0, "hidden_width": 3},
        {"model_width": 2, "hidden_width": 0},
        {"model_width": 2, "hidden_width": 3, "activation": "tanh"},
        {"model_width": 2, "hidden_width": 3, "bias": 1},
        {"model_width": 2, "hidden_width": 3, "name": ""},
    ],
)
def test_failed_construction_leaves_rng_unadvanced(kwargs: dict) -> None:
    rng = SplitMix64(5)
    before = rng.state
    with pytest.raises(ArgumentError if "name" in kwargs or "bias" in kwargs else ValueError):
        FeedForward(rng=rng, **kwargs)
    assert rng.state == before


def test_clone_shares_parameters() -> None:
    import copy

    ffn = FeedForward(2, 3, rng=SplitMix64(1))
    twin = copy.copy(ffn)
    for (_, p), (_, q) in zip(ffn.named_parameters(), twin.named_parameters(), strict=True):
        assert p is q


# --- FeedForward forward and gradients -----------------------------------------------------------


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_forward_matches_closed_form(activation: str) -> None:
    x = draw(12, (2, 3, 2))
    W1, b1, W2, b2 = draw(13, (2, 5)), draw(14, (5,)), draw(15, (5, 2)), draw(16, (2,))
    z = x @ W1 + b1
    phi = {
        "gelu": z * 0.5 * (1 + erf(z / math.sqrt(2))),
        "relu": np.maximum(z, 0),
        "silu": z / (1 + np.exp(-z)),
        "identity": z,
        "gelu_tanh": 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3))),
    }[activation]
    ffn = FeedForward.from_parameters(W1, b1, W2, b2, activation=activation)
    np.testing.assert_allclose(ffn(x).value, phi @ W2 + b2, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("activation", ["gelu", "silu", "identity", "gelu_tanh"])
def test_gradcheck_input_and_weights(activation: str) -> None:
    x = draw(17, (2, 2))
    W1, b1, W2, b2 = draw(18, (2, 3)), draw(19, (3,)), draw(20, (3, 2)), draw(21, (2,))

    def fn(x_: Tensor, w1: Tensor, c1: Tensor, w2: Tensor, c2: Tensor) -> Tensor:
        return activate(x_ @ w1 + c1, activation) @ w2 + c2

    ffn = FeedForward.from_parameters(W1, b1, W2, b2, activation=activation)
    np.testing.assert_allclose(ffn(x).value, fn(*(Tensor(a) for a in (x, W1, b1, W2, b2))).value)
    assert gradcheck(fn, [x, W1, b1, W2, b2], atol=2e-6).passed
    result = gradcheck(lambda t: ffn(t), [x], atol=2e-6, name="FeedForward")
    assert result.passed, result.message


def test_module_gradients_reach_all_four_parameters() -> None:
    ffn = FeedForward(2, 3, rng=SplitMix64(2))
    ffn(draw(22, (4, 2))).sum().backward()
    assert all(p.grad is not None for p in ffn.parameters())
    np.testing.assert_allclose(ffn.down.bias.grad, [4.0, 4.0])


def test_position_independence() -> None:
    ffn = FeedForward(2, 8, rng=SplitMix64(4))
    x = draw(23, (1, 3, 2))
    changed = x.copy()
    changed[0, 1] = [5.0, -5.0]
    before, after = ffn(x).value, ffn(changed).value
    np.testing.assert_array_equal(after[0, [0, 2]], before[0, [0, 2]])
    assert not np.allclose(after[0, 1], before[0, 1])


def test_from_parameters_allows_bias_free() -> None:
    ffn = FeedForward.from_parameters([[1.0, 2.0]], None, [[1.0], [1.0]], None, activation="relu")
    assert ffn.parameter_count == 4
    assert ffn(np.array([1.0])).value.tolist() == [3.0]
    assert repr(ffn) == "FeedForward(1 -> 2 -> 1, relu, bias-free, name='ffn')"


# --- FeedForward errors --------------------------------------------------------------------------


def test_activation_error_message() -> None:
    with pytest.raises(ArgumentError) as info:
        FeedForward(2, 3, activation="tanh", rng=SplitMix64(0))
    assert str(info.value) == (
        "FeedForward activation must be one of 'gelu', 'relu', 'silu', 'identity', "
        "'gelu_tanh'; got 'tanh'."
    )


def test_width_error_messages() -> None:
    with pytest.raises(WidthError) as info:
        FeedForward(2, 0, rng=SplitMix64(0))
    assert str(info.value) == "FeedForward hidden width must be at least 1; got 0."
    with pytest.raises(ArgumentError) as info:
        FeedForward(2.0, 3, rng=SplitMix64(0))
    assert str(info.value) == "FeedForward model width must be a positive integer; got 2.0."
    with pytest.raises(ArgumentError, match=r"FeedForward needs a SplitMix64 rng; got int "):
        FeedForward(2, 3, rng=7)


def test_from_parameters_errors() -> None:
    with pytest.raises(WidthError) as info:
        FeedForward.from_parameters(np.ones((2, 3)), None, np.ones((4, 2)), None)
    assert str(info.value) == (
        "FeedForward W₂ must read the hidden width 3 that W₁ produces; got W₂ of shape (4, 2). "
        "Its first axis must be 3."
    )
    with pytest.raises(RankError, match="weight must be rank 2"):
        FeedForward.from_parameters(np.ones(3), None, np.ones((3, 1)), None)
    with pytest.raises(WidthError, match="bias width must equal the output width 3; got 2"):
        FeedForward.from_parameters(np.ones((2, 3)), np.zeros(2), np.ones((3, 2)), None)


def test_input_errors() -> None:
    ffn = FeedForward(2, 3, rng=SplitMix64(0))
    with pytest.raises(WidthError) as info:
        ffn(np.ones((1, 3)))
    assert str(info.value) == (
        "FeedForward(2 -> 3 -> 2) expects input whose last axis is 2; got shape (1, 3)."
    )
    with pytest.raises(RankError) as info:
        ffn(1.0)
    assert str(info.value) == (
        "FeedForward(2 -> 3 -> 2) needs an input with a feature axis; got a rank-0 value. Wrap a "
        "single token as shape (2,)."
    )


def test_a_block_refuses_a_feed_forward_that_does_not_return_its_width() -> None:
    from llm_from_scratch.nn import TransformerBlock

    wide_out = FeedForward(4, 8, output_width=6, rng=SplitMix64(3))
    with pytest.raises(WidthError, match="returning 6"):
        TransformerBlock(4, 2, 8, ffn=wide_out, rng=SplitMix64(1))
