"""The training API under attack (issue 28): random bad arguments to every public call (core).

Every public function of the training modules (loss, optimizers, clipping, batches, probes, the
loop's builders), of the generator and of the bug zoo, given a random argument in one place,
either works or raises one of the package's errors (FromScratchError, a ValueError or a
RuntimeError) whose message names the value received; nothing else leaks (no TypeError,
IndexError, KeyError, ZeroDivisionError, AttributeError, numpy's own errors). A refused call
leaves the parameters, their gradients, the optimizer's state and the generator as they were.
Where the rule is simple (flags, integer sizes) the test also knows which values must be refused.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.bugs import bug, mutant, run_check, run_matrix
from llm_from_scratch.bugs.checks import induction_run
from llm_from_scratch.bugs.matrix import Matrix
from llm_from_scratch.bugs.switch import resolve_seam, switched
from llm_from_scratch.errors import FromScratchError
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.nn.module import Parameter
from llm_from_scratch.random import SplitMix64, xavier_uniform
from llm_from_scratch.training import (
    SGD,
    AdamW,
    TrainConfig,
    attention_maps,
    build_model,
    build_optimizer,
    clip_grad_norm,
    cross_entropy,
    induction_batch,
    induction_scores,
    learning_rate,
    random_windows,
    train,
    uniform_integers,
)

small_floats = st.floats(-1e6, 1e6, allow_nan=False)
garbage = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.complex_numbers(max_magnitude=10, allow_nan=False),
    st.lists(st.integers(-6, 6), max_size=4),
    st.lists(st.floats(-3, 3), min_size=1, max_size=3),
    st.tuples(st.integers(-4, 4), st.integers(-4, 4)),
    st.tuples(st.integers(-4, 4), small_floats),
    st.just([[1.0], [1.0, 2.0]]),  # ragged
    st.just({"params": 3}),
    st.just({"state": {}, "param_groups": [{"params": "x"}]}),
    st.builds(object),
    st.builds(lambda n: np.arange(float(n)), st.integers(0, 7)),
    st.builds(lambda n: np.arange(n) - 3, st.integers(0, 7)),
    st.builds(lambda n: np.ones(n, dtype=bool), st.integers(0, 4)),
    st.builds(lambda n: Tensor(np.ones(n)), st.integers(1, 3)),
)


def spellings(value: Any) -> list[str]:
    """Ways a message may name ``value``: repr, str, type, shape, dtype, or one of its items."""
    if isinstance(value, Tensor):
        return ["Tensor", str(value.shape)]
    if isinstance(value, np.ndarray):
        return [str(value.shape), str(value.dtype), repr(value)[:20]]
    words = [repr(value)[:20], str(value)[:20], type(value).__name__]
    with contextlib.suppress(ValueError):  # a shape error names the shape received
        words.append(str(np.shape(value)))
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**15:
        words += [f"{value:,}"[:20], "digits"]
    if isinstance(value, list | tuple):
        words.append(str(tuple(value)))
        for item in value:
            words += spellings(item)
    if isinstance(value, dict):
        for key, item in value.items():
            words += [repr(key)[:20], *spellings(item)]
    return words


def refused_or_accepted(call: Callable[[], Any], value: Any) -> BaseException | None:
    """Run ``call``; a refusal must be the package's, naming ``value``. Returns the error."""
    try:
        call()
    except FromScratchError as error:
        assert isinstance(error, ValueError | RuntimeError), type(error)
        message = str(error)
        assert any(word in message for word in spellings(value)), (value, message)
        return error
    return None


def is_flag(value: Any) -> bool:
    return isinstance(value, bool)


def is_count(minimum: int, maximum: int = 2**28) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        return (
            isinstance(value, numbers.Integral)
            and not isinstance(value, bool)
            and minimum <= value <= maximum
        )

    return check


# --- fixtures, rebuilt for every example ---------------------------------------------------------


class World:
    """Two parameters with gradients, both optimizers after one step, a generator, a model."""

    def __init__(self) -> None:
        self.w = Parameter(np.array([[1.0, -2.0], [0.5, 0.25]]), "w")
        self.b = Parameter(np.array([0.5, -0.5]), "b")
        self.adamw = AdamW([self.w, self.b], lr=0.01)
        self.sgd = SGD([self.w, self.b], lr=0.01, momentum=0.9)
        self.regrad()
        self.adamw.step()
        self.sgd.step()
        self.regrad()
        self.rng = SplitMix64(7)
        self.logits = Tensor(np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]]), requires_grad=True)

    def regrad(self) -> None:
        self.w.grad = np.array([[0.1, -0.2], [0.3, 0.4]])
        self.b.grad = np.array([1.0, -1.0])

    def snapshot(self) -> tuple:
        return (
            self.w.value.copy(),
            self.b.value.copy(),
            None,
            repr(self.adamw.state_dict()),
            repr(self.sgd.state_dict()),
            self.rng.state,
        )


MODEL = Decoder(6, 4, 1, 2, 8, rng=SplitMix64(0))
IDS = np.array([[0, 1, 2, 3, 1, 2]])
CONFIG = TrainConfig(
    steps=2, warmup_steps=1, context=8, vocab_size=6, min_half_length=2, max_half_length=4
)
WEIGHTS = np.full((1, 2, 6, 6), 1.0 / 6)
TARGETS = np.array([[-100, -100, -100, 2, 3, -100]])
MATRIX = Matrix(("m",), ("c",), {}, {}, 0.0)


def _step_with_grad(world: World, value: Any, opt: str) -> None:
    world.w.grad = value
    getattr(world, opt).step()


def _clip_with_grad(world: World, value: Any) -> None:
    world.w.grad = value
    clip_grad_norm([world.w, world.b], 1.0)


def _set_state(world: World, value: Any) -> None:
    world.rng.state = value


Target = tuple[Callable[[World, Any], Any], Callable[[Any], bool] | None]

TARGETS_: dict[str, Target] = {
    # loss
    "cross_entropy(logits=v)": (lambda s, v: cross_entropy(v, [0]), None),
    "cross_entropy(targets=v)": (lambda s, v: cross_entropy(s.logits, v), None),
    "cross_entropy(ignore_index=v)": (
        lambda s, v: cross_entropy(s.logits, [0, 1], ignore_index=v),
        None,
    ),
    # optimizers
    "SGD(params=v)": (lambda s, v: SGD(v), None),
    "SGD(lr=v)": (lambda s, v: SGD([s.w], lr=v), None),
    "SGD(momentum=v)": (lambda s, v: SGD([s.w], momentum=v), None),
    "SGD(dampening=v)": (lambda s, v: SGD([s.w], dampening=v), None),
    "SGD(weight_decay=v)": (lambda s, v: SGD([s.w], weight_decay=v), None),
    "SGD(nesterov=v)": (lambda s, v: SGD([s.w], momentum=0.9, nesterov=v), is_flag),
    "AdamW(params=v)": (lambda s, v: AdamW(v), None),
    "AdamW([{'params': v}])": (lambda s, v: AdamW([{"params": v}]), None),
    "AdamW(lr=v)": (lambda s, v: AdamW([s.w], lr=v), None),
    "AdamW(betas=v)": (lambda s, v: AdamW([s.w], betas=v), None),
    "AdamW(eps=v)": (lambda s, v: AdamW([s.w], eps=v), None),
    "AdamW(weight_decay=v)": (lambda s, v: AdamW([s.w], weight_decay=v), None),
    "AdamW.load_state_dict(v)": (lambda s, v: s.adamw.load_state_dict(v), None),
    "SGD.load_state_dict(v)": (lambda s, v: s.sgd.load_state_dict(v), None),
    "AdamW.load_state_dict(state=v)": (
        lambda s, v: s.adamw.load_state_dict({**s.adamw.state_dict(), "state": {0: v}}),
        None,
    ),
    "AdamW.load_state_dict(step=v)": (
        lambda s, v: s.adamw.load_state_dict(
            {
                **s.adamw.state_dict(),
                "state": {1: {**s.adamw.state_dict()["state"][1], "step": v}},
            }
        ),
        None,
    ),
    "AdamW.load_state_dict(exp_avg_sq=v)": (
        lambda s, v: s.adamw.load_state_dict(
            {
                **s.adamw.state_dict(),
                "state": {1: {**s.adamw.state_dict()["state"][1], "exp_avg_sq": v}},
            }
        ),
        None,
    ),
    "AdamW.step(grad=v)": (lambda s, v: _step_with_grad(s, v, "adamw"), None),
    "SGD.step(grad=v)": (lambda s, v: _step_with_grad(s, v, "sgd"), None),
    "AdamW.step(lr=v)": (
        lambda s, v: (s.adamw.param_groups[0].update(lr=v), s.adamw.step()),
        None,
    ),
    # clipping
    "clip_grad_norm(parameters=v)": (lambda s, v: clip_grad_norm(v, 1.0), None),
    "clip_grad_norm(max_norm=v)": (lambda s, v: clip_grad_norm([s.w], v), None),
    "clip_grad_norm(eps=v)": (lambda s, v: clip_grad_norm([s.w], 1.0, eps=v), None),
    "clip_grad_norm(grad=v)": (_clip_with_grad, None),
    # batches
    "uniform_integers(rng=v)": (lambda s, v: uniform_integers(v, 3, 2), None),
    "uniform_integers(high=v)": (lambda s, v: uniform_integers(s.rng, v, 2), is_count(1, 2**53)),
    "uniform_integers(count=v)": (lambda s, v: uniform_integers(s.rng, 3, v), is_count(0)),
    "random_windows(tokens=v)": (lambda s, v: random_windows(v, 2, 2, s.rng), None),
    "random_windows(batch_size=v)": (
        lambda s, v: random_windows(np.arange(8), v, 2, s.rng),
        is_count(1, 2**27),
    ),
    "random_windows(context=v)": (
        lambda s, v: random_windows(np.arange(8), 2, v, s.rng),
        is_count(1, 7),
    ),
    "random_windows(rng=v)": (lambda s, v: random_windows(np.arange(8), 2, 2, v), None),
    "induction_batch(batch_size=v)": (lambda s, v: induction_batch(v, 7, 6, s.rng), None),
    "induction_batch(context=v)": (lambda s, v: induction_batch(2, v, 6, s.rng), None),
    "induction_batch(vocab_size=v)": (lambda s, v: induction_batch(2, 7, v, s.rng), None),
    "induction_batch(rng=v)": (lambda s, v: induction_batch(2, 7, 6, v), None),
    "induction_batch(half_lengths=v)": (
        lambda s, v: induction_batch(2, 7, 6, s.rng, half_lengths=v),
        None,
    ),
    # probes
    "attention_maps(model=v)": (lambda s, v: attention_maps(v, IDS), None),
    "attention_maps(ids=v)": (lambda s, v: attention_maps(MODEL, v), None),
    "induction_scores(weights=v)": (lambda s, v: induction_scores(v, TARGETS), None),
    "induction_scores(targets=v)": (lambda s, v: induction_scores(WEIGHTS, v), None),
    # the loop's builders and train's arguments (refused before anything runs or is written)
    "build_model(config=v)": (lambda s, v: build_model(v, 6, s.rng), None),
    "build_model(vocab_size=v)": (lambda s, v: build_model(CONFIG, v, s.rng), None),
    "build_model(rng=v)": (lambda s, v: build_model(CONFIG, 6, v), None),
    "build_model(fused=v)": (
        lambda s, v: None if isinstance(v, bool) else build_model(CONFIG, 6, s.rng, fused=v),
        None,
    ),
    "build_optimizer(config=v)": (lambda s, v: build_optimizer(v, MODEL), None),
    "build_optimizer(model=v)": (lambda s, v: build_optimizer(CONFIG, v), None),
    "learning_rate(config=v)": (lambda s, v: learning_rate(v, 0), None),
    "learning_rate(step=v)": (lambda s, v: learning_rate(CONFIG, v), is_count(0, 2**63)),
    "train(config=v)": (lambda s, v: train(v), None),
    "train(resume=v)": (
        lambda s, v: None if isinstance(v, bool) else train(CONFIG, resume=v),
        None,
    ),
    "train(progress=v)": (
        lambda s, v: None if isinstance(v, bool) else train(CONFIG, progress=v),
        None,
    ),
    "train(on_step=v)": (
        lambda s, v: None if v is None or callable(v) else train(CONFIG, on_step=v),
        None,
    ),
    # the generator
    "SplitMix64(seed=v)": (lambda s, v: SplitMix64(v), is_count(-(10**40), 10**40)),
    "SplitMix64.state = v": (_set_state, is_count(0, 2**64 - 1)),
    "u64_array(count=v)": (lambda s, v: s.rng.u64_array(v), is_count(0)),
    "uniform(low=v)": (lambda s, v: s.rng.uniform(v, 1e6, (2,)), None),
    "uniform(high=v)": (lambda s, v: s.rng.uniform(-1e6, v, (2,)), None),
    "uniform(shape=v)": (lambda s, v: s.rng.uniform(0.0, 1.0, v), None),
    "normal(shape=v)": (lambda s, v: s.rng.normal(v), None),
    "xavier_uniform(fan_in=v)": (lambda s, v: xavier_uniform(v, 2, s.rng), None),
    "xavier_uniform(fan_out=v)": (lambda s, v: xavier_uniform(2, v, s.rng), None),
    "xavier_uniform(rng=v)": (lambda s, v: xavier_uniform(2, 2, v), None),
    # the bug zoo
    "bug(name=v)": (lambda s, v: bug(v).__enter__(), None),
    "mutant(name=v)": (lambda s, v: mutant(v), None),
    "resolve_seam(seam=v)": (lambda s, v: resolve_seam(v), None),
    "switched(mutant=v)": (lambda s, v: switched(v).__enter__(), None),
    "run_check(wrong=v)": (
        lambda s, v: None if v is None else run_check(v, "rows-sum-to-one"),
        None,
    ),
    "run_check(check=v)": (lambda s, v: run_check(None, v), None),
    "run_matrix(mutants=v)": (lambda s, v: run_matrix(v, []), None),
    "run_matrix(checks=v)": (lambda s, v: None if v is None else run_matrix([], v), None),
    "Matrix.status(mutant=v)": (lambda s, v: MATRIX.status(v, "c"), None),
    "Matrix.catchers(mutant=v)": (lambda s, v: MATRIX.catchers(v), None),
    "Matrix.caught_by_check(check=v)": (lambda s, v: MATRIX.caught_by_check(v), None),
    "induction_run(seed=v)": (lambda s, v: induction_run(0, v), None),
}


@pytest.mark.parametrize("target", sorted(TARGETS_))
def test_random_arguments_are_accepted_or_refused_by_name(target: str) -> None:
    call, must_accept = TARGETS_[target]

    @settings(max_examples=60, deadline=None)
    @given(garbage)
    def attack(value: Any) -> None:
        world = World()
        before = world.snapshot()
        with np.errstate(over="ignore", invalid="ignore"):  # numerics have their own suite
            error = refused_or_accepted(lambda: call(world, value), value)
        if must_accept is not None:
            assert (error is None) == must_accept(value), (value, error)
        if error is not None and "grad=" not in target and "lr=v" not in target:
            after = world.snapshot()
            np.testing.assert_array_equal(after[0], before[0])
            np.testing.assert_array_equal(after[1], before[1])
            assert after[3:] == before[3:], target
        if error is not None and "step(" in target:  # a refused step changes no weight either
            np.testing.assert_array_equal(world.w.value, before[0])
            np.testing.assert_array_equal(world.b.value, before[1])
            assert repr(world.adamw.state_dict()["state"]) in before[3]

    attack()


@pytest.mark.parametrize("value", [3, 2.5, None, "abc", object(), {"params": []}])
def test_optimizers_refuse_what_is_not_an_iterable_of_parameters(value: Any) -> None:
    for optimizer in (SGD, AdamW):
        with pytest.raises(FromScratchError):
            optimizer(value)
