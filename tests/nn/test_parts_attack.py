"""The model-family parts under attack: one corrupted argument per call, as in test_attack.

RoPE's theta and Llama 3 scaling, LearnedPositions, SparseMoE and the SwiGLU bias flag: a bad
argument gives the package's typed error naming what was received, and leaves the generator
where it was; drawn position arrays are either read or refused with a TokenError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llm_from_scratch.errors import TokenError
from llm_from_scratch.nn import SwiGLU
from llm_from_scratch.nn.moe import SparseMoE
from llm_from_scratch.nn.positions import (
    LearnedPositions,
    RotaryEmbedding,
    llama3_scaled_frequencies,
    rope_frequencies,
)
from llm_from_scratch.random import SplitMix64

from .test_attack import ATTACK, BAD_KINDS, names_received, refused

LLAMA3 = {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
NOT_TOO_BIG = [v for v in BAD_KINDS["count"] if v != 10**12]  # 10**12 is a valid context
NOT_NONE_EPS = [v for v in BAD_KINDS["eps"] if v is not None]
CALLS = {
    "LearnedPositions": (
        lambda rng, a: LearnedPositions(a["max_positions"], a["width"], rng=rng),
        {"max_positions": 8, "width": 4},
        {"max_positions": BAD_KINDS["count"], "width": BAD_KINDS["count"]},
    ),
    "SparseMoE": (
        lambda rng, a: SparseMoE(
            a["model_width"], a["hidden_width"], a["num_experts"], a["top_k"], rng=rng
        ),
        {"model_width": 4, "hidden_width": 6, "num_experts": 3, "top_k": 2},
        {k: BAD_KINDS["count"] for k in ("model_width", "hidden_width", "num_experts", "top_k")},
    ),
    "SwiGLU bias": (
        lambda rng, a: SwiGLU(4, 6, 4, bias=a["bias"], rng=rng),
        {"bias": True},
        {"bias": BAD_KINDS["flag"]},
    ),
    "RotaryEmbedding": (
        lambda rng, a: RotaryEmbedding(a["head_width"], theta=a["theta"], scaling=a["scaling"]),
        {"head_width": 8, "theta": 5e5, "scaling": {"rope_type": "llama3", **LLAMA3}},
        {
            "head_width": BAD_KINDS["count"],
            "theta": NOT_NONE_EPS,  # theta=None is the default: the frequency base is ``base``
            "scaling": ["llama3", 8.0, [("rope_type", "llama3")], {"rope_type": "yarn"}, {}],
        },
    ),
    "rope_frequencies": (
        lambda rng, a: rope_frequencies(a["head_width"], a["theta"]),
        {"head_width": 8, "theta": 1e4},
        {"head_width": BAD_KINDS["count"], "theta": BAD_KINDS["eps"]},
    ),
    "llama3_scaled_frequencies": (
        lambda rng, a: llama3_scaled_frequencies([1.0, 0.01, 1e-4], **a),
        LLAMA3,
        {
            "factor": BAD_KINDS["eps"],
            "low_freq_factor": BAD_KINDS["eps"],
            "high_freq_factor": BAD_KINDS["eps"],
            "original_max_position_embeddings": NOT_TOO_BIG,
        },
    ),
}


@st.composite
def corrupted(draw: st.DrawFn) -> tuple[str, str, Any, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(CALLS)))
    _, valid, pools = CALLS[name]
    argument = draw(st.sampled_from(sorted(pools)))
    value = draw(st.sampled_from(pools[argument]))
    return name, argument, value, {**valid, argument: value}


@ATTACK
@given(corrupted(), st.integers(0, 2**64 - 1))
def test_a_bad_argument_is_refused_by_name_and_the_generator_is_untouched(case, seed):
    name, argument, value, arguments = case
    build = CALLS[name][0]
    rng = SplitMix64(seed)
    error = refused(lambda: build(rng, arguments))
    assert names_received(str(error), value) or isinstance(value, dict), (
        f"{name}({argument}={value!r}): {error}"
    )
    assert rng.state == SplitMix64(seed).state


def test_the_valid_calls_work():
    for build, valid, _ in CALLS.values():
        build(SplitMix64(1), valid)


TABLE = LearnedPositions(6, 3, rng=SplitMix64(2))
position_arrays = hnp.arrays(
    dtype=st.sampled_from([np.int64, np.int32, np.uint8, np.float64, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
)


@ATTACK
@given(position_arrays)
def test_drawn_positions_are_read_or_refused_with_a_token_error(positions):
    before = TABLE.weight.value.copy()
    usable = (
        positions.dtype.kind in "iu"
        and positions.ndim in (1, 2)
        and (positions.size == 0 or (positions.min() >= 0 and positions.max() < 6))
    )
    if usable:
        out = TABLE(positions).value
        np.testing.assert_array_equal(out, before[positions.astype(np.int64)])
    else:
        error = refused(lambda: TABLE(positions))
        assert isinstance(error, TokenError)
    np.testing.assert_array_equal(TABLE.weight.value, before)
