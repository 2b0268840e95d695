"""Positions: sinusoidal table (T12), ALiBi (T13), RoPE (T14), the attention position schemes."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, gradcheck
from llm_from_scratch.errors import ArgumentError, RankError, ShapeError, WidthError
from llm_from_scratch.nn import (
    ALiBiPositions,
    RoPEPositions,
    RotaryEmbedding,
    alibi_bias,
    alibi_slopes,
    pair_frequencies,
    pairing_permutation,
    rotate_pairs,
    sinusoidal_encoding,
)
from llm_from_scratch.nn.positions import rotation_tables
from llm_from_scratch.random import SplitMix64

# --- T12: the sinusoidal table ---------------------------------------------------------------


def test_width_8_frequencies_are_1_01_001_0001():
    """Seed fact T12: the width-8 sinusoidal table uses frequencies 1, 0.1, 0.01, 0.001."""
    np.testing.assert_allclose(pair_frequencies(8), [1.0, 0.1, 0.01, 0.001], rtol=1e-14)


def test_position_2_starts_sin2_cos2_sin02_cos02():
    """Seed fact T12: row 2 of the table starts sin 2, cos 2, sin 0.2, cos 0.2."""
    row = sinusoidal_encoding(3, 8)[2]
    expected = [math.sin(2), math.cos(2), math.sin(0.2), math.cos(0.2)]
    np.testing.assert_allclose(row[:4], expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        row[4:], [math.sin(0.02), math.cos(0.02), math.sin(0.002), math.cos(0.002)], atol=1e-15
    )


def test_sinusoidal_table_matches_the_formula_entry_by_entry():
    table = sinusoidal_encoding(5, 6, base=100.0)
    assert table.shape == (5, 6)
    for t in range(5):
        for j in range(3):
            omega = 100.0 ** (-2 * j / 6)
            assert table[t, 2 * j] == pytest.approx(math.sin(t * omega), abs=1e-15)
            assert table[t, 2 * j + 1] == pytest.approx(math.cos(t * omega), abs=1e-15)


def test_sinusoidal_position_zero_is_zeros_and_ones_and_rows_differ():
    table = sinusoidal_encoding(4, 8)
    np.testing.assert_array_equal(table[0], [0, 1, 0, 1, 0, 1, 0, 1])
    assert len({tuple(row) for row in table}) == 4


def test_sinusoidal_empty_table_has_shape_zero_by_width():
    assert sinusoidal_encoding(0, 4).shape == (0, 4)


def test_odd_width_is_a_typed_error_with_the_fix():
    with pytest.raises(WidthError) as info:
        sinusoidal_encoding(3, 7)
    message = str(info.value)
    assert "must be even; got 7" in message
    assert "Use 6 or 8" in message


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((-1, 4), "num_positions must be a non-negative integer; got -1."),
        ((2, 0), "width must be at least 1; got 0."),
        ((2, 4.0), "width must be a positive integer; got 4.0."),
        ((True, 4), "num_positions must be a non-negative integer; got True."),
        ((2, 4, 0.0), "base must be greater than 0; got 0.0. Use a base such as 10000.0."),
        ((2, 4, "x"), "base must be a real number; got 'x'."),
    ],
)
def test_sinusoidal_argument_errors(args, fragment):
    with pytest.raises(ArgumentError) as info:
        sinusoidal_encoding(*args)
    assert fragment in str(info.value)


# --- T13: ALiBi ------------------------------------------------------------------------------


def paper_slopes(n):
    """The ALiBi paper's get_slopes, written out independently of the package."""

    def power_of_two(k):
        start = 2 ** (-(2 ** -(math.log2(k) - 3)))
        return [start * start**i for i in range(k)]

    if math.log2(n).is_integer():
        return power_of_two(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_two(closest) + paper_slopes(2 * closest)[0::2][: n - closest]


def test_eight_heads_have_slopes_one_half_to_one_over_256():
    """Seed fact T13: ALiBi with 8 heads has slopes 1/2, 1/4, …, 1/256."""
    expected = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    np.testing.assert_array_equal(alibi_slopes(8), expected)


def test_six_heads_follow_the_papers_rule():
    """Seed fact T13: six heads: the four-head slopes, then the 1st and 3rd eight-head ones."""
    # four heads: 1/4 … 1/256; then the 1st and 3rd slopes of the eight-head sequence
    expected = [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]
    np.testing.assert_allclose(alibi_slopes(6), expected, rtol=1e-15)
    np.testing.assert_allclose(alibi_slopes(6), paper_slopes(6), rtol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 12, 16, 20, 24, 33])
def test_alibi_slopes_equal_the_paper_for_many_counts(n):
    np.testing.assert_allclose(alibi_slopes(n), paper_slopes(n), rtol=1e-13)
    assert np.all(alibi_slopes(n) > 0)


def test_slope_01_at_distance_3_lowers_the_score_by_03():
    """Seed fact T13: slope 0.1 at distance 3 lowers the score by 0.3."""
    bias = alibi_bias(1, 4, 4, slopes=[0.1])[0]
    assert bias[3, 0] == pytest.approx(-0.3, abs=1e-15)  # query 3, key 0: distance 3
    scores = np.full((4, 4), 1.25)
    assert (scores + bias)[3, 0] == pytest.approx(1.25 - 0.3, abs=1e-15)
    assert bias[0, 3] == 0.0  # the future is the causal mask's business, not the bias's


def test_custom_slopes_and_their_errors():
    np.testing.assert_array_equal(
        alibi_bias(2, 2, 2, slopes=[0.5, 2.0]), [[[0, 0], [-0.5, 0]], [[0, 0], [-2.0, 0]]]
    )
    scheme = ALiBiPositions(2, slopes=[0.5, 2.0])
    np.testing.assert_array_equal(scheme.slopes, [0.5, 2.0])
    with pytest.raises(ArgumentError) as info:
        alibi_bias(3, 2, 2, slopes=[0.5, 2.0])
    assert "3 heads need slopes of shape (3,); got shape (2,)" in str(info.value)
    for bad in ([0.5, 0.0], [0.5, -1.0], [0.5, float("nan")]):
        with pytest.raises(ArgumentError) as info:
            alibi_bias(2, 2, 2, slopes=bad)
        assert "finite and positive" in str(info.value)
    with pytest.raises(ArgumentError):
        ALiBiPositions(2, slopes=["a", "b"])


def test_alibi_bias_entries_and_future_left_to_the_causal_mask():
    slopes = [2**-4, 2**-8]  # two heads: 2^(-8·1/2), 2^(-8·2/2)
    bias = alibi_bias(2, 3, 3)
    assert bias.shape == (2, 3, 3)
    for h in range(2):
        for i in range(3):
            for j in range(3):
                expected = -slopes[h] * (i - j) if j <= i else 0.0
                assert bias[h, i, j] == expected
    assert not np.signbit(bias[:, np.arange(3), np.arange(3)]).any()  # +0.0, not −0.0


def test_alibi_bias_queries_are_the_last_positions():
    full = alibi_bias(4, 6, 6)
    np.testing.assert_array_equal(alibi_bias(4, 2, 6), full[:, 4:, :])
    np.testing.assert_array_equal(alibi_bias(4, 1, 6)[:, 0, :], full[:, 5, :])


def test_alibi_errors():
    with pytest.raises(ShapeError) as info:
        alibi_bias(2, 5, 3)
    assert "query_len must be <= key_len; got query_len=5, key_len=3" in str(info.value)
    for bad in (0, -2, 2.0, True):
        with pytest.raises(ArgumentError) as info:
            alibi_slopes(bad)
        assert f"got {bad!r}" in str(info.value)


# --- T14: RoPE ---------------------------------------------------------------------------------


def rotation(theta):
    return np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])


def test_one_pair_rotates_by_the_formula():
    """Seed fact T14: RoPE rotates one coordinate pair by the 2×2 rotation of its angle."""
    a, b, t, omega = 0.7, -1.3, 5.0, 0.1
    out = rotate_pairs(Tensor([a, b]), [t * omega]).value
    expected = [
        a * math.cos(t * omega) - b * math.sin(t * omega),
        a * math.sin(t * omega) + b * math.cos(t * omega),
    ]
    np.testing.assert_allclose(out, expected, atol=1e-15)


def test_q_equals_k_equals_1_0_at_0_and_90_degrees():
    """Seed fact T14: q = k = (1, 0) score 1 at equal angles, 0 at 90° apart, after any shift."""
    q = k = Tensor([1.0, 0.0])
    same = (rotate_pairs(q, [0.0]) * rotate_pairs(k, [0.0])).sum().item()
    assert same == 1.0
    turned = rotate_pairs(k, [math.pi / 2]).value
    np.testing.assert_allclose(turned, [0.0, 1.0], atol=1e-16)
    quarter = (rotate_pairs(q, [0.0]) * rotate_pairs(k, [math.pi / 2])).sum().item()
    assert abs(quarter) < 1e-16
    shift = 0.83
    both = (rotate_pairs(q, [shift]) * rotate_pairs(k, [math.pi / 2 + shift])).sum().item()
    assert abs(both) < 1e-15


def test_relative_angle_identity_on_one_pair():
    """Seed fact T14: ⟨R(a)q, R(b)k⟩ = ⟨q, R(b − a)k⟩ on one pair."""
    rng = SplitMix64(14)
    q, k = rng.normal((2,)), rng.normal((2,))
    omega, i, j = 0.37, 3.0, 11.0
    left = (rotation(i * omega) @ q) @ (rotation(j * omega) @ k)
    right = q @ rotation((j - i) * omega) @ k
    rq = rotate_pairs(Tensor(q), [i * omega]).value
    rk = rotate_pairs(Tensor(k), [j * omega]).value
    assert rq @ rk == pytest.approx(left, abs=1e-12)
    assert rq @ rk == pytest.approx(right, abs=1e-12)


def test_rotary_frequencies_and_default_positions():
    rope = RotaryEmbedding(8)
    np.testing.assert_allclose(rope.frequencies, [1, 0.1, 0.01, 0.001], rtol=1e-14)
    x = Tensor(np.ones((3, 8)))
    out = rope(x).value
    for t in range(3):
        for jj, omega in enumerate([1.0, 0.1, 0.01, 0.001]):
            c, s = math.cos(t * omega), math.sin(t * omega)
            np.testing.assert_allclose(out[t, 2 * jj : 2 * jj + 2], [c - s, s + c], atol=1e-15)


def test_default_positions_reuse_tables_that_follow_length_pairing_and_frequencies():
    """The cached tables for positions 0…T−1 give what explicit positions give, always."""
    rope = RotaryEmbedding(6)
    x = SplitMix64(4).normal((2, 5, 6))
    for tokens in (5, 3, 5):  # a second length, then the first again from the cache
        rows = x[:, :tokens]
        explicit = rope(rows, positions=np.arange(tokens)).value
        np.testing.assert_array_equal(rope(rows).value, explicit)
    rope.pairing = "half"  # a changed pairing must not reuse the interleaved tables
    np.testing.assert_array_equal(rope(x).value, rope(x, positions=np.arange(5)).value)
    np.testing.assert_array_equal(
        rope(x).value, rotate_pairs(x, rope.angles(np.arange(5)), "half").value
    )
    rope.frequencies = rope.frequencies * 2.0  # new frequencies: new tables
    np.testing.assert_array_equal(rope(x).value, rope(x, positions=np.arange(5)).value)


def test_rotary_float_positions_and_batch_axes():
    rope = RotaryEmbedding(4, base=100.0)
    x = Tensor(SplitMix64(3).normal((2, 3, 5, 4)))
    positions = np.array([0.5, 1.5, 2.0, 7.25, 9.0])
    out = rope(x, positions).value
    for t, p in enumerate(positions):
        for jj in range(2):
            omega = 100.0 ** (-2 * jj / 4)
            pair = x.value[..., t, 2 * jj : 2 * jj + 2]
            expected = pair @ rotation(p * omega).T
            np.testing.assert_allclose(out[..., t, 2 * jj : 2 * jj + 2], expected, atol=1e-14)


@given(
    seed=st.integers(0, 2**32),
    pairs=st.integers(1, 4),
    rows=st.integers(1, 5),
    pairing=st.sampled_from(["interleaved", "half"]),
)
def test_rope_preserves_every_pair_length_and_the_norm(seed, pairs, rows, pairing):
    rng = SplitMix64(seed)
    width = 2 * pairs
    x = rng.normal((rows, width))
    positions = rng.uniform(-50.0, 50.0, (rows,))
    out = RotaryEmbedding(width, pairing=pairing)(Tensor(x), positions).value
    np.testing.assert_allclose(
        np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13
    )
    if pairing == "interleaved":
        before, after = x.reshape(rows, pairs, 2), out.reshape(rows, pairs, 2)
    else:
        before = np.stack([x[:, :pairs], x[:, pairs:]], axis=-1)
        after = np.stack([out[:, :pairs], out[:, pairs:]], axis=-1)
    np.testing.assert_allclose(
        np.linalg.norm(after, axis=-1), np.linalg.norm(before, axis=-1), rtol=1e-13
    )


@given(
    seed=st.integers(0, 2**32),
    pairs=st.integers(1, 4),
    pairing=st.sampled_from(["interleaved", "half"]),
)
def test_rope_score_depends_only_on_the_offset(seed, pairs, pairing):
    rng = SplitMix64(seed)
    width = 2 * pairs
    q, k = Tensor(rng.normal((1, width))), Tensor(rng.normal((1, width)))
    i, j, shift = rng.uniform(-20.0, 20.0, (3,))
    rope = RotaryEmbedding(width, pairing=pairing)

    def score(pi, pj):
        return (rope(q, [pi]) * rope(k, [pj])).sum().item()

    assert score(i + shift, j + shift) == pytest.approx(score(i, j), abs=1e-12)
    assert score(0.0, j - i) == pytest.approx(score(i, j), abs=1e-12)


def test_rope_score_is_not_a_function_of_distance_alone():
    rope = RotaryEmbedding(2)
    k = Tensor([[1.0, 0.0]])
    one = (rope(Tensor([[1.0, 0.0]]), [0.0]) * rope(k, [1.0])).sum().item()
    other = (rope(Tensor([[0.0, 1.0]]), [0.0]) * rope(k, [1.0])).sum().item()
    assert one == pytest.approx(math.cos(1.0), abs=1e-15)
    assert other == pytest.approx(math.sin(1.0), abs=1e-15)


@given(seed=st.integers(0, 2**32), pairs=st.integers(1, 5))
def test_interleaved_and_half_agree_up_to_the_fixed_permutation(seed, pairs):
    rng = SplitMix64(seed)
    width = 2 * pairs
    x = rng.normal((3, width))
    positions = rng.uniform(0.0, 30.0, (3,))
    perm = [
        *range(0, width, 2),
        *range(1, width, 2),
    ]  # written out here, not read from the package
    np.testing.assert_array_equal(pairing_permutation(width), perm)
    interleaved = RotaryEmbedding(width, pairing="interleaved")(Tensor(x), positions).value
    half = RotaryEmbedding(width, pairing="half")(Tensor(x[:, perm]), positions).value
    np.testing.assert_allclose(half, interleaved[:, perm], atol=1e-14)


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_rope_gradcheck(pairing):
    rope = RotaryEmbedding(6, base=10.0, pairing=pairing)
    x = SplitMix64(7).normal((2, 3, 6))
    result = gradcheck(lambda t: rope(t, [0.0, 1.5, 4.0]), [x], name=f"rope-{pairing}")
    assert result.passed, result.message


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
def test_rotated_score_gradcheck(pairing):
    rope = RotaryEmbedding(4, pairing=pairing)
    rng = SplitMix64(8)
    q, k = rng.normal((3, 4)), rng.normal((3, 4))

    def scores(qt, kt):
        return rope(qt) @ rope(kt).transpose(0, 1)

    result = gradcheck(scores, [q, k], name=f"rope-scores-{pairing}")
    assert result.passed, result.message


def test_rotate_pairs_gradient_is_the_transposed_rotation():
    x = Tensor([[0.4, -0.9]], requires_grad=True)
    theta = 0.6
    rotate_pairs(x, [[theta]]).backward(np.array([[1.0, 2.0]]))
    np.testing.assert_allclose(x.grad[0], rotation(theta).T @ [1.0, 2.0], atol=1e-15)


@given(
    seed=st.integers(0, 2**32),
    lead=st.lists(st.integers(0, 3), min_size=0, max_size=2),
    pairs=st.integers(1, 3),
    per_pair=st.booleans(),
    pairing=st.sampled_from(["interleaved", "half"]),
)
def test_rotate_pairs_broadcasts_angles_and_allows_empty_axes(
    seed, lead, pairs, per_pair, pairing
):
    rng = SplitMix64(seed)
    shape = (*lead, 2 * pairs)
    x = rng.normal(shape)
    angles = rng.uniform(-3.0, 3.0, (pairs,) if per_pair else (*lead, pairs))
    out = rotate_pairs(Tensor(x), angles, pairing).value
    assert out.shape == shape
    perm = pairing_permutation(2 * pairs)
    as_interleaved = np.empty_like(x)
    as_interleaved[..., perm] = x  # the interleaved layout whose half view is x
    if pairing == "half":
        expected = rotate_pairs(Tensor(as_interleaved), angles).value[..., perm]
    else:
        a, b = x[..., 0::2], x[..., 1::2]
        expected = np.empty_like(x)
        expected[..., 0::2] = a * np.cos(angles) - b * np.sin(angles)
        expected[..., 1::2] = a * np.sin(angles) + b * np.cos(angles)
    np.testing.assert_allclose(out, expected, atol=1e-13)


def test_rotate_pairs_reads_a_tensor_of_angles_by_value():
    x = Tensor([[1.0, 0.0]], requires_grad=True)
    theta = Tensor([[0.5]], requires_grad=True)
    out = rotate_pairs(x, theta)
    np.testing.assert_allclose(out.value, [[math.cos(0.5), math.sin(0.5)]], atol=1e-15)
    out.sum().backward()
    assert theta.grad is None
    assert x.grad is not None


def test_rotate_pairs_errors():
    with pytest.raises(ArgumentError) as info:
        rotate_pairs(Tensor([1.0, 0.0]), [0.0], pairing="split")
    assert "got 'split'" in str(info.value)
    with pytest.raises(WidthError) as info:
        rotate_pairs(Tensor([1.0, 0.0, 2.0]), [0.0])
    assert "last axis must be even; got shape (3,)" in str(info.value)
    with pytest.raises(ShapeError) as info:
        rotate_pairs(Tensor(np.ones((2, 4))), np.zeros((3,)))
    assert "broadcast to (2, 2)" in str(info.value)
    assert "got angles of shape (3,)" in str(info.value)
    with pytest.raises(
        ShapeError, match=r"broadcast to \(2, 2\).*got angles of shape \(5, 2, 2\)"
    ):
        rotate_pairs(Tensor(np.ones((2, 4))), np.zeros((5, 2, 2)))  # would grow the output
    with pytest.raises(RankError, match=r"needs x with a feature axis \[\.\.\., d\]"):
        rotate_pairs(Tensor(1.0), 0.0)


def test_rotary_embedding_errors():
    with pytest.raises(WidthError) as info:
        RotaryEmbedding(5)
    assert "head_width must be even; got 5" in str(info.value)
    with pytest.raises(ArgumentError, match=r"pairing must be .*got 'rotate_half'"):
        RotaryEmbedding(4, pairing="rotate_half")
    with pytest.raises(ArgumentError):
        RotaryEmbedding(4, base=-1.0)
    rope = RotaryEmbedding(4)
    with pytest.raises(WidthError) as info:
        rope(Tensor(np.ones((2, 6))))
    assert "expects input whose last axis is 4; got shape (2, 6)" in str(info.value)
    with pytest.raises(RankError) as info:
        rope(Tensor(np.ones(4)))
    assert "got shape (4,)" in str(info.value)
    with pytest.raises(ShapeError) as info:
        rope(Tensor(np.ones((3, 4))), [0.0, 1.0])
    assert "broadcast to (3,)" in str(info.value)


def test_rotary_embedding_has_no_parameters_and_a_stable_repr():
    rope = RotaryEmbedding(4, pairing="half")
    assert rope.parameter_count == 0
    assert repr(rope) == "RotaryEmbedding(head_width=4, base=10000, pairing='half', name='rope')"


# --- position schemes for attention -------------------------------------------------------------


def test_alibi_scheme_gives_the_bias_and_leaves_q_k_alone():
    scheme = ALiBiPositions(4)
    np.testing.assert_array_equal(scheme.score_bias(4, 2, 5), alibi_bias(4, 2, 5))
    t = Tensor(np.ones((1, 4, 3, 2)))
    assert scheme.rotate(t) is t
    with pytest.raises(ArgumentError) as info:
        scheme.score_bias(2, 3, 3)
    assert "built with 4 slopes" in str(info.value)
    assert repr(scheme) == "ALiBiPositions(num_heads=4)"


def test_rope_scheme_rotates_and_adds_no_bias():
    scheme = RoPEPositions(4)
    assert scheme.score_bias(2, 3, 3) is None
    x = SplitMix64(5).normal((2, 2, 3, 4))  # [B, H, T, d_h]
    np.testing.assert_array_equal(scheme.rotate(Tensor(x)).value, RotaryEmbedding(4)(x).value)


# --- through MultiHeadAttention (T11) ----------------------------------------------------------


def _attention(positions=None, causal=False):
    from llm_from_scratch.nn.attention import MultiHeadAttention

    return MultiHeadAttention(8, 2, causal=causal, positions=positions, rng=SplitMix64(21))


def _permutation_gap(layer, x, perm):
    out, _ = layer(x)
    permuted, _ = layer(x[:, perm])
    return float(np.abs(permuted.value - out.value[:, perm]).max())


def test_attention_is_permutation_equivariant_until_positions_enter():
    """Seed fact T11: plain attention is equivariant; RoPE, ALiBi and a causal mask break it."""
    x = SplitMix64(22).normal((1, 4, 8))
    perm = [2, 0, 3, 1]
    assert _permutation_gap(_attention(), x, perm) < 1e-12
    assert _permutation_gap(_attention(RoPEPositions(4)), x, perm) > 1e-3
    assert _permutation_gap(_attention(ALiBiPositions(2)), x, perm) > 1e-3
    assert _permutation_gap(_attention(causal=True), x, perm) > 1e-3


def test_schemes_satisfy_the_attention_protocol_and_match_a_hand_wired_pass():
    from llm_from_scratch.nn.attention import PositionScheme, scaled_dot_product_attention

    assert isinstance(RoPEPositions(4), PositionScheme)
    assert isinstance(ALiBiPositions(2), PositionScheme)
    x = SplitMix64(23).normal((2, 3, 8))
    plain = _attention()
    q, k, v = plain.project_heads(x)  # (B, H, T, d_h) without positions
    for scheme, q_in, k_in, bias in (
        (RoPEPositions(4), RotaryEmbedding(4)(q), RotaryEmbedding(4)(k), None),
        (ALiBiPositions(2), q, k, alibi_bias(2, 3, 3)[None]),
    ):
        heads, _ = scaled_dot_product_attention(q_in, k_in, v, bias=bias, causal=True)
        expected = plain.output(heads.permute(0, 2, 1, 3).reshape(2, 3, 8)).value
        out, _ = _attention(scheme, causal=True)(x)
        np.testing.assert_allclose(out.value, expected, atol=1e-14)


# --- RoPE's table cache is bounded ---------------------------------------------------------------


def _held_bytes(obj: object) -> int:
    """Bytes of every distinct numpy buffer reachable from a cache (dicts, tuples, arrays)."""
    seen: dict[int, int] = {}

    def walk(item: object) -> None:
        if isinstance(item, np.ndarray):
            base = item if item.base is None else item.base
            seen[id(base)] = base.nbytes
        elif isinstance(item, dict):
            for value in item.values():
                walk(value)
        elif isinstance(item, tuple | list):
            for value in item:
                walk(value)

    walk(obj)
    return sum(seen.values())


def test_rope_cache_holds_one_table_for_the_longest_length_seen() -> None:
    head_width = 64
    rope = RoPEPositions(head_width)
    lengths = [int(n) for n in SplitMix64(5).u64_array(60) % 300 + 1]
    for length in lengths:
        rope.rotate(Tensor(np.ones((1, 1, length, head_width))))
    longest = max(lengths)
    # cos and signed sin [T_max, d_h], the partner index [d_h] and the module's own ω [d_h/2]
    one_table = 2 * longest * head_width * 8 + head_width * 8 + head_width // 2 * 8
    assert _held_bytes(rope._default_tables) == one_table


def test_rope_sliced_tables_equal_explicit_positions() -> None:
    rope = RotaryEmbedding(6, pairing="half")
    x = SplitMix64(6).uniform(-1.0, 1.0, (2, 9, 6))
    rope(Tensor(np.zeros((1, 20, 6))))  # the cache now holds positions 0 … 19
    for length in (1, 4, 9):
        sliced = rope(Tensor(x[:, :length])).value
        explicit = rope(Tensor(x[:, :length]), positions=np.arange(length)).value
        np.testing.assert_array_equal(sliced, explicit)


@pytest.mark.parametrize("pairing", ["interleaved", "half"])
@pytest.mark.parametrize("width", [2, 4, 16])
def test_rotation_partner_is_its_own_inverse_and_the_gradient_is_the_rotation_back(pairing, width):
    """pair_rotate's VJP gathers through the partner's inverse: for RoPE that is the partner.

    The gradient of a rotation by θ is the rotation by −θ of the upstream gradient; it must equal
    the scattered-add form g ⊙ cos, plus g ⊙ sin added at each coordinate's partner.
    """
    angles = SplitMix64(11).uniform(-3.0, 3.0, (3, width // 2))
    cos, sin, partner = rotation_tables(angles, pairing)
    np.testing.assert_array_equal(partner[partner], np.arange(width))
    x = Tensor(
        SplitMix64(12).uniform(-1.0, 1.0, (2, 3, width)).transpose(1, 0, 2), requires_grad=True
    )
    upstream = SplitMix64(13).uniform(-1.0, 1.0, (3, 2, width))
    y = rotate_pairs(x, angles[:, None, :], pairing)
    y.backward(upstream)
    scattered = upstream * cos[:, None, :]
    scattered[..., partner] += upstream * sin[:, None, :]
    np.testing.assert_array_equal(x.grad, scattered)
    expected = x.value * cos[:, None] + x.value[..., partner] * sin[:, None]
    np.testing.assert_array_equal(y.value, expected)
