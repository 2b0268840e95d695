"""Training numerics under attack (issue 28): the whole float64 range, bad options, huge sizes.

* cross_entropy is exact for finite logits anywhere in the float64 range, forward and gradient,
  against a 60-digit decimal reference and the closed form (softmax − one-hot) / N, with numpy's
  overflow, invalid and divide warnings raised as errors; an ordinary call is bit for bit the old
  weighted sum.
* AdamW and SGD refuse bad options at construction and at every step (a schedule may write a NaN
  rate into a group), refuse a step whose moments or values leave float64, and change nothing when
  they refuse; an ordinary step is bit for bit the update written out below.
* clip_grad_norm's norm is exact from 1e-300 to 1e300 (against math.hypot, which scales), its
  ε is checked, and an ordinary call is bit for bit √(Σ g·g).
* uniform_integers refuses empty ranges and non-integer bounds; sizes that cannot fit are refused
  with the bytes they would need, before anything is allocated or drawn.
"""

from __future__ import annotations

import decimal
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor, concat, gradcheck
from llm_from_scratch.errors import ArgumentError, ShapeError, TokenError
from llm_from_scratch.nn.module import Parameter
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import (
    SGD,
    AdamW,
    clip_grad_norm,
    cross_entropy,
    induction_batch,
    random_windows,
    uniform_integers,
)

RAISE = {"over": "raise", "invalid": "raise", "divide": "raise"}
anywhere = st.floats(allow_nan=False, allow_infinity=False)  # the whole finite float64 range
ordinary = st.floats(-30.0, 30.0, allow_nan=False)


def _param(values, name: str = "w") -> Parameter:
    return Parameter(np.array(values, dtype=np.float64), name)


# --- cross-entropy -----------------------------------------------------------------------------

_CONTEXT = decimal.Context(prec=60, Emax=10**6, Emin=-(10**6))


def _reference_loss(rows: list[list[float]], targets: list[int]) -> float:
    """mean_i (log Σ_j exp z_ij − z_i,y) in 60-digit decimals (exact exponent range)."""
    total = decimal.Decimal(0)
    for row, y in zip(rows, targets, strict=True):
        peak = max(decimal.Decimal(v) for v in row)
        shifted = [_CONTEXT.subtract(decimal.Decimal(v), peak) for v in row]
        sum_exp = sum((_CONTEXT.exp(s) for s in shifted), decimal.Decimal(0))
        total = _CONTEXT.add(total, _CONTEXT.subtract(_CONTEXT.ln(sum_exp), shifted[y]))
    return float(_CONTEXT.divide(total, len(rows)))


def _reference_gradient(rows: list[list[float]], targets: list[int]) -> np.ndarray:
    """(softmax(z_i) − one-hot(y_i)) / N, written with Python floats (z − max may be −inf)."""
    out = []
    for row, y in zip(rows, targets, strict=True):
        peak = max(row)
        weights = [math.exp(v - peak) if v - peak > -math.inf else 0.0 for v in row]
        total = math.fsum(weights)
        out.append([w / total - (1.0 if j == y else 0.0) for j, w in enumerate(weights)])
    return np.array(out) / len(rows)


def test_opposite_extreme_logits_give_the_exact_zero_loss() -> None:
    """Regression: [[1e308, −1e308]] with target 0 was NaN (−∞ · 0 in the weighted sum)."""
    z = Tensor(np.array([[1e308, -1e308]]), requires_grad=True)
    with np.errstate(**RAISE):
        loss = cross_entropy(z, [0])
        loss.backward()
    assert loss.item() == 0.0
    np.testing.assert_array_equal(z.grad, [[0.0, 0.0]])


def test_a_representable_mean_of_an_overflowing_row_is_exact() -> None:
    """Row 1 costs 2e308 (beyond float64), row 2 costs 0: the mean, 1e308, is representable."""
    z = Tensor(np.array([[1e308, -1e308], [1e308, -1e308]]), requires_grad=True)
    with np.errstate(**RAISE):
        loss = cross_entropy(z, [1, 0])
        loss.backward()
    assert loss.item() == pytest.approx(1e308, rel=1e-15)
    np.testing.assert_array_equal(z.grad, [[0.5, -0.5], [0.0, 0.0]])


def test_a_mean_loss_beyond_float64_is_refused_by_name() -> None:
    with pytest.raises(ArgumentError, match="exceeds the float64 range"):
        cross_entropy(Tensor(np.array([[1.7e308, -1.7e308]])), [1])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_loss_and_gradient_are_exact_anywhere_in_the_range(data) -> None:
    vocab = data.draw(st.integers(1, 4), label="V")
    count = data.draw(st.integers(1, 3), label="N")
    rows = [data.draw(st.lists(anywhere, min_size=vocab, max_size=vocab)) for _ in range(count)]
    targets = [data.draw(st.integers(0, vocab - 1)) for _ in range(count)]
    expected = _reference_loss(rows, targets)
    z = Tensor(np.array(rows), requires_grad=True)
    if not math.isfinite(expected):  # the mean itself is beyond 1.8e308
        with pytest.raises(ArgumentError, match="float64 range"), np.errstate(**RAISE):
            cross_entropy(z, targets)
        return
    with np.errstate(**RAISE):
        loss = cross_entropy(z, targets)
        loss.backward()
    assert loss.item() == pytest.approx(expected, rel=1e-13, abs=1e-300), (rows, targets)
    np.testing.assert_allclose(z.grad, _reference_gradient(rows, targets), rtol=1e-12, atol=1e-15)


def _weighted_sum_loss(z: Tensor, y: np.ndarray, ignore: int | None) -> Tensor:
    """The weighted sum cross_entropy computed before issue 28, written out again."""
    vocab = z.shape[-1]
    y = y.reshape(-1)
    counted = np.ones(y.shape, dtype=bool) if ignore is None else y != ignore
    rows = np.flatnonzero(counted)
    weight = np.zeros((y.size, vocab))
    weight[rows, y[rows]] = 1.0 / rows.size
    return -(z.reshape(y.size, vocab).log_softmax(axis=-1) * weight).sum()


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**32), st.floats(1e-3, 1e6))
def test_ordinary_logits_give_the_old_loss_and_gradient_bit_for_bit(rows, vocab, seed, scale):
    rng = SplitMix64(seed)
    logits = rng.uniform(-scale, scale, (rows, vocab))
    y = np.array([int(rng.next_u64() % vocab) if k % 3 else -100 for k in range(rows)])
    if (y == -100).all():
        y[0] = 0
    new, old = Tensor(logits, requires_grad=True), Tensor(logits, requires_grad=True)
    a = cross_entropy(new, y, ignore_index=-100)
    b = _weighted_sum_loss(old, y, -100)
    a.backward()
    b.backward()
    assert a.item() == b.item()
    np.testing.assert_array_equal(new.grad, old.grad)


@pytest.mark.parametrize("wide", [False, True])
def test_central_differences_on_both_chains(wide: bool) -> None:
    """The wide chain is forced by an ignored row of huge logits: it adds no loss of its own."""
    z = SplitMix64(5).uniform(-2.0, 2.0, (3, 4))
    huge = Tensor(np.array([[1e300, -1e300, 0.0, 5.0]]))

    def loss(x: Tensor) -> Tensor:
        if not wide:
            return cross_entropy(x, [3, 0, 1])
        return cross_entropy(concat([x, huge], axis=0), [3, 0, 1, -1], ignore_index=-1)

    result = gradcheck(loss, [z], atol=1e-8)
    assert result.passed, result.message


@given(st.lists(st.floats(-50.0, 50.0), min_size=6, max_size=6), st.integers(0, 2))
def test_both_chains_agree_on_ordinary_logits(values, target) -> None:
    z = np.array(values).reshape(2, 3)
    huge = np.array([[1e300, -1e300, 0.0]])
    plain = cross_entropy(Tensor(z), [target, 2]).item()
    wide = cross_entropy(Tensor(np.vstack([z, huge])), [target, 2, -1], ignore_index=-1).item()
    assert wide == pytest.approx(plain, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("ignore", [True, 1.5, "x", np.float64(1.0), [1]])
def test_ignore_index_must_be_an_integer_or_none(ignore) -> None:
    with pytest.raises(ArgumentError, match="ignore_index"):
        cross_entropy(Tensor(np.zeros((2, 3))), [0, 1], ignore_index=ignore)


def test_unsigned_targets_beyond_int64_are_refused_not_wrapped() -> None:
    y = np.array([2**64 - 1, 0], dtype=np.uint64)  # wraps to −1 in int64, would equal ignore -1
    with pytest.raises(TokenError, match="2⁶³"):
        cross_entropy(Tensor(np.zeros((2, 3))), y, ignore_index=-1)


# --- AdamW and SGD: options --------------------------------------------------------------------


def _adamw_step(grad, **options) -> tuple[Parameter, AdamW]:
    w = _param(np.ones(len(grad)))
    opt = AdamW([w], **options)
    w.grad = np.array(grad, dtype=np.float64)
    opt.step()
    return w, opt


@pytest.mark.parametrize("eps", [0.0, -1e-8, -0.0, math.nan, math.inf, True, "1e-8"])
def test_adamw_refuses_an_eps_that_is_not_positive(eps) -> None:
    """Regression: eps = 0 gave NaN weights wherever a gradient entry was 0."""
    with pytest.raises(ArgumentError, match="eps"):
        _adamw_step([0.0, 1.0], eps=eps)


@given(st.one_of(st.floats(max_value=-1e-300), st.just(math.nan), st.just(-math.inf)))
def test_adamw_refuses_negative_and_nan_rates(lr) -> None:
    with pytest.raises(ArgumentError, match="lr"):
        _adamw_step([1.0], lr=lr)


@given(st.one_of(st.floats(max_value=-1e-300), st.floats(min_value=1.0), st.just(math.nan)))
def test_adamw_refuses_betas_outside_zero_one(beta) -> None:
    for betas in ((beta, 0.999), (0.9, beta)):
        with pytest.raises(ArgumentError, match="beta"):
            _adamw_step([1.0], betas=betas)


@pytest.mark.parametrize(
    ("option", "value"),
    [("lr", math.nan), ("lr", -0.1), ("eps", 0.0), ("betas", (0.9, 1.0)), ("weight_decay", -1)],
)
def test_an_option_rewritten_after_construction_is_refused_at_the_step(option, value) -> None:
    """Regression: a NaN lr written into a group (as a schedule does) gave NaN weights."""
    w = _param([1.0, -2.0])
    opt = AdamW([w], lr=0.1)
    w.grad = np.array([0.5, 1.0])
    opt.step()
    before, state = w.value.copy(), opt.state_dict()
    opt.param_groups[0][option] = value
    w.grad = np.array([0.5, 1.0])
    with pytest.raises(ArgumentError, match=option.rstrip("s")):
        opt.step()
    np.testing.assert_array_equal(w.value, before)
    np.testing.assert_array_equal(
        opt.state_dict()["state"][0]["exp_avg"], state["state"][0]["exp_avg"]
    )


def test_sgd_refuses_a_nan_rate_written_into_a_group() -> None:
    w = _param([1.0])
    opt = SGD([w], lr=0.1, momentum=0.9)
    opt.param_groups[0]["lr"] = math.nan
    w.grad = np.array([1.0])
    with pytest.raises(ArgumentError, match="lr"):
        opt.step()
    assert w.value[0] == 1.0 and opt.state == {}


# --- AdamW: the float64 range ------------------------------------------------------------------


@pytest.mark.parametrize("magnitude", [1e155, 1e200, 1.7e308])
def test_a_gradient_whose_square_overflows_is_refused_and_changes_nothing(magnitude) -> None:
    """Regression: |g| = 1e200 made g² = inf, v = inf and the update silently zero."""
    w, v = _param([1.0, 1.0]), _param([3.0], "v")
    opt = AdamW([w, v], weight_decay=0.0)
    w.grad, v.grad = np.array([magnitude, -magnitude]), np.array([1.0])
    with pytest.raises(ArgumentError, match=r"second moment.*1\.3e154"), np.errstate(**RAISE):
        opt.step()
    np.testing.assert_array_equal(w.value, [1.0, 1.0])
    np.testing.assert_array_equal(v.value, [3.0])
    assert opt.state == {}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(1e-150, 1e150).flatmap(lambda a: st.sampled_from([a, -a])),
        min_size=1,
        max_size=4,
    )
)
def test_adamw_first_step_is_lr_times_sign_wherever_g_dominates_eps(grad) -> None:
    """Step 1: m̂ = g, v̂ = g², so θ moves by −η·g/(|g| + ε), for any |g| from 1e-150 to 1e150."""
    lr, eps = 0.01, 1e-300
    with np.errstate(**RAISE):
        w, _ = _adamw_step(grad, lr=lr, eps=eps, weight_decay=0.0)
    g = np.array(grad)
    np.testing.assert_allclose(w.value, 1.0 - lr * g / (np.abs(g) + eps), rtol=1e-15)


def test_a_tiny_eps_under_an_underflowed_second_moment_is_refused() -> None:
    """|g| = 1e-170: g² underflows to 0 while m does not; with ε = 1e-300, m/ε would be 1e130."""
    w = _param([1.0])
    opt = AdamW([w], eps=1e-300, weight_decay=0.0)
    w.grad = np.array([1e-170])
    with pytest.raises(ArgumentError, match="underflowed"):
        opt.step()
    assert w.value[0] == 1.0 and opt.state == {}
    ordinary = AdamW([w], eps=1e-8, weight_decay=0.0)  # ε ≫ √v: the same gradient is fine
    ordinary.step()
    assert w.value[0] == pytest.approx(1.0 - 1e-3 * 1e-170 / 1e-8, rel=1e-12)


def test_a_step_whose_new_values_overflow_is_refused() -> None:
    w = _param([1e308])
    opt = SGD([w], lr=1.0)
    w.grad = np.array([-1e308])
    with pytest.raises(ArgumentError, match="float64 range"), np.errstate(**RAISE):
        opt.step()
    assert w.value[0] == 1e308


def _old_adamw(theta, grads, lr, betas, eps, decay) -> np.ndarray:
    """torch.optim.AdamW's update, as the package computed it before issue 28."""
    beta1, beta2 = betas
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for t, g in enumerate(grads, start=1):
        m = beta1 * m + (1.0 - beta1) * g
        v = beta2 * v + (1.0 - beta2) * (g * g)
        step_size = lr / (1.0 - beta1 ** float(t))
        denominator = np.sqrt(v) / math.sqrt(1.0 - beta2 ** float(t)) + eps
        theta = theta * (1.0 - lr * decay) - step_size * (m / denominator)
    return theta


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 2**32),
    st.integers(1, 5),
    st.floats(1e-5, 1.0),
    st.floats(0.0, 0.99),
    st.floats(0.9, 0.9999),
    st.floats(0.0, 0.1),
)
def test_ordinary_adamw_steps_are_the_old_update_bit_for_bit(seed, steps, lr, b1, b2, decay):
    rng = SplitMix64(seed)
    theta = rng.uniform(-1.0, 1.0, (3,))
    grads = [rng.uniform(-10.0, 10.0, (3,)) for _ in range(steps)]
    w = _param(theta)
    opt = AdamW([w], lr=lr, betas=(b1, b2), eps=1e-8, weight_decay=decay)
    for g in grads:
        w.grad = g
        opt.step()
    np.testing.assert_array_equal(w.value, _old_adamw(theta, grads, lr, (b1, b2), 1e-8, decay))


def _old_sgd(theta, grads, lr, mu, tau, decay, nesterov) -> np.ndarray:
    """torch.optim.SGD's update, as the package computed it before issue 28."""
    buffer = None
    for g in grads:
        if decay:
            g = g + decay * theta
        if mu:
            buffer = g.copy() if buffer is None else mu * buffer + (1.0 - tau) * g
            g = g + mu * buffer if nesterov else buffer
        theta = theta - lr * g
    return theta


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 2**32),
    st.integers(1, 4),
    st.floats(1e-5, 1.0),
    st.sampled_from([0.0, 0.5, 0.9]),
    st.sampled_from([0.0, 0.1]),
    st.sampled_from([0.0, 0.01]),
    st.booleans(),
)
def test_ordinary_sgd_steps_are_the_old_update_bit_for_bit(seed, steps, lr, mu, tau, decay, nest):
    nest = nest and mu > 0 and tau == 0
    rng = SplitMix64(seed)
    theta = rng.uniform(-1.0, 1.0, (3,))
    grads = [rng.uniform(-10.0, 10.0, (3,)) for _ in range(steps)]
    w = _param(theta)
    opt = SGD([w], lr=lr, momentum=mu, dampening=tau, weight_decay=decay, nesterov=nest)
    for g in grads:
        w.grad = g
        opt.step()
    np.testing.assert_array_equal(w.value, _old_sgd(theta, grads, lr, mu, tau, decay, nest))


# --- clip_grad_norm ----------------------------------------------------------------------------


def _with_grads(*grads) -> list[Parameter]:
    params = []
    for k, g in enumerate(grads):
        p = _param(np.zeros(len(g)), f"p{k}")
        p.grad = np.array(g, dtype=np.float64)
        params.append(p)
    return params


@pytest.mark.parametrize("eps", [math.nan, -1.0, -1e-300, math.inf, "0", None])
def test_clip_refuses_an_eps_that_is_not_a_finite_non_negative_number(eps) -> None:
    """Regression: eps = nan skipped clipping silently; eps = −1 flipped signs or divided by 0."""
    params = _with_grads([3.0, 4.0])
    with pytest.raises(ArgumentError, match="eps"):
        clip_grad_norm(params, 1.0, eps=eps)
    np.testing.assert_array_equal(params[0].grad, [3.0, 4.0])


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 1e-300, 5e-324])
def test_the_norm_is_exact_far_beyond_the_square_range(scale: float) -> None:
    """Regression: [1e200, 1e200] was refused as infinite, [1e-200, 1e-200] gave 0.0."""
    params = _with_grads([scale, scale])
    with np.errstate(**RAISE):
        norm = clip_grad_norm(params, 1.0, eps=0.0)
    assert norm == pytest.approx(math.hypot(scale, scale), rel=1e-15)
    if norm > 1.0:
        np.testing.assert_allclose(params[0].grad, [1 / math.sqrt(2)] * 2, rtol=1e-15)


def test_zero_gradients_with_zero_eps_are_left_alone() -> None:
    params = _with_grads([0.0, 0.0])
    assert clip_grad_norm(params, 1.0, eps=0.0) == 0.0
    np.testing.assert_array_equal(params[0].grad, [0.0, 0.0])


def test_a_norm_beyond_float64_is_refused() -> None:
    params = _with_grads([1.5e308, 1.5e308])
    with pytest.raises(ArgumentError, match=r"1\.8e308"):
        clip_grad_norm(params, 1.0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(anywhere, min_size=1, max_size=3), min_size=1, max_size=3))
def test_the_norm_matches_hypot_anywhere_in_the_range(grads) -> None:
    flat = [abs(v) for g in grads for v in g]
    expected = math.hypot(*flat)
    params = _with_grads(*grads)
    if math.isinf(expected):
        with pytest.raises(ArgumentError, match="NaN or inf"):
            clip_grad_norm(params, 1.0)
        return
    with np.errstate(**RAISE):
        norm = clip_grad_norm(params, 1.0, eps=0.0)
    assert norm == pytest.approx(expected, rel=1e-14, abs=0.0), grads
    for p, g in zip(params, grads, strict=True):  # g · max_norm / (‖g‖ + 0) where ‖g‖ > 1
        want = np.array(g) * (1.0 / norm) if norm > 1.0 else np.array(g)
        np.testing.assert_allclose(p.grad, want, rtol=1e-15, atol=0.0)


def _ordinary(grads: list[list[float]]) -> bool:
    """The largest |g| is zero or inside 2^±256, where no rescaling is needed."""
    peak = max(abs(x) for g in grads for x in g)
    return peak == 0.0 or peak >= 1e-70


@given(
    st.lists(
        st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=4), min_size=1, max_size=3
    ).filter(_ordinary)
)
def test_ordinary_norms_and_clips_are_the_old_arithmetic_bit_for_bit(grads) -> None:
    arrays = [np.array(g) for g in grads]
    old_norm = math.sqrt(sum(float(np.vdot(g, g)) for g in arrays))
    params = _with_grads(*grads)
    assert clip_grad_norm(params, 0.5) == old_norm
    coefficient = 0.5 / (old_norm + 1e-6)
    for p, g in zip(params, arrays, strict=True):
        np.testing.assert_array_equal(p.grad, g * coefficient if coefficient < 1.0 else g)


# --- integers, windows and sizes ---------------------------------------------------------------


@pytest.mark.parametrize("high", [0, -1, -(2**70), 2.5, 3.0, True, "3", None, 2**53 + 1])
def test_uniform_integers_refuses_empty_ranges_and_non_integer_bounds(high) -> None:
    """Regression: uniform_integers(rng, 0, 3) returned [−1, −1, −1]."""
    rng = SplitMix64(1)
    with pytest.raises(ArgumentError, match="high"):
        uniform_integers(rng, high, 3)
    assert rng.state == SplitMix64(1).state  # nothing drawn


@given(st.integers(1, 2**53), st.integers(0, 50), st.integers(0, 2**64 - 1))
def test_uniform_integers_are_floor_u_times_high_in_range(high, count, seed) -> None:
    rng, twin = SplitMix64(seed), SplitMix64(seed)
    draws = uniform_integers(rng, high, count)
    expected = [min(math.floor(twin.next_float() * high), high - 1) for _ in range(count)]
    assert draws.tolist() == expected
    assert all(0 <= d < high for d in expected)


@pytest.mark.parametrize("count", [-1, 2.0, True, None, 2**40])
def test_uniform_integers_refuses_bad_or_huge_counts(count) -> None:
    with pytest.raises(ArgumentError, match=r"count|bytes"):
        uniform_integers(SplitMix64(1), 3, count)


def test_a_batch_that_cannot_fit_is_refused_with_its_bytes() -> None:
    """Regression: random_windows(np.arange(10), 10**9, 3, rng) ran out of memory."""
    rng = SplitMix64(0)
    with pytest.raises(ArgumentError, match=r"64,000,000,000 bytes"):
        random_windows(np.arange(10), 10**9, 3, rng)
    assert rng.state == SplitMix64(0).state
    with pytest.raises(ArgumentError, match="bytes"):
        induction_batch(10**6, 15, 10**6, rng)
    with pytest.raises(ArgumentError, match="bytes"):
        rng.uniform(0.0, 1.0, (2**20, 2**20))
    with pytest.raises(ArgumentError, match="bytes"):
        rng.u64_array(2**40)
    assert rng.state == SplitMix64(0).state


@given(st.integers(1, 12), st.integers(1, 12))
def test_windows_longer_than_the_data_are_refused(size, context) -> None:
    tokens = np.arange(size)
    if context + 1 <= size:
        inputs, targets = random_windows(tokens, 2, context, SplitMix64(3))
        np.testing.assert_array_equal(targets, inputs + 1)  # arange: next token = token + 1
    else:
        with pytest.raises(ShapeError, match="context \\+ 1"):
            random_windows(tokens, 2, context, SplitMix64(3))


@pytest.mark.parametrize("tokens", [[-1, 2, 3, 4], np.array([2**63, 1, 2], dtype=np.uint64)])
def test_windows_refuse_ids_that_are_not_token_ids(tokens) -> None:
    with pytest.raises(TokenError, match="token IDs"):
        random_windows(tokens, 1, 2, SplitMix64(0))


@example(-1e308, 1e308)  # regression: high − low overflowed, and ∞ · 0 gave NaN draws
@given(anywhere, anywhere)
def test_uniform_draws_stay_in_range_anywhere_in_float64(a, b) -> None:
    low, high = min(a, b), max(a, b)
    with np.errstate(**RAISE):
        draws = SplitMix64(9).uniform(low, high, (16,))
    assert np.all(np.isfinite(draws)) and np.all((draws >= low) & (draws <= high)), (low, high)


def test_uniform_refuses_reversed_or_non_finite_bounds() -> None:
    rng = SplitMix64(2)
    for low, high in [(1.0, 0.0), (math.nan, 1.0), (0.0, math.inf), (0.0, 10**400), ("0", 1)]:
        with pytest.raises(ArgumentError):
            rng.uniform(low, high, (2,))
    assert rng.state == SplitMix64(2).state


@pytest.mark.parametrize("value", [-1, 2**64, 1.5, True, "0", None])
def test_the_generator_state_accepts_only_64_bit_integers(value) -> None:
    rng = SplitMix64(4)
    with pytest.raises(ArgumentError, match="state"):
        rng.state = value
    assert rng.state == SplitMix64(4).state
