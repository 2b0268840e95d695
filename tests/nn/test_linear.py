"""Linear (seed 000, facts L1–L11): values from seed-facts.md, closed forms, finite differences."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, gradcheck, numeric_jacobians
from llm_from_scratch.errors import ArgumentError, RankError, WidthError
from llm_from_scratch.nn import Linear, scalar_weighted_response
from llm_from_scratch.random import SplitMix64

# Seed facts (seed-facts.md, L1, L3, L5, L6, L7): the literals are the independent truth.
X = [[[1.0, 2.0], [-1.0, 3.0]]]
W = [[1.0, 0.0, -1.0], [2.0, 0.5, 1.0]]
B = [0.5, -0.5, 1.0]
G = [[[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]]
Y = [[[5.5, 0.5, 2.0], [5.5, 1.0, 5.0]]]
WEIGHTED_SUMS = [[[5.0, 1.0, 1.0], [5.0, 1.5, 4.0]]]
DX = [[[2.0, 1.0], [-0.5, 3.0]]]
DW = [[0.5, -2.0, -2.0], [3.5, 6.0, 1.0]]
DB = [1.5, 2.0, 0.0]


def known(bias: bool = True) -> Linear:
    return Linear.from_parameters(W, B if bias else None, name="token_projection")


# --- L1, L2: forward --------------------------------------------------------------------------


def test_forward_values_and_shape_exact() -> None:
    """Seed fact L1: Y = XW + b on the fixture, value for value, shape [1, 2, 3]."""
    y = known()(Tensor(X))
    assert y.shape == (1, 2, 3)
    np.testing.assert_array_equal(y.value, np.array(Y))


def test_weighted_sums_are_the_bias_free_output() -> None:
    """Seed fact L1: the weighted sums XW are the bias-free layer's output."""
    np.testing.assert_array_equal(known(bias=False)(Tensor(X)).value, np.array(WEIGHTED_SUMS))


def test_scalar_weighted_response_is_first_coordinate() -> None:
    """Seed fact L2: the scalar response 1·1 + 2·2 + 0.5 = 5.5 is the first output coordinate."""
    assert scalar_weighted_response([1.0, 2.0], [1.0, 2.0], 0.5) == 5.5
    assert known()(Tensor(X)).value[0, 0, 0] == 5.5


def test_scalar_response_rejects_mismatched_lengths() -> None:
    """Seed fact L2: the scalar response refuses inputs and weights of different lengths."""
    with pytest.raises(WidthError) as info:
        scalar_weighted_response([1.0, 2.0], [1.0], 0.5)
    assert str(info.value) == (
        "A weighted response pairs each input with one weight; got 2 inputs and 1 weights. "
        "Pass equally long sequences."
    )


def test_scalar_response_is_not_used_by_linear() -> None:
    """Seed fact L2: Linear computes with matrix products, not the scalar teaching helper."""
    import inspect

    from llm_from_scratch.nn import linear

    assert "scalar_weighted_response" not in inspect.getsource(linear)


# --- L3, L7: reverse --------------------------------------------------------------------------


def test_reverse_gradients_exact() -> None:
    """Seed fact L3: dX, dW and db for the fixture's upstream gradient, exactly."""
    layer = known()
    x = Tensor(X, requires_grad=True)
    layer(x).backward(np.array(G))
    np.testing.assert_array_equal(x.grad, np.array(DX))
    np.testing.assert_array_equal(layer.weight.grad, np.array(DW))
    np.testing.assert_array_equal(layer.bias.grad, np.array(DB))


def test_gradients_match_the_position_formulas() -> None:
    """Seed fact L3: dX = G Wᵀ, dW = Σ_t x_tᵀ g_t and db = Σ_t g_t, position by position."""
    # dX_p = G_p Wᵀ, dW = Σ_p X_pᵀ G_p, db = Σ_p G_p, written out position by position.
    x, g, w = np.array(X)[0], np.array(G)[0], np.array(W)
    layer = known()
    xt = Tensor(X, requires_grad=True)
    layer(xt).backward(np.array(G))
    for p in range(2):
        np.testing.assert_array_equal(xt.grad[0, p], g[p] @ w.T)
    np.testing.assert_array_equal(layer.weight.grad, sum(np.outer(x[p], g[p]) for p in range(2)))
    np.testing.assert_array_equal(layer.bias.grad, g[0] + g[1])


def test_bias_gradient_sums_three_positions() -> None:
    """Seed fact L7: the bias gradient sums the upstream gradient over all three positions."""
    layer = Linear.from_parameters([[1.0, 2.0], [3.0, 4.0]], [0.0, 0.0], name="small")
    x = Tensor(np.ones((3, 2)), requires_grad=True)
    layer(x).backward(np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(layer.bias.grad, np.array([4.0, 6.0]))


# --- L4: shapes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((2,), (3,)),
        ((2, 2), (2, 3)),
        ((1, 2, 2), (1, 2, 3)),
        ((4, 7, 2), (4, 7, 3)),
        ((0, 2), (0, 3)),
    ],
)
def test_only_the_last_axis_changes_width_for_each_leading_shape(
    shape: tuple[int, ...], expected: tuple[int, ...]
) -> None:
    """Seed fact L4: [2], [2, 2], [1, 2, 2], [4, 7, 2], [0, 2] keep their leading axes, width 3."""
    assert known()(Tensor(np.ones(shape))).shape == expected


def test_rank_one_input_promoted_and_restored() -> None:
    """Seed fact L4: a [2] input is computed as [1, 2] and returned as [3], gradient [2]."""
    layer = known()
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = layer(x)
    assert y.shape == (3,)
    np.testing.assert_array_equal(y.value, [5.5, 0.5, 2.0])
    y.backward(np.array([1.0, 0.0, -1.0]))
    assert x.grad.shape == (2,)
    np.testing.assert_array_equal(x.grad, [2.0, 1.0])


def test_empty_leading_axis_gives_zero_gradients() -> None:
    """Seed fact L4: an input with zero positions passes through; backward gives zero dW and db."""
    layer = known()
    x = Tensor(np.ones((0, 2)), requires_grad=True)
    layer(x).backward(np.ones((0, 3)))
    assert x.grad.shape == (0, 2)
    np.testing.assert_array_equal(layer.weight.grad, np.zeros((2, 3)))
    np.testing.assert_array_equal(layer.bias.grad, np.zeros(3))


@given(
    leading=st.lists(st.integers(0, 3), min_size=0, max_size=3),
    d_in=st.integers(1, 4),
    d_out=st.integers(1, 4),
    seed=st.integers(0, 2**32),
)
def test_any_leading_axes_pass_through_unchanged(
    leading: list[int], d_in: int, d_out: int, seed: int
) -> None:
    """Seed fact L4: for drawn shapes only the last axis changes, and values match XW + b."""
    rng = SplitMix64(seed)
    layer = Linear(d_in, d_out, rng=rng)
    x = rng.uniform(-1.0, 1.0, (*leading, d_in))
    y = layer(Tensor(x))
    assert y.shape == (*leading, d_out)
    expected = x.reshape(-1, d_in) @ layer.weight.value + layer.bias.value
    np.testing.assert_allclose(y.value.reshape(-1, d_out), expected, rtol=0, atol=1e-12)


# --- L5, L6: affine vs bias-free ---------------------------------------------------------------


def test_bias_free_output_and_parameter_counts_9_and_6() -> None:
    """Seed fact L5: the bias-free output is XW; 9 parameters with a bias, 6 without."""
    np.testing.assert_array_equal(
        known(bias=False)(Tensor(X)).value, np.array([[[5.0, 1.0, 1.0], [5.0, 1.5, 4.0]]])
    )
    assert known().parameter_count == 9
    assert known(bias=False).parameter_count == 6
    rng = SplitMix64(0)
    assert Linear(2, 3, rng=rng).parameter_count == 9
    assert Linear(2, 3, bias=False, rng=rng).parameter_count == 6


def test_origin_is_not_preserved_by_affine() -> None:
    """Seed fact L6: the affine layer maps 0 to b; the bias-free one maps 0 to 0."""
    origin = Tensor([0.0, 0.0])
    np.testing.assert_array_equal(known()(origin).value, [0.5, -0.5, 1.0])
    np.testing.assert_array_equal(known(bias=False)(origin).value, [0.0, 0.0, 0.0])


def test_affine_fails_additivity_bias_free_satisfies_it() -> None:
    """Seed fact L6: f(u + v) = f(u) + f(v) holds without a bias and fails with one."""
    u, v = Tensor([1.0, 2.0]), Tensor([-1.0, 3.0])
    both = Tensor([0.0, 5.0])
    affine, plain = known(), known(bias=False)
    assert not np.array_equal(affine(both).value, affine(u).value + affine(v).value)
    np.testing.assert_array_equal(plain(both).value, plain(u).value + plain(v).value)


# --- L8: typed errors, messages, precedence --------------------------------------------------

ERROR_CASES = [
    (
        "weight rank",
        lambda: Linear.from_parameters([1.0, 2.0, 3.0]),
        RankError,
        "Linear weight must be rank 2, [input_width, output_width]; got rank 1, shape (3,).",
    ),
    (
        "zero input width (weight)",
        lambda: Linear.from_parameters(np.zeros((0, 3))),
        WidthError,
        "Linear weight must read at least one input feature; got shape (0, 3).",
    ),
    (
        "zero output width (weight [2, 0])",
        lambda: Linear.from_parameters(np.zeros((2, 0))),
        WidthError,
        "Linear weight must produce at least one output feature; got shape (2, 0).",
    ),
    (
        "bias rank",
        lambda: Linear.from_parameters(W, [[0.5, -0.5, 1.0]]),
        RankError,
        "Linear bias must be rank 1, [output_width]; got rank 2, shape (1, 3).",
    ),
    (
        "bias width",
        lambda: Linear.from_parameters(W, [0.5, -0.5]),
        WidthError,
        "Linear bias width must equal the output width 3; got 2.",
    ),
    (
        "input rank 0",
        lambda: known()(Tensor(2.0)),
        RankError,
        "Linear(2 -> 3) needs an input with a feature axis; got a rank-0 value. "
        "Wrap a single feature vector as shape (2,).",
    ),
    (
        "input width",
        lambda: known()(Tensor(np.ones((1, 2, 5)))),
        WidthError,
        "Linear(2 -> 3) expects input whose last axis is 2; got shape (1, 2, 5).",
    ),
    (
        "constructor zero input width",
        lambda: Linear(0, 3, rng=SplitMix64(19)),
        WidthError,
        "Linear input width must be at least 1; got 0.",
    ),
    (
        "constructor zero output width",
        lambda: Linear(2, 0, rng=SplitMix64(19)),
        WidthError,
        "Linear output width must be at least 1; got 0.",
    ),
    (
        "constructor non-integer width",
        lambda: Linear(2.0, 3, rng=SplitMix64(19)),
        ArgumentError,
        "Linear input width must be a positive integer; got 2.0.",
    ),
]


@pytest.mark.parametrize(
    ("label", "call", "kind", "message"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES]
)
def test_each_refusal_has_its_type_and_message(label: str, call, kind: type, message: str) -> None:
    """Seed fact L8: each bad weight, bias, input or width raises its type and exact message."""
    with pytest.raises(kind) as info:
        call()
    assert type(info.value) is kind
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


def test_first_failing_check_wins() -> None:
    """Seed fact L8: a value breaking several rules reports the first in the documented order."""
    # A rank-3 weight with a bad bias reports the weight; a [0, 0] weight reports input width.
    with pytest.raises(RankError, match=r"^Linear weight must be rank 2"):
        Linear.from_parameters(np.zeros((2, 3, 1)), [[1.0]])
    with pytest.raises(WidthError, match="must read at least one input feature"):
        Linear.from_parameters(np.zeros((0, 0)), [[1.0]])
    with pytest.raises(WidthError, match="must produce at least one output feature"):
        Linear.from_parameters(np.zeros((2, 0)), [[1.0]])
    with pytest.raises(RankError, match=r"^Linear bias must be rank 1"):
        Linear.from_parameters(W, np.zeros((2, 2)))
    with pytest.raises(WidthError, match=r"^Linear input width must be at least 1"):
        Linear(0, 0, rng=SplitMix64(1))
    with pytest.raises(WidthError, match=r"^Linear output width must be at least 1"):
        Linear(2, 0, name="", rng=SplitMix64(1))
    with pytest.raises(RankError, match="needs an input with a feature axis"):
        known()(Tensor(5.0))


def test_forward_error_leaves_gradients_untouched() -> None:
    """Seed fact L8: a refused forward records nothing, so the parameters get no gradient."""
    layer = known()
    with pytest.raises(WidthError, match="expects input whose last axis is 2"):
        layer(Tensor(np.ones((2, 5)), requires_grad=True))
    assert layer.weight.grad is None and layer.bias.grad is None


# --- L9: initialisation ------------------------------------------------------------------------


def test_init_weight_within_xavier_bound_bias_zero_names_from_layer() -> None:
    """Seed fact L9: weights lie within √(6/5), the bias is zero, names follow the layer's."""
    layer = Linear(2, 3, name="token_projection", rng=SplitMix64(19))
    bound = np.sqrt(6.0 / 5.0)
    assert np.all(np.abs(layer.weight.value) <= bound)
    assert layer.weight.shape == (2, 3)
    np.testing.assert_array_equal(layer.bias.value, np.zeros(3))
    assert [n for n, _ in layer.named_parameters()] == [
        "token_projection.weight",
        "token_projection.bias",
    ]


def test_weight_is_the_splitmix_stream_mapped_to_the_xavier_interval() -> None:
    """Seed fact L9: the weight is SplitMix64's uniforms mapped to (−a, a), in row order."""
    # Independent of the package: SplitMix64 written out here, u = (z >> 11)·2⁻⁵³, w = -a + 2a·u.
    mask, state, draws = (1 << 64) - 1, 19, []
    for _ in range(6):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        draws.append(((z ^ (z >> 31)) >> 11) * 2.0**-53)
    a = np.sqrt(6.0 / 5.0)
    expected = (-a + 2 * a * np.array(draws)).reshape(2, 3)
    layer = Linear(2, 3, name="token_projection", rng=SplitMix64(19))
    np.testing.assert_allclose(layer.weight.value, expected, rtol=0, atol=1e-15)


def test_equal_seeds_equal_weights() -> None:
    """Seed fact L9: two layers drawn from equal seeds are equal, weight for weight."""
    first = Linear(2, 3, name="token_projection", rng=SplitMix64(19))
    second = Linear(2, 3, name="token_projection", rng=SplitMix64(19))
    np.testing.assert_array_equal(first.weight.value, second.weight.value)
    other = Linear(2, 3, name="token_projection", rng=SplitMix64(20))
    assert not np.array_equal(first.weight.value, other.weight.value)


@pytest.mark.parametrize(
    "bad",
    [
        {"input_width": 0, "output_width": 3},
        {"input_width": 2, "output_width": 0},
        {"input_width": 2, "output_width": 3, "name": ""},
        {"input_width": 2, "output_width": 3, "name": "a..b"},
        {"input_width": True, "output_width": 3},
    ],
)
def test_failed_construction_leaves_generator_unadvanced(bad: dict) -> None:
    """Seed fact L9: a refused construction draws nothing from the generator."""
    rng = SplitMix64(19)
    before = rng.state
    with pytest.raises(ValueError):
        Linear(rng=rng, **bad)
    assert rng.state == before
    # ... so the next layer drawn is the one a fresh SplitMix64(19) would give.
    after = Linear(2, 3, rng=rng)
    np.testing.assert_array_equal(
        after.weight.value, Linear(2, 3, rng=SplitMix64(19)).weight.value
    )


def test_successful_construction_advances_by_the_weight_draws() -> None:
    """Seed fact L9: a built layer advances the generator by exactly its six weight draws."""
    rng, reference = SplitMix64(19), SplitMix64(19)
    Linear(2, 3, rng=rng)
    reference.u64_array(6)
    assert rng.state == reference.state


def test_clone_shares_parameter_leaves() -> None:
    """Seed fact L9: a shallow clone holds the same leaves, so gradients land in one place."""
    layer = Linear(2, 3, name="token_projection", rng=SplitMix64(19))
    clone = copy.copy(layer)
    assert clone.weight is layer.weight
    assert clone.bias is layer.bias
    assert [p for p in clone.parameters()] == [p for p in layer.parameters()]
    x = Tensor(X)
    clone(x).backward(np.array(G))
    np.testing.assert_array_equal(layer.bias.grad, np.array(DB))


# --- L10: finite differences -------------------------------------------------------------------


def test_reverse_matches_central_differences_step_1e6_tol_2e6() -> None:
    """Seed fact L10: reverse-mode gradients match central differences (step 1e-6) within 2e-6."""
    layer = known()
    x = Tensor(X, requires_grad=True)
    layer(x).backward(np.array(G))
    g = np.array(G)

    def loss(xv: Tensor, wv: Tensor, bv: Tensor) -> Tensor:
        return (Linear.from_parameters(wv, bv)(xv) * Tensor(g)).sum()

    numeric = numeric_jacobians(loss, [np.array(X), np.array(W), np.array(B)], step=1e-6)
    for analytic, central in zip(
        [x.grad, layer.weight.grad, layer.bias.grad], numeric, strict=True
    ):
        assert np.max(np.abs(analytic - central)) <= 2e-6


def test_full_jacobian_gradcheck_of_input() -> None:
    """Seed fact L10: the whole Jacobian with respect to the input passes gradcheck."""
    layer = known()
    result = gradcheck(lambda x: layer(x), [np.array(X)], step=1e-6, atol=2e-6)
    assert result.passed, result.message


# --- L11: position independence and collapse ---------------------------------------------------


def test_changing_one_position_leaves_the_other_exactly() -> None:
    """Seed fact L11: editing one input position leaves the other output position bit for bit."""
    layer = known()
    before = layer(Tensor(X)).value
    changed = np.array(X)
    changed[0, 0] = [7.0, -4.0]
    after = layer(Tensor(changed)).value
    np.testing.assert_array_equal(after[0, 1], before[0, 1])
    assert not np.array_equal(after[0, 0], before[0, 0])


def test_stacked_bias_free_projections_collapse() -> None:
    """Seed fact L11: two bias-free projections equal one with weight W₁W₂, up to rounding."""
    rng = SplitMix64(7)
    first = Linear(2, 3, bias=False, rng=rng)
    second = Linear(3, 4, bias=False, rng=rng)
    x = np.array(X)
    stacked = second(first(Tensor(x))).value
    merged = Linear.from_parameters(first.weight.value @ second.weight.value)(Tensor(x)).value
    np.testing.assert_allclose(stacked, merged, rtol=0, atol=1e-12)


def test_repr_names_widths_and_policy() -> None:
    assert repr(known()) == "Linear(2 -> 3, affine, name='token_projection')"
    assert repr(known(bias=False)) == "Linear(2 -> 3, bias-free, name='token_projection')"
