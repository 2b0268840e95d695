"""The nn layers under attack: random bad arguments for every constructor and forward.

Each example corrupts one argument of an otherwise valid call and requires (1) an error of the
package's own type (``FromScratchError``, and ``ValueError`` for bad values), never a raw
numpy/Python one and never silent acceptance; (2) a message that names what was received; (3)
the generator, the caller's arrays and the module exactly as they were before the call.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import FromScratchError
from llm_from_scratch.nn import (
    GLU,
    ALiBiPositions,
    Decoder,
    Embedding,
    FeedForward,
    LayerNorm,
    Linear,
    MixtureOfExperts,
    MultiHeadAttention,
    RMSNorm,
    RoPEPositions,
    RotaryEmbedding,
    SwiGLU,
    TopKRouter,
    TransformerBlock,
    alibi_bias,
    assign_capacity,
    capacity_from_factor,
    causal_mask,
    dense_gates,
    importance_loss,
    merge_heads,
    pair_frequencies,
    parameter_budget,
    pre_norm,
    residual,
    rotate_pairs,
    scaled_dot_product_attention,
    sinusoidal_encoding,
    split_heads,
    standardize,
    top_k_gates,
)
from llm_from_scratch.random import SplitMix64

ATTACK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- what a careless or hostile caller passes ----------------------------------------------------

BAD_COUNTS = [0, -1, -(10**6), 2.0, 2.5, True, False, "3", None, [3], 1j, float("nan")]
BAD_COUNTS += [np.float64(3.0), np.bool_(True), 10**12]  # 10**12: refused by the size guard
BAD_FLAGS = ["no", "False", "", 0, 1, 1.0, None, np.int64(1), [], [True]]
BAD_EPS = [-1e-5, -1, float("nan"), float("inf"), "small", True, None, [1e-5], 1j]
BAD_RNGS: list[Callable[[], Any]] = [
    lambda: None,
    lambda: np.random.default_rng(0),
    lambda: 42,
    lambda: "seed",
    lambda: random.Random(0),
    lambda: np.random.RandomState(0),
]
BAD_KINDS = {"count": BAD_COUNTS, "flag": BAD_FLAGS, "eps": BAD_EPS}


def names_received(message: str, value: Any) -> bool:
    """The message quotes the value, its shape, its dtype or (for an object) its type."""
    clues = [repr(value), str(value), type(value).__name__]
    if isinstance(value, np.ndarray):
        clues = [str(value.shape), str(value.dtype)]
        clues += [f"got {value.shape[0]}."] if value.ndim == 1 else []  # a vector's width
        clues += ["rank-0", "scalar"] if value.ndim == 0 else []
    return any(clue in message for clue in clues if clue)


def refused(call: Callable[[], Any]) -> FromScratchError:
    """The package's typed error raised by call(); anything else fails the test."""
    try:
        result = call()
    except FromScratchError as error:
        assert isinstance(error, ValueError | RuntimeError)
        return error
    raise AssertionError(f"accepted, returning {result!r}")


# --- constructors: (build(rng, arguments), valid arguments, kind of each argument) ---------------

Builder = Callable[[SplitMix64, dict[str, Any]], Any]
CONSTRUCTORS: dict[str, tuple[Builder, dict[str, Any], dict[str, str]]] = {
    "Linear": (
        lambda rng, a: Linear(a["input_width"], a["output_width"], bias=a["bias"], rng=rng),
        {"input_width": 3, "output_width": 2, "bias": True},
        {"input_width": "count", "output_width": "count", "bias": "flag"},
    ),
    "FeedForward": (
        lambda rng, a: FeedForward(a["model_width"], a["hidden_width"], bias=a["bias"], rng=rng),
        {"model_width": 4, "hidden_width": 8, "bias": False},
        {"model_width": "count", "hidden_width": "count", "bias": "flag"},
    ),
    "SwiGLU": (
        lambda rng, a: SwiGLU(a["input_width"], a["hidden_width"], a["output_width"], rng=rng),
        {"input_width": 4, "hidden_width": 6, "output_width": 4},
        {"input_width": "count", "hidden_width": "count", "output_width": "count"},
    ),
    "GLU": (
        lambda rng, a: GLU(a["input_width"], a["hidden_width"], a["output_width"], rng=rng),
        {"input_width": 4, "hidden_width": 6, "output_width": 4},
        {"input_width": "count", "hidden_width": "count", "output_width": "count"},
    ),
    "LayerNorm": (
        lambda rng, a: LayerNorm(a["width"], a["eps"]),
        {"width": 4, "eps": 1e-5},
        {"width": "count", "eps": "eps"},
    ),
    "RMSNorm": (
        lambda rng, a: RMSNorm(a["width"], a["eps"]),
        {"width": 4, "eps": 1e-6},
        {"width": "count", "eps": "eps"},
    ),
    "MultiHeadAttention": (
        lambda rng, a: MultiHeadAttention(
            a["model_width"], a["num_heads"], causal=a["causal"], rng=rng
        ),
        {"model_width": 4, "num_heads": 2, "causal": True},
        {"model_width": "count", "num_heads": "count", "causal": "flag"},
    ),
    "TopKRouter": (
        lambda rng, a: TopKRouter(
            a["model_width"], a["num_experts"], a["k"], noisy=a["noisy"], rng=rng
        ),
        {"model_width": 4, "num_experts": 3, "k": 2, "noisy": False},
        {"model_width": "count", "num_experts": "count", "k": "count", "noisy": "flag"},
    ),
    "MixtureOfExperts": (
        lambda rng, a: MixtureOfExperts(
            a["model_width"], a["hidden_width"], a["num_experts"], a["k"], rng=rng
        ),
        {"model_width": 4, "hidden_width": 6, "num_experts": 3, "k": 2},
        {"model_width": "count", "hidden_width": "count", "num_experts": "count", "k": "count"},
    ),
    "TransformerBlock": (
        lambda rng, a: TransformerBlock(
            a["model_width"], a["num_heads"], a["hidden_width"], causal=a["causal"], rng=rng
        ),
        {"model_width": 4, "num_heads": 2, "hidden_width": 8, "causal": True},
        {"model_width": "count", "num_heads": "count", "hidden_width": "count", "causal": "flag"},
    ),
    "Embedding": (
        lambda rng, a: Embedding(a["vocab_size"], a["model_width"], rng=rng),
        {"vocab_size": 10, "model_width": 4},
        {"vocab_size": "count", "model_width": "count"},
    ),
    "Decoder": (
        lambda rng, a: Decoder(
            a["vocab_size"],
            a["model_width"],
            a["num_layers"],
            a["num_heads"],
            a["hidden_width"],
            tie_embeddings=a["tie_embeddings"],
            rng=rng,
        ),
        {
            "vocab_size": 10,
            "model_width": 4,
            "num_layers": 1,
            "num_heads": 2,
            "hidden_width": 8,
            "tie_embeddings": True,
        },
        {
            "vocab_size": "count",
            "model_width": "count",
            "num_layers": "count",
            "num_heads": "count",
            "hidden_width": "count",
            "tie_embeddings": "flag",
        },
    ),
    "RotaryEmbedding": (
        lambda rng, a: RotaryEmbedding(a["head_width"]),
        {"head_width": 4},
        {"head_width": "count"},
    ),
    "ALiBiPositions": (
        lambda rng, a: ALiBiPositions(a["num_heads"]),
        {"num_heads": 2},
        {"num_heads": "count"},
    ),
    "sinusoidal_encoding": (
        lambda rng, a: sinusoidal_encoding(a["num_positions"], a["width"]),
        {"num_positions": 3, "width": 4},
        {"num_positions": "count", "width": "count"},
    ),
    "causal_mask": (
        lambda rng, a: causal_mask(a["query_len"], a["key_len"]),
        {"query_len": 2, "key_len": 3},
        {"query_len": "count", "key_len": "count"},
    ),
    "capacity_from_factor": (
        lambda rng, a: capacity_from_factor(a["tokens"], a["num_experts"], a["k"], 1.0),
        {"tokens": 8, "num_experts": 4, "k": 2},
        {"tokens": "count", "num_experts": "count", "k": "count"},
    ),
}
USES_RNG = [
    "Linear",
    "FeedForward",
    "SwiGLU",
    "GLU",
    "MultiHeadAttention",
    "TopKRouter",
    "MixtureOfExperts",
    "TransformerBlock",
    "Embedding",
    "Decoder",
]
ZERO_ALLOWED = {("sinusoidal_encoding", "num_positions"), ("causal_mask", "query_len")}
ZERO_ALLOWED |= {("causal_mask", "key_len"), ("capacity_from_factor", "tokens")}


@st.composite
def corrupted_call(draw: st.DrawFn) -> tuple[str, str, Any, dict[str, Any]]:
    """(constructor, argument, bad value, arguments) with exactly one argument corrupted."""
    name = draw(st.sampled_from(sorted(CONSTRUCTORS)))
    _, valid, kinds = CONSTRUCTORS[name]
    argument = draw(st.sampled_from(sorted(kinds)))
    pool = BAD_KINDS[kinds[argument]]
    if (name, argument) in ZERO_ALLOWED:
        pool = [v for v in pool if not (type(v) is int and v == 0)]
    value = draw(st.sampled_from(pool))
    return name, argument, value, {**valid, argument: value}


@ATTACK
@given(corrupted_call(), st.integers(0, 2**64 - 1))
def test_every_constructor_refuses_a_bad_argument(case: tuple, seed: int) -> None:
    name, argument, value, arguments = case
    build, _, _ = CONSTRUCTORS[name]
    rng = SplitMix64(seed)
    error = refused(lambda: build(rng, arguments))
    assert names_received(str(error), value), f"{name}({argument}={value!r}): {error}"
    assert rng.state == SplitMix64(seed).state, f"{name} advanced the generator"


@ATTACK
@given(st.sampled_from(USES_RNG), st.sampled_from(BAD_RNGS))
def test_every_constructor_refuses_a_generator_that_is_not_splitmix64(
    name: str, make_rng: Callable[[], Any]
) -> None:
    build, valid, _ = CONSTRUCTORS[name]
    rng = make_rng()
    error = refused(lambda: build(rng, valid))
    message = str(error)
    assert "SplitMix64" in message and type(rng).__name__ in message, message


def test_the_valid_calls_in_the_table_build() -> None:
    # The attacks corrupt one argument of these; each must be valid as it stands.
    for name, (build, valid, _) in CONSTRUCTORS.items():
        assert build(SplitMix64(1), valid) is not None, name


# --- from_parameters: explicit arrays ------------------------------------------------------------

BAD_ARRAYS: list[Any] = [
    None,
    "abc",
    [[1.0, 2.0], [3.0]],
    [[1.0, None], [2.0, 3.0]],
    [[1 + 1j, 2.0], [3.0, 4.0]],
    {"w": 1.0},
    np.full((2, 2), np.nan),
    np.array([[np.inf, 1.0], [1.0, 1.0]]),
    np.zeros((2, 3, 2)),
    np.zeros(4),
    np.zeros((0, 2)),
    np.zeros((2, 0)),
    3.0,
]
FROM_PARAMETERS: dict[str, Callable[[Any], Any]] = {
    "Linear weight": lambda w: Linear.from_parameters(w),
    "Linear bias": lambda b: Linear.from_parameters(np.ones((2, 2)), b),
    "FeedForward W2": lambda w: FeedForward.from_parameters(np.ones((2, 2)), None, w, None),
    "SwiGLU down": lambda w: SwiGLU.from_parameters(np.ones((2, 2)), np.ones((2, 2)), w),
    "MultiHeadAttention wk": lambda w: MultiHeadAttention.from_parameters(
        np.eye(2), w, np.eye(2), np.eye(2), num_heads=1
    ),
    "LayerNorm gain": lambda g: LayerNorm.from_parameters(g, np.zeros(2)),
    "RMSNorm gain": lambda g: RMSNorm.from_parameters(g),
    "Embedding weight": lambda w: Embedding.from_parameters(w),
    "TopKRouter weight": lambda w: TopKRouter.from_parameters(w, 1),
}


@ATTACK
@given(st.sampled_from(sorted(FROM_PARAMETERS)), st.sampled_from(range(len(BAD_ARRAYS))))
def test_from_parameters_refuses_bad_arrays_and_leaves_them_untouched(
    name: str, index: int
) -> None:
    value = BAD_ARRAYS[index]
    assume(not (name == "Linear bias" and value is None))  # None is a bias-free layer
    if name.endswith("gain") and isinstance(value, np.ndarray) and value.shape == (4,):
        value = np.zeros(3)  # a rank-1 gain is valid: give LayerNorm's bias a mismatch instead
        if name.startswith("RMSNorm"):
            value = np.zeros((1, 3))
    if name == "Linear bias" and isinstance(value, np.ndarray) and value.ndim == 1:
        value = np.zeros(3)  # width 3 against an output width of 2
    snapshot = value.copy() if isinstance(value, np.ndarray) else None
    error = refused(lambda: FROM_PARAMETERS[name](value))
    message = str(error)
    assert names_received(message, value) or "shape" in message, f"{name}: {message}"
    if snapshot is not None:
        np.testing.assert_array_equal(value, snapshot)


# --- forwards: modules built once, then fed garbage ----------------------------------------------


def _modules() -> dict[str, Any]:
    rng = SplitMix64(7)
    return {
        "Linear": Linear(3, 2, rng=rng),
        "FeedForward": FeedForward(4, 8, rng=rng),
        "SwiGLU": SwiGLU(4, 6, 4, rng=rng),
        "LayerNorm": LayerNorm(4),
        "RMSNorm": RMSNorm(4),
        "MultiHeadAttention": MultiHeadAttention(4, 2, positions=RoPEPositions(2), rng=rng),
        "TopKRouter": TopKRouter(4, 3, 2, rng=rng),
        "MixtureOfExperts": MixtureOfExperts(4, 6, 3, 2, rng=rng),
        "TransformerBlock": TransformerBlock(4, 2, 8, positions="alibi", rng=rng),
        "RotaryEmbedding": RotaryEmbedding(4),
    }


MODULES = _modules()
WIDTH = {"Linear": 3, "RotaryEmbedding": 4}
RANK = {"MultiHeadAttention": 3, "TransformerBlock": 3, "RotaryEmbedding": 2}
GARBAGE: list[Any] = [None, "abc", [[1.0, 2.0], [3.0]], {"x": 1}, [1 + 2j, 3.0], [None, 1.0]]


def _snapshot(module: Any) -> dict[str, Any]:
    state = module.state_dict() if hasattr(module, "state_dict") else {}
    grads = [p.grad for p in module.parameters()] if hasattr(module, "parameters") else []
    return {"state": state, "grads": grads}


def _unchanged(module: Any, before: dict[str, Any]) -> None:
    after = _snapshot(module)
    assert after["state"].keys() == before["state"].keys()
    for key, value in before["state"].items():
        np.testing.assert_array_equal(after["state"][key], value)
    assert all(g is None for g in after["grads"])


@st.composite
def wrong_shape(draw: st.DrawFn, name: str) -> np.ndarray:
    """A float array whose last axis (or rank) the module cannot read."""
    rank = RANK.get(name, 2)
    width = WIDTH.get(name, 4)
    choice = draw(st.sampled_from(["width", "rank"]))
    if choice == "width":
        lead = draw(st.lists(st.integers(1, 3), min_size=rank - 1, max_size=rank - 1))
        last = draw(st.integers(1, 9).filter(lambda n: n != width))
        shape = (*lead, last)
    else:
        ranks = [r for r in range(0, 5) if r != rank] if rank != 2 else [0]
        size = draw(st.sampled_from(ranks))
        shape = tuple(draw(st.lists(st.integers(1, 3), min_size=size, max_size=size)))
        shape = (*shape[:-1], width) if shape else ()
        if len(shape) == rank:
            shape = ()
    return SplitMix64(draw(st.integers(0, 99))).uniform(-1.0, 1.0, shape)


@ATTACK
@given(st.data())
def test_every_forward_refuses_garbage_and_wrong_shapes(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(MODULES)))
    module = MODULES[name]
    if data.draw(st.booleans()):
        value = data.draw(st.sampled_from(GARBAGE))
    else:
        value = data.draw(wrong_shape(name))
        if name in ("TopKRouter", "RotaryEmbedding") and value.ndim == 0:
            value = np.ones((2, 5))  # the router's projection reads rank ≥ 1; RoPE rows
    note(f"{name}({value!r})")
    before = _snapshot(module)
    error = refused(lambda: module(value))
    assert names_received(str(error), value), f"{name}({value!r}): {error}"
    _unchanged(module, before)


DECODER = Decoder(10, 4, 1, 2, 8, positions="sinusoidal", rng=SplitMix64(8))
BAD_IDS: list[Any] = [
    None,
    "abc",
    [[1, 2], [3]],
    np.array([[0.0, 1.0]]),
    np.array([[1, 10]]),
    np.array([[-1, 2]]),
    np.array([1, 2]),
    np.array([[True, False]]),
    Tensor([[1.0, 2.0]]),
]


@ATTACK
@given(st.sampled_from(range(len(BAD_IDS))), st.sampled_from(["forward", "greedy", "embedding"]))
def test_decoder_and_embedding_refuse_bad_token_ids(index: int, entry: str) -> None:
    ids = BAD_IDS[index]
    before = _snapshot(DECODER)
    call = {
        "forward": lambda: DECODER(ids),
        "greedy": lambda: DECODER.greedy_step(ids),
        "embedding": lambda: DECODER.embedding(ids),
    }[entry]
    error = refused(call)
    message = str(error)
    clue = names_received(message, ids) or "dtype" in message or "[0, 10)" in message
    assert clue, message
    _unchanged(DECODER, before)


def test_decoder_greedy_step_refuses_a_bad_pad_id() -> None:
    for pad in (-1, 1.5, "0", None, True):
        error = refused(lambda pad=pad: DECODER.greedy_step(np.array([[1, 2]]), pad_id=pad))
        assert repr(pad) in str(error)


# --- objects that would build but could not run ---------------------------------------------


def test_parts_that_cannot_run_together_fail_at_construction() -> None:
    rng = SplitMix64(9)
    state = rng.state
    attempts = [
        lambda: MultiHeadAttention(4, 2, positions=ALiBiPositions(3), rng=rng),
        lambda: MultiHeadAttention(8, 2, positions=RoPEPositions(2), rng=rng),
        lambda: TransformerBlock(4, 2, 8, ffn=FeedForward(6, 8, rng=SplitMix64(1)), rng=rng),
        lambda: TransformerBlock(4, 2, 8, ffn=SwiGLU(4, 8, 5, rng=SplitMix64(1)), rng=rng),
        lambda: TransformerBlock(6, 2, 8, positions="rope", rng=rng),  # d_h = 3, odd
        lambda: TransformerBlock(4, 2, 8, rope_pairing="diagonal", rng=rng),
        lambda: Decoder(10, 5, 1, 1, 8, positions="sinusoidal", rng=rng),
        lambda: TransformerBlock.from_modules(
            LayerNorm(4),
            MultiHeadAttention(4, 2, rng=SplitMix64(2)),
            LayerNorm(5),
            FeedForward(4, 8, rng=SplitMix64(3)),
        ),
        lambda: MixtureOfExperts.from_parameters(
            TopKRouter(4, 2, 1, rng=SplitMix64(4)),
            [SwiGLU(4, 6, 4, rng=SplitMix64(5)), SwiGLU(3, 6, 3, rng=SplitMix64(6))],
        ),
    ]
    for attempt in attempts:
        refused(attempt)
    assert rng.state == state


def test_unallocatable_sizes_fail_fast_naming_the_size() -> None:
    rng = SplitMix64(10)
    state = rng.state
    for attempt, size in [
        (lambda: Linear(10**9, 10**9, rng=rng), "1000000000 × 1000000000"),
        (lambda: Embedding(10**7, 10**4, rng=rng), "10000000 × 10000"),
        (lambda: MixtureOfExperts(512, 2048, 10**4, 2, rng=rng), "10000"),
        (lambda: sinusoidal_encoding(10**9, 512), "1000000000 × 512"),
        (lambda: alibi_bias(8, 10**5, 10**5), "8 × 100000 × 100000"),
        (lambda: causal_mask(10**5, 10**5), "100000 × 100000"),
        (lambda: Decoder(10**6, 4096, 64, 8, 16384, rng=rng), "num_layers=64"),
    ]:
        assert size in str(refused(attempt))
    assert rng.state == state


# --- the public functions beside the modules ------------------------------------------------

ONES = np.ones((1, 1, 2, 2))  # (B, H, T, d_h)
FUNCTION_ATTACKS: list[tuple[str, Callable[[], Any], str]] = [
    ("top_k_gates None", lambda: top_k_gates(None, 1), "None"),
    ("top_k_gates k > E", lambda: top_k_gates(np.ones((2, 3)) / 3, 4), "got 4"),
    ("top_k_gates k bool", lambda: top_k_gates(np.ones((2, 3)) / 3, True), "True"),
    (
        "dense_gates ragged",
        lambda: dense_gates([[1], [1, 2]], np.ones((1, 1)), 3),
        "[[1], [1, 2]]",
    ),
    ("dense_gates index", lambda: dense_gates(np.array([[5]]), np.ones((1, 1)), 3), "to 5"),
    ("assign_capacity ragged", lambda: assign_capacity([[0, 1], [1]], 1, None), "[[0, 1], [1]]"),
    ("assign_capacity k > E", lambda: assign_capacity(np.zeros((2, 2), int), 3, None), "got 3"),
    ("assign_capacity float", lambda: assign_capacity(np.zeros((2, 2)), 1, None), "float64"),
    ("capacity_from_factor -4", lambda: capacity_from_factor(-4, 2, 1, 1.0), "-4"),
    ("capacity_from_factor E=0", lambda: capacity_from_factor(4, 0, 1, 1.0), "got 0"),
    ("capacity_from_factor bool", lambda: capacity_from_factor(4, 2, 1, True), "True"),
    ("importance_loss str", lambda: importance_loss("abc"), "'abc'"),
    ("split_heads None", lambda: split_heads(None, 2), "None"),
    ("split_heads heads", lambda: split_heads(np.ones((1, 2, 4)), 2.0), "2.0"),
    ("merge_heads ragged", lambda: merge_heads([[1.0], [1.0, 2.0]]), "[[1.0], [1.0, 2.0]]"),
    ("sdpa causal", lambda: scaled_dot_product_attention(ONES, ONES, ONES, causal="no"), "'no'"),
    (
        "sdpa ragged mask",
        lambda: scaled_dot_product_attention(ONES, ONES, ONES, mask=[[True], [True, False]]),
        "[[True], [True, False]]",
    ),
    ("sdpa bias str", lambda: scaled_dot_product_attention(ONES, ONES, ONES, bias="b"), "'b'"),
    ("rotate_pairs angles", lambda: rotate_pairs(np.ones((2, 4)), "abc"), "'abc'"),
    ("rotate_pairs nan", lambda: rotate_pairs(np.ones((2, 4)), np.full((2, 2), np.nan)), "NaN"),
    ("alibi ragged slopes", lambda: ALiBiPositions(2, slopes=[[1], [2, 3]]), "[[1], [2, 3]]"),
    ("alibi_bias float len", lambda: alibi_bias(2, 2.0, 3), "2.0"),
    ("pair_frequencies odd", lambda: pair_frequencies(5), "5"),
    ("standardize axis", lambda: standardize(np.ones((2, 3)), axis=5), "5"),
    ("standardize eps", lambda: standardize(np.ones((2, 3)), eps=-1.0), "-1.0"),
    ("residual branch", lambda: residual(np.ones(3), [1]), "list"),
    ("pre_norm norm", lambda: pre_norm(np.ones(3), None, lambda t: t), "NoneType"),
    ("parameter_budget flag", lambda: parameter_budget(4, biases=1), "1"),
    ("router noise rng", lambda: MODULES["TopKRouter"](np.ones((2, 4)), noise_rng=42), "int"),
    (
        "mha average_weights",
        lambda: MODULES["MultiHeadAttention"](np.ones((1, 2, 4)), average_weights=0),
        "0",
    ),
    (
        "block key padding",
        lambda: MODULES["TransformerBlock"](np.ones((1, 2, 4)), [[1], [2, 3]]),
        "[[1], [2, 3]]",
    ),
    (
        "rope positions nan",
        lambda: MODULES["RotaryEmbedding"](np.ones((2, 4)), [0.0, np.nan]),
        "NaN",
    ),
    (
        "load_state_dict ragged",
        lambda: Linear(2, 2, rng=SplitMix64(1)).load_state_dict(
            {"linear.weight": [[1.0], [2.0, 3.0]], "linear.bias": [0.0, 0.0]}
        ),
        "[[1.0], [2.0, 3.0]]",
    ),
]


@pytest.mark.parametrize(
    ("label", "call", "clue"), FUNCTION_ATTACKS, ids=[a[0] for a in FUNCTION_ATTACKS]
)
def test_public_functions_refuse_bad_arguments(
    label: str, call: Callable[[], Any], clue: str
) -> None:
    error = refused(call)
    assert clue in str(error), f"{label}: {error}"
