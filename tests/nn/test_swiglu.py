"""SwiGLU against the seed facts S1–S14 (seed-facts.md), closed forms and finite differences.

The literals below are the seed's numbers (six decimals, compared within 5e-7), never values
produced by the code under test.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, gradcheck
from llm_from_scratch.errors import ArgumentError, RankError, ShapeError, WidthError
from llm_from_scratch.nn import GatedFeedForward, Linear, SwiGLU
from llm_from_scratch.nn import swiglu as swiglu_module
from llm_from_scratch.nn.historical import relu_hidden, tanh_hidden
from llm_from_scratch.random import SplitMix64, xavier_uniform
from llm_from_scratch.traces import gated_evidence
from tests.swiglu_seed import (
    A_SEED,
    DA_SEED,
    DH_SEED,
    DU_SEED,
    DW_DOWN_SEED,
    DW_GATE_SEED,
    DW_UP_SEED,
    DX_SEED,
    H_SEED,
    S_SEED,
    U_SEED,
    W_DOWN,
    W_GATE,
    W_UP,
    Y_SEED,
    G,
    X,
)

TOL = 5e-7


def known() -> SwiGLU:
    return SwiGLU.from_parameters(W_GATE, W_UP, W_DOWN)


def close(actual, expected, tol: float = TOL) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, float), rtol=0, atol=tol)


# --- S1, S2: forward stages ---------------------------------------------------------------------


def test_forward_stages_match_the_seed():
    """Seed fact S2."""
    stages = known().forward_with_intermediates(Tensor(X))
    close(stages.A.value, A_SEED, 0)
    close(stages.S.value, S_SEED)
    close(stages.U.value, U_SEED, 0)
    close(stages.H.value, H_SEED)
    close(stages.Y.value, Y_SEED)


def test_stages_obey_their_formulas_and_forward_returns_Y():
    """Seed fact S2."""
    layer = known()
    stages = layer.forward_with_intermediates(Tensor(X))
    a = np.asarray(X) @ np.asarray(W_GATE)
    s = a / (1.0 + np.exp(-a))
    u = np.asarray(X) @ np.asarray(W_UP)
    np.testing.assert_allclose(stages.H.value, s * u, rtol=0, atol=1e-15)
    np.testing.assert_allclose(stages.Y.value, (s * u) @ np.asarray(W_DOWN), rtol=0, atol=1e-15)
    assert np.array_equal(layer(Tensor(X)).value, stages.Y.value)
    assert list(stages.as_dict()) == ["A", "S", "U", "H", "Y"]


def test_forward_with_intermediates_records_one_graph():
    """The output's gradient reaches X through the same recorded stages (no second path)."""
    x = Tensor(X, requires_grad=True)
    stages = known().forward_with_intermediates(x)
    stages.H.retain_grad()
    stages.Y.backward(np.asarray(G))
    close(stages.H.grad, DH_SEED, 0)
    close(x.grad, DX_SEED)


# --- S3, S4: reverse gradients -------------------------------------------------------------------


def test_gradients_from_retain_grad_probes():
    """Seed fact S3 and S4."""
    x = Tensor(X, requires_grad=True)
    layer = known()
    stages = layer.forward_with_intermediates(x)
    for t in (stages.A, stages.U, stages.H):
        t.retain_grad()
    stages.Y.backward(np.asarray(G))
    close(stages.H.grad, DH_SEED)
    close(stages.A.grad, DA_SEED)
    close(stages.U.grad, DU_SEED)
    close(x.grad, DX_SEED)
    close(layer.gate.weight.grad, DW_GATE_SEED)
    close(layer.up.weight.grad, DW_UP_SEED)
    close(layer.down.weight.grad, DW_DOWN_SEED)


def test_reverse_formulas_in_closed_form():
    """Seed fact S3, in closed form.

    dH = G W₂ᵀ, dS = dH ⊙ U, dU = dH ⊙ S, dA = dS ⊙ SiLU′(A), dX = dA W_gᵀ + dU W_uᵀ.
    """
    x, wg, wu, w2, g = (np.asarray(v, float) for v in (X, W_GATE, W_UP, W_DOWN, G))
    a, u = x @ wg, x @ wu
    sig = 1.0 / (1.0 + np.exp(-a))
    s = a * sig
    dh = g @ w2.T
    da = dh * u * (sig + a * sig * (1.0 - sig))
    du = dh * s
    close(dh, DH_SEED)
    close(da, DA_SEED)
    close(du, DU_SEED)
    close(da @ wg.T + du @ wu.T, DX_SEED)
    close(x.T @ da, DW_GATE_SEED)
    close(x.T @ du, DW_UP_SEED)
    close((s * u).T @ g, DW_DOWN_SEED)


def test_weight_gradients_are_sums_of_per_position_contributions():
    whole = gated_evidence(known(), X, G)
    parts = [
        gated_evidence(known(), X, np.where(np.arange(2)[:, None] == p, G, 0.0)) for p in (0, 1)
    ]
    for field in ("dW_gate", "dW_up", "dW_down"):
        total = getattr(parts[0], field) + getattr(parts[1], field)
        np.testing.assert_allclose(getattr(whole, field), total, rtol=0, atol=1e-15)


# --- S5: SiLU ------------------------------------------------------------------------------------


def test_silu_values_and_not_a_probability():
    """Seed fact S5."""
    s = Tensor([-1.0, 0.0, 1.0, 3.0]).silu().value
    close(s[:3], [-0.268941, 0.0, 0.731059])
    assert s[1] == 0.0
    assert s[0] < 0.0 < 1.0 < s[3]  # below zero and above one: not a probability


def test_silu_derivative_closed_form():
    """Seed fact S5."""
    z = np.linspace(-4.0, 4.0, 17)
    t = Tensor(z, requires_grad=True)
    t.silu().backward(np.ones_like(z))
    sig = 1.0 / (1.0 + np.exp(-z))
    np.testing.assert_allclose(t.grad, sig + z * sig * (1.0 - sig), rtol=0, atol=1e-14)


@pytest.mark.parametrize("magnitude", [1e4, 1e6, 1e300])
def test_silu_is_finite_and_warning_free_at_large_magnitude(magnitude):
    """Seed fact S5: filterwarnings = error: any overflow RuntimeWarning would fail this test."""
    z = Tensor([-magnitude, magnitude], requires_grad=True)
    y = z.silu()
    y.backward(np.ones(2))
    assert np.all(np.isfinite(y.value)) and np.all(np.isfinite(z.grad))
    assert y.value[0] == 0.0 and y.value[1] == magnitude  # SiLU(z) ≈ z for large positive z
    assert z.grad[0] == 0.0 and z.grad[1] == 1.0


def test_swiglu_forward_and_backward_warning_free_at_1e4():
    """Seed fact S5."""
    layer = known()
    x = Tensor([[1e4, 0.0], [-1e4, 0.0]], requires_grad=True)
    layer(x).backward(np.ones((2, 2)))
    assert np.all(np.isfinite(x.grad))
    assert all(np.all(np.isfinite(p.grad)) for p in layer.parameters())


# --- S6: parameters, initialisation, clones ------------------------------------------------------


def test_parameter_names_shapes_and_count():
    """Seed fact S6."""
    layer = SwiGLU(2, 3, 2, rng=SplitMix64(20))
    shapes = [(n, p.shape) for n, p in layer.named_parameters()]
    assert shapes == [
        ("ffn.gate.weight", (2, 3)),
        ("ffn.up.weight", (2, 3)),
        ("ffn.down.weight", (3, 2)),
    ]
    assert layer.parameter_count == 18
    assert known().parameter_count == 18
    assert all(child.bias is None for child in layer.children())
    assert (layer.input_width, layer.hidden_width, layer.output_width) == (2, 3, 2)


def test_gate_up_down_drawn_in_order_from_one_stream():
    """Seed fact S6."""
    layer = SwiGLU(2, 3, 2, rng=SplitMix64(20))
    reference = SplitMix64(20)
    for child, (fan_in, fan_out) in zip(
        (layer.gate, layer.up, layer.down), [(2, 3), (2, 3), (3, 2)], strict=True
    ):
        assert np.array_equal(child.weight.value, xavier_uniform(fan_in, fan_out, reference))


def test_equal_seeds_give_equal_layers_and_the_stream_advances_once():
    """Seed fact S6."""
    rng_a, rng_b = SplitMix64(20), SplitMix64(20)
    a, b = SwiGLU(2, 3, 2, rng=rng_a), SwiGLU(2, 3, 2, rng=rng_b)
    for (na, pa), (nb, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert na == nb and np.array_equal(pa.value, pb.value)
    reference = SplitMix64(20)
    reference.uniform(0.0, 1.0, (18,))
    assert rng_a.state == reference.state


@pytest.mark.parametrize(
    ("widths", "kind", "message"),
    [
        ((0, 3, 2), WidthError, "gate projection: Linear input width must be at least 1"),
        ((2, 0, 2), WidthError, "gate projection: Linear output width must be at least 1"),
        ((2, 3, 0), WidthError, "down projection: Linear output width must be at least 1"),
        ((2, 3.0, 2), ArgumentError, "gate projection: Linear output width must be a positive"),
    ],
)
def test_failed_construction_leaves_the_stream_unadvanced(widths, kind, message):
    """Seed fact S6."""
    rng = SplitMix64(20)
    with pytest.raises(kind, match=f"^SwiGLU {message}"):
        SwiGLU(*widths, rng=rng)
    assert rng.state == SplitMix64(20).state


def test_failure_inside_the_transaction_rolls_back(monkeypatch):
    """Seed fact S6: a failure after gate and up have drawn leaves the generator untouched."""
    real = swiglu_module.Linear
    calls = []

    def flaky(*args, **kwargs):
        calls.append(kwargs["name"])
        if kwargs["name"].endswith(".down"):
            raise WidthError("injected failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(swiglu_module, "Linear", flaky)
    rng = SplitMix64(20)
    with pytest.raises(WidthError, match=r"^SwiGLU down projection: injected failure$"):
        SwiGLU(2, 3, 2, rng=rng)
    assert calls == ["ffn.gate", "ffn.up", "ffn.down"]
    assert rng.state == SplitMix64(20).state


def test_shallow_clone_shares_parameter_leaves():
    """Seed fact S6."""
    layer = SwiGLU(2, 3, 2, rng=SplitMix64(20))
    clone = copy.copy(layer)
    for (_, p), (_, q) in zip(layer.named_parameters(), clone.named_parameters(), strict=True):
        assert p is q


def test_custom_name_prefixes_every_parameter():
    layer = SwiGLU(2, 3, 2, name="blocks.0.ffn", rng=SplitMix64(20))
    assert [n for n, _ in layer.named_parameters()] == [
        "blocks.0.ffn.gate.weight",
        "blocks.0.ffn.up.weight",
        "blocks.0.ffn.down.weight",
    ]
    assert repr(layer) == "SwiGLU(2 -> 3 -> 2, bias-free, name='blocks.0.ffn')"


def test_from_parameters_copies_values_exactly():
    layer = known()
    assert np.array_equal(layer.gate.weight.value, W_GATE)
    assert np.array_equal(layer.up.weight.value, W_UP)
    assert np.array_equal(layer.down.weight.value, W_DOWN)


# --- S7: independence ----------------------------------------------------------------------------


def test_replacing_position_0_leaves_position_1_exactly_unchanged():
    """Seed fact S7."""
    layer = known()
    before = layer(Tensor(X)).value
    after = layer(Tensor([[0.0, 0.0], [0.0, 1.0]])).value
    close(before[1], [-0.268941, 1.731059])
    assert np.array_equal(after[1], before[1])
    assert not np.array_equal(after[0], before[0])
    evidence = gated_evidence(layer, X, G)
    assert evidence.independent and list(evidence.unchanged) == [False, True]


@given(
    positions=st.integers(2, 5),
    changed=st.integers(0, 4),
    seed=st.integers(0, 2**32),
    widths=st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(1, 4)),
)
def test_any_position_change_only_touches_that_position(positions, changed, seed, widths):
    """Seed fact S7."""
    changed %= positions
    rng = SplitMix64(seed)
    layer = SwiGLU(*widths, rng=rng)
    x = rng.normal((positions, widths[0]))
    y = layer(x).value
    x[changed] = rng.normal((widths[0],))
    y2 = layer(x).value
    others = np.arange(positions) != changed
    assert np.array_equal(y[others], y2[others])


# --- S8: shapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2,), (2, 2), (1, 2, 2), (4, 7, 2), (0, 2)])
def test_leading_axes_pass_through(shape):
    """Seed fact S8."""
    assert known()(np.ones(shape)).shape == shape


def test_output_width_may_differ_from_input_width():
    """Seed fact S8."""
    layer = SwiGLU(2, 5, 4, rng=SplitMix64(20))
    assert layer(np.ones((1, 2, 2))).shape == (1, 2, 4)
    assert layer.parameter_count == 2 * 2 * 5 + 5 * 4


# --- S9: typed errors ----------------------------------------------------------------------------


def test_gate_up_input_width_mismatch():
    """Seed fact S9."""
    with pytest.raises(WidthError) as info:
        SwiGLU.from_parameters(W_GATE, [[1, 2, 3]], W_DOWN)
    assert str(info.value) == (
        "SwiGLU gate and up projections must read the same input width; got gate 2 and up 1. "
        "Give both weights the shape [input_width, hidden_width]."
    )


def test_gate_up_hidden_width_mismatch():
    """Seed fact S9."""
    with pytest.raises(WidthError) as info:
        SwiGLU.from_parameters(W_GATE, [[1, 2], [3, 4]], W_DOWN)
    assert str(info.value) == (
        "SwiGLU gate and up projections must produce the same hidden width, so their outputs "
        "can be multiplied elementwise; got gate 3 and up 2."
    )


def test_down_input_must_equal_hidden_width():
    """Seed fact S9."""
    with pytest.raises(WidthError) as info:
        SwiGLU.from_parameters(W_GATE, W_UP, [[1, 0], [0, 1]])
    assert str(info.value) == (
        "SwiGLU down projection must read the hidden width 3; got a down weight of shape "
        "(2, 2). Its first axis must be 3."
    )


@pytest.mark.parametrize(
    ("weights", "projection", "cause"),
    [
        (([1.0, 2.0], W_UP, W_DOWN), "gate", RankError),
        ((W_GATE, np.zeros((2, 0)), W_DOWN), "up", WidthError),
        ((W_GATE, W_UP, np.zeros((3, 2, 1))), "down", RankError),
        ((np.zeros((0, 3)), W_UP, W_DOWN), "gate", WidthError),
    ],
)
def test_weight_errors_name_the_projection(weights, projection, cause):
    """Seed fact S9."""
    with pytest.raises(cause, match=f"^SwiGLU {projection} projection: Linear weight") as info:
        SwiGLU.from_parameters(*weights)
    assert type(info.value) is type(info.value.__cause__) is cause
    assert str(info.value) == f"SwiGLU {projection} projection: {info.value.__cause__}"


def test_input_width_error_names_the_gate_projection():
    """Seed fact S9."""
    with pytest.raises(WidthError) as info:
        known()(np.ones((1, 2, 5)))
    assert str(info.value) == (
        "SwiGLU gate projection: Linear(2 -> 3) expects input whose last axis is 2; "
        "got shape (1, 2, 5)."
    )
    assert isinstance(info.value.__cause__, WidthError)


def test_a_failing_operation_is_named():
    """Seed fact S9."""

    class Broken(GatedFeedForward):
        activation = "silu"

        def activate(self, a):
            return a[..., :2].silu()  # drops a hidden coordinate: the product cannot align

    layer = Broken.from_parameters(W_GATE, W_UP, W_DOWN)
    with pytest.raises(ShapeError) as info:
        layer(X)
    assert type(info.value) is type(info.value.__cause__)
    assert str(info.value).startswith("Broken gate product: mul cannot combine inputs of shapes")


def test_base_class_needs_an_activation():
    layer = GatedFeedForward.from_parameters(W_GATE, W_UP, W_DOWN)
    with pytest.raises(NotImplementedError, match="names no gate activation"):
        layer(X)


def test_constructor_rejects_bad_name_and_rng():
    with pytest.raises(ArgumentError, match="SwiGLU name must be a non-empty dotted string"):
        SwiGLU(2, 3, 2, name="", rng=SplitMix64(20))
    with pytest.raises(ArgumentError, match="SwiGLU needs a SplitMix64 rng; got int"):
        SwiGLU(2, 3, 2, rng=20)


def test_children_are_plain_bias_free_linears():
    layer = known()
    assert [type(c) for c in layer.children()] == [Linear, Linear, Linear]
    assert [c.name for c in layer.children()] == ["ffn.gate", "ffn.up", "ffn.down"]


# --- S10: finite differences ---------------------------------------------------------------------


def test_finite_differences_agree_within_3e_6():
    """Seed fact S10: the composition, differentiated in X and all three weights at once."""

    def composed(x, wg, wu, w2):
        return ((x @ wg).silu() * (x @ wu)) @ w2

    inputs = [np.asarray(v, float) for v in (X, W_GATE, W_UP, W_DOWN)]
    result = gradcheck(composed, inputs, step=1e-6, atol=3e-6, name="swiglu")
    assert result.passed, result.message
    layer = known()
    result = gradcheck(layer, [np.asarray(X, float)], step=1e-6, atol=3e-6, name="SwiGLU(X)")
    assert result.passed, result.message


def test_module_weight_gradients_match_central_differences():
    """Seed fact S10: perturb each weight entry of the module's own parameters by ±1e-6."""
    layer = known()
    g = np.asarray(G)
    layer(Tensor(X)).backward(g)
    for parameter in layer.parameters():
        numeric = np.zeros(parameter.shape)
        for index in np.ndindex(parameter.shape):
            original = parameter.value[index]
            parameter.value[index] = original + 1e-6
            plus = float(np.sum(layer(X).value * g))
            parameter.value[index] = original - 1e-6
            minus = float(np.sum(layer(X).value * g))
            parameter.value[index] = original
            numeric[index] = (plus - minus) / 2e-6
        np.testing.assert_allclose(parameter.grad, numeric, rtol=0, atol=3e-6)


# --- S11: historical activations -----------------------------------------------------------------


def test_tanh_and_relu_on_negative_zero_positive():
    """Seed fact S11."""
    z = [-1.0, 0.0, 1.0]
    close(tanh_hidden(z), [math.tanh(-1.0), 0.0, math.tanh(1.0)], 1e-15)
    assert list(relu_hidden(z)) == [0.0, 0.0, 1.0]
    assert list(relu_hidden([-2.0, 0.0, 2.0])) == [0.0, 0.0, 2.0]
