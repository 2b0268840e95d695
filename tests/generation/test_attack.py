"""Generation under attack (issue 28): random schedules for the cache, random bad arguments.

Two properties over hypothesis-drawn cases, in the style of ``tests/autodiff/test_attack.py``:

* A random schedule of decoding steps (each row at any position, any token) is either refused
  by the cache, exactly when some query would read a slot its row has not written since the last
  rewrite (an independent model: one written length per row), or gives the logits of the
  uncached decoder run on the sequence those steps imply.
* Every public function of ``generation`` given a random argument either works or raises a
  package error (FromScratchError, ValueError side) naming the value; nothing else leaks, and a
  refused call leaves the cache it was given as it was.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError, FromScratchError, TokenError
from llm_from_scratch.generation import (
    KVCache,
    cache_bytes,
    decode_step,
    decoder_step_work,
    entropy,
    generate,
    greedy,
    multiply_adds,
    next_tokens,
    pad_prompts,
    prefill,
    probabilities,
    sample,
    temperature_scale,
    top_k_filter,
    top_p_filter,
)
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.validate import MAX_ELEMENTS

VOCAB, CAPACITY = 7, 6
MODELS = {
    scheme: Decoder(VOCAB, 8, 2, 2, 16, positions=scheme, rng=SplitMix64(5))
    for scheme in ("rope", "alibi", "sinusoidal")
}

# --- random schedules for the cache -------------------------------------------------------------

steps = st.lists(
    st.tuples(
        st.lists(st.integers(0, CAPACITY - 1), min_size=2, max_size=2),  # a position per row
        st.lists(st.integers(0, VOCAB - 1), min_size=2, max_size=2),  # a token per row
    ),
    min_size=1,
    max_size=7,
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(MODELS)), steps)
def test_a_random_schedule_is_refused_exactly_at_a_gap_or_matches_the_uncached_decoder(
    scheme, schedule
):
    model = MODELS[scheme]
    cache = KVCache(model, 2, CAPACITY)
    written = [0, 0]  # the independent model: row b holds slots 0 … written[b] − 1
    sequences: list[list[int]] = [[], []]
    for positions, tokens in schedule:
        refused = any(p > written[b] for b, p in enumerate(positions))
        before = [layer.keys.copy() for layer in cache.layers]
        try:
            logits = decode_step(model, cache, tokens, positions).value  # (B, V)
        except TokenError as error:
            assert refused, (positions, written, error)
            for layer, keys in zip(cache.layers, before, strict=True):
                assert np.array_equal(layer.keys, keys)  # refused before writing
            continue
        assert not refused, (positions, written)
        for b, (p, token) in enumerate(zip(positions, tokens, strict=True)):
            sequences[b] = [*sequences[b][:p], token]
            written[b] = p + 1
        for b in range(2):
            truth = model(np.array([sequences[b]])).value[0, -1]  # the whole sequence again
            np.testing.assert_allclose(logits[b], truth, rtol=0, atol=1e-12)
    assert cache.filled_lengths().tolist() == written


# --- random arguments -----------------------------------------------------------------------


def arguments(wide: st.SearchStrategy[int]) -> st.SearchStrategy[Any]:
    """Any kind of argument; ``wide`` draws the integers far from the usual sizes."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 12),
        wide,
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=3),
        st.lists(st.integers(-2, 12), max_size=3),
        st.lists(st.lists(st.integers(-2, 12), max_size=3), max_size=2),
        st.lists(st.floats(-3, 3), min_size=1, max_size=3),
        st.just([[1], [1, 2]]),
        st.builds(object),
        st.builds(lambda n: np.arange(float(n)), st.integers(0, 4)),
        st.builds(lambda n: np.arange(n).reshape(1, n), st.integers(0, 4)),
        st.builds(lambda n: Tensor(np.ones(n)), st.integers(1, 3)),
    )


garbage = arguments(st.integers(-(10**20), 10**20))


def spellings(value: Any) -> list[str]:
    """Ways a message may name ``value``: its repr, str, type, shape or dtype."""
    if isinstance(value, Tensor):
        return ["Tensor", str(value.shape)]
    if isinstance(value, np.ndarray):
        return [str(value.shape), str(value.dtype), repr(value)[:20]]
    words = [repr(value)[:20], str(value)[:20], type(value).__name__]
    with contextlib.suppress(ValueError):
        array = np.asarray(value)
        words += [str(array.shape), str(array.dtype)]
    return words


def refused_or_accepted(call: Callable[[], Any], value: Any) -> BaseException | None:
    """Run ``call``; a refusal must be the package's, ValueError side. Returns the error."""
    try:
        call()
    except FromScratchError as error:
        assert isinstance(error, ValueError), type(error)
        return error
    return None


M = MODELS["rope"]
LOGITS = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]])


def _cache() -> KVCache:
    cache = KVCache(M, 1, CAPACITY)
    prefill(M, cache, np.array([[1, 2]]))
    return cache


def _generate(**options: Any) -> Any:
    return generate(M, [[1, 2]], **({"max_new_tokens": 2, "do_sample": False} | options))


TARGETS: dict[str, Callable[[Any], Any]] = {
    "generate(prompts=v)": lambda v: generate(M, v, max_new_tokens=1, do_sample=False),
    "generate(max_new_tokens=v)": lambda v: _generate(max_new_tokens=v),
    "generate(rng=v)": lambda v: _generate(rng=v, do_sample=True),
    "generate(do_sample=v)": lambda v: _generate(do_sample=v, rng=SplitMix64(1)),
    "generate(temperature=v)": lambda v: _generate(temperature=v),
    "generate(top_k=v)": lambda v: _generate(top_k=v),
    "generate(top_p=v)": lambda v: _generate(top_p=v),
    "generate(context=v)": lambda v: _generate(context=v),
    "generate(window=v)": lambda v: _generate(window=v, use_cache=False),
    "generate(end_id=v)": lambda v: _generate(end_id=v),
    "generate(pad_id=v)": lambda v: _generate(pad_id=v),
    "generate(use_cache=v)": lambda v: _generate(use_cache=v),
    "generate(keep_logits=v)": lambda v: _generate(keep_logits=v),
    "pad_prompts(prompts=v)": lambda v: pad_prompts(v, VOCAB),
    "pad_prompts(vocab_size=v)": lambda v: pad_prompts([[1]], v),
    "pad_prompts(pad_id=v)": lambda v: pad_prompts([[1]], VOCAB, v),
    "prefill(ids=v)": lambda v: prefill(M, KVCache(M, 1, CAPACITY), v),
    "prefill(cache=v)": lambda v: prefill(M, v, np.array([[1]])),
    "decode_step(tokens=v)": lambda v: decode_step(M, _cache(), v, [2]),
    "decode_step(positions=v)": lambda v: decode_step(M, _cache(), [1], v),
    "KVCache(batch=v)": lambda v: KVCache(M, v, 4),
    "KVCache(capacity=v)": lambda v: KVCache(M, 1, v),
    "KVCache.start(v)": lambda v: _cache().start(v),
    "KVCache.layer(v)": lambda v: _cache().layer(v),
    "cache_bytes(v)": lambda v: cache_bytes(v, 4, 8),
    "probabilities(v)": probabilities,
    "entropy(v)": entropy,
    "greedy(v)": greedy,
    "sample(logits=v)": lambda v: sample(v, SplitMix64(0)),
    "sample(rng=v)": lambda v: sample(LOGITS, v),
    "temperature_scale(v)": lambda v: temperature_scale(LOGITS, v),
    "top_k_filter(v)": lambda v: top_k_filter(LOGITS, v),
    "top_p_filter(v)": lambda v: top_p_filter(LOGITS, v),
    "next_tokens(do_sample=v)": lambda v: next_tokens(LOGITS, SplitMix64(0), do_sample=v),
    "next_tokens(rng=v)": lambda v: next_tokens(LOGITS, v),
    "multiply_adds(v)": multiply_adds,
    "decoder_step_work(length=v)": lambda v: decoder_step_work(M, v, cached=True),
    "decoder_step_work(cached=v)": lambda v: decoder_step_work(M, 2, cached=v),
}

FLAGS = {"generate(do_sample=v)", "generate(use_cache=v)", "generate(keep_logits=v)"}
FLAGS |= {"next_tokens(do_sample=v)", "decoder_step_work(cached=v)"}


# options read as one number, flag or generator: a refusal quotes the value received
NAMED = FLAGS | {t for t in TARGETS if t.startswith(("generate(", "KVCache(", "pad_prompts(pad"))}
NAMED |= {"cache_bytes(v)", "KVCache.layer(v)", "temperature_scale(v)", "top_k_filter(v)"}
NAMED |= {"top_p_filter(v)", "sample(rng=v)", "next_tokens(rng=v)", "decoder_step_work(length=v)"}
NAMED -= {"generate(prompts=v)"}


# Sizes whose accepted values cost work in proportion to them: decoder_step_work(length=n)
# fills a cache of n − 1 positions ([n, n] scores per head) and generate(max_new_tokens=n) runs
# up to n steps. Drawn from the whole range, a case took 19 s (n = 12451) and could take hours
# (generate accepts up to 2^25 − 2 new tokens here). Every size from 1 to the first refused
# one passes the same checks, so the wide draws skip the costly accepted band (CHEAP, refused)
# and the edge itself, the first refused size (a closed form of MAX_ELEMENTS), is always tried.
CHEAP = 64
KV_WIDTH = M.blocks[0].attention.num_kv_heads * M.blocks[0].attention.head_width  # G · d_h
FIRST_REFUSED = {
    "decoder_step_work(length=v)": math.isqrt(MAX_ELEMENTS) + 1,  # T² > MAX_ELEMENTS
    # the cache holds prompt (2) + n positions of G · d_h values: 2 + n > MAX_ELEMENTS / (G·d_h)
    "generate(max_new_tokens=v)": MAX_ELEMENTS // KV_WIDTH - 2 + 1,
}
SIZED = {
    target: arguments(st.one_of(st.integers(-(10**20), CHEAP), st.integers(refused, 10**20)))
    for target, refused in FIRST_REFUSED.items()
}


def is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_random_arguments_are_accepted_or_refused_by_the_package(target):
    call = TARGETS[target]

    @settings(max_examples=60, deadline=None)
    @given(SIZED.get(target, garbage))
    def attack(value):
        error = refused_or_accepted(lambda: call(value), value)
        if target in FLAGS:  # flags: exactly True and False pass
            assert (error is None) == isinstance(value, bool), (value, error)
        if target in ("generate(pad_id=v)", "generate(end_id=v)", "pad_prompts(pad_id=v)"):
            token = is_integer(value) and 0 <= value < VOCAB
            token = token or (value is None and target == "generate(end_id=v)")
            assert (error is None) == token, (value, error)
        plain = value is None or isinstance(value, int | float | str)
        if error is not None and plain and target in NAMED:  # the message names the value
            assert any(w in str(error) for w in spellings(value)), (value, str(error))

    if target in FIRST_REFUSED:
        attack = example(FIRST_REFUSED[target])(attack)  # the refusal edge, every run
    attack()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**7))
def test_a_decode_step_never_accepts_a_non_integer_position(whole):
    cache = _cache()
    for position in (whole + 0.5, float(whole), np.float32(whole), str(whole)):
        with pytest.raises(TokenError, match="not rounded"):
            decode_step(M, cache, [1], [position])
    assert cache.filled_lengths().tolist() == [2]


@pytest.mark.parametrize("length", [10**6, 10**9, 10**12, 2**62, 10**20])
def test_decoder_step_work_refuses_a_length_whose_scores_cannot_be_held(length):
    """Refused by the package before numpy allocates (no MemoryError, no numpy ValueError)."""
    for cached in (True, False):
        with pytest.raises(ArgumentError, match=r"attention scores \[T, T\] per head"):
            decoder_step_work(M, length, cached=cached)


@pytest.mark.parametrize("target", sorted(FIRST_REFUSED))
def test_the_first_size_too_large_to_hold_is_refused_by_the_package(target):
    """The edge the wide draws keep: the closed-form first refused size, before numpy allocates."""
    with pytest.raises(ArgumentError, match="refuses more than"):
        TARGETS[target](FIRST_REFUSED[target])


@pytest.mark.parametrize("batch", [721_764_640, 10**12])
def test_a_cache_too_large_to_hold_is_refused_before_anything_is_allocated(batch):
    """KVCache checks every size first (once a [B] array of 5.4 GiB came before the refusal)."""
    tracemalloc.start()
    try:
        with pytest.raises(ArgumentError, match=r"KVCache layer \[B, G, C, d_h\]"):
            KVCache(M, batch, 4)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"KVCache(batch={batch}) allocated {peak:,} bytes before refusing"
