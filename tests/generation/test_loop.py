"""The generation loop: seeds, stops, padding, refused arguments, no side effects."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import grad_enabled
from llm_from_scratch.errors import ArgumentError, TokenError
from llm_from_scratch.generation import KVCache, generate, next_tokens, pad_prompts, prefill
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64


def model(positions="rope"):
    return Decoder(11, 8, 2, 2, 16, positions=positions, rng=SplitMix64(2))


PROMPTS = [[1, 2, 3], [4], [5, 6, 7, 8]]


def test_same_seed_same_text_other_seed_other_text():
    m = model()
    a = generate(m, PROMPTS, max_new_tokens=30, rng=SplitMix64(1))
    b = generate(m, PROMPTS, max_new_tokens=30, rng=SplitMix64(1))
    c = generate(m, PROMPTS, max_new_tokens=30, rng=SplitMix64(2))
    assert all(np.array_equal(x, y) for x, y in zip(a.sequences, b.sequences, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a.sequences, c.sequences, strict=True))


def test_greedy_equals_repeated_argmax_of_the_uncached_decoder():
    m = model()
    out = generate(m, [[1, 2, 3]], max_new_tokens=6, do_sample=False)
    ids = np.array([[1, 2, 3]])
    for _ in range(6):
        ids = m.greedy_step(ids)
    assert np.array_equal(out.sequences[0], ids[0])
    assert out.stop_reasons == ["max_new_tokens"]


def test_each_row_keeps_its_prompt_and_continues_from_its_own_last_position():
    m = model()
    out = generate(m, PROMPTS, max_new_tokens=1, do_sample=False)
    for prompt, seq, new in zip(PROMPTS, out.sequences, out.new_tokens, strict=True):
        assert seq[: len(prompt)].tolist() == prompt and len(new) == 1
        alone = m.next_token_logits(np.array([prompt])).value[0]
        assert new[0] == int(np.argmax(alone))


def test_end_token_stops_its_row_only():
    m = model()
    free = generate(m, PROMPTS, max_new_tokens=12, do_sample=False)
    end = int(free.new_tokens[0][2])  # row 0's third new token
    out = generate(m, PROMPTS, max_new_tokens=12, do_sample=False, end_id=end)
    first = list(free.new_tokens[0]).index(end)
    assert out.new_tokens[0].tolist() == free.new_tokens[0][: first + 1].tolist()
    assert out.stop_reasons[0] == "end_id"
    for b in (1, 2):
        stop = list(free.new_tokens[b]).index(end) + 1 if end in free.new_tokens[b] else 12
        assert out.new_tokens[b].tolist() == free.new_tokens[b][:stop].tolist()


def test_context_caps_every_row_at_that_many_tokens():
    m = model()
    out = generate(m, PROMPTS, max_new_tokens=50, rng=SplitMix64(0), context=6)
    assert [len(s) for s in out.sequences] == [6, 6, 6]
    assert out.stop_reasons == ["context"] * 3
    assert out.cache.capacity == 6


def test_a_window_reads_only_each_rows_last_tokens_at_positions_from_zero():
    m = model()
    prompt = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    out = generate(m, prompt, max_new_tokens=3, do_sample=False, window=2, use_cache=False)
    ids = prompt
    for _ in range(3):  # by hand: argmax of the decoder on the last two tokens only
        step = np.argmax(m(ids[:, -2:]).value[:, -1], axis=-1)
        ids = np.concatenate([ids, step[:, None]], axis=1)
    assert all(np.array_equal(s, row) for s, row in zip(out.sequences, ids, strict=True))


def test_a_sampled_window_draws_one_uniform_per_row_per_step():
    """Chapter 10's samples: softmax(z / τ) of the last-window logits, SplitMix64 inverse CDF."""
    m, rng = model(), SplitMix64(7)
    out = generate(
        m,
        [[1, 2, 3]],
        max_new_tokens=8,
        rng=SplitMix64(7),
        temperature=0.8,
        window=4,
        use_cache=False,
    )
    ids = np.array([[1, 2, 3]])
    for _ in range(8):
        step = next_tokens(m(ids[:, -4:]).value[:, -1], rng, temperature=0.8)
        ids = np.concatenate([ids, step[:, None]], axis=1)
    assert np.array_equal(out.sequences[0], ids[0])


def test_a_window_cannot_use_the_cache():
    with pytest.raises(ArgumentError, match="use_cache=False"):
        generate(model(), PROMPTS, max_new_tokens=1, do_sample=False, window=2)
    with pytest.raises(ArgumentError, match="window must be at least 1"):
        generate(model(), PROMPTS, max_new_tokens=1, do_sample=False, window=0, use_cache=False)


def test_pad_prompts_pads_right_and_reports_lengths():
    ids, lengths = pad_prompts(PROMPTS, 11, pad_id=9)
    assert ids.tolist() == [[1, 2, 3, 9], [4, 9, 9, 9], [5, 6, 7, 8]]
    assert lengths.tolist() == [3, 1, 4]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"temperature": 0.0}, ArgumentError, "temperature"),
        ({"temperature": -0.5}, ArgumentError, "temperature"),
        ({"top_k": 0}, ArgumentError, "top_k"),
        ({"top_p": 0.0}, ArgumentError, "top_p"),
        ({"top_p": 1.5}, ArgumentError, "top_p"),
        ({"context": 3}, TokenError, "context of 3"),
        ({"rng": None}, ArgumentError, "SplitMix64"),
        ({"max_new_tokens": -1}, ArgumentError, "max_new_tokens"),
        ({"end_id": 11}, TokenError, "end_id"),
    ],
)
def test_bad_arguments_are_refused_before_any_work(kwargs, error, match):
    options = {"max_new_tokens": 3, "rng": SplitMix64(0)} | kwargs
    with pytest.raises(error, match=match):
        generate(model(), PROMPTS, **options)


@pytest.mark.parametrize(
    ("prompts", "match"),
    [
        ([], "at least one prompt"),
        ([[]], "must be integers; got dtype float64"),
        ([[1, 99]], r"must lie in \[0, 11\)"),
        ("abc", "list of token-ID sequences"),
        ([[1.5]], "must be integers; got dtype float64"),
    ],
)
def test_bad_prompts_are_refused(prompts, match):
    with pytest.raises(TokenError, match=match):
        generate(model(), prompts, max_new_tokens=1, do_sample=False)


def test_generation_records_nothing_and_leaves_parameters_and_other_caches_alone():
    m = model("alibi")
    before = {n: p.value.copy() for n, p in m.named_parameters()}
    other = KVCache(m, 1, 5)
    prefill(m, other, np.array([[1, 2]]))
    saved = [(layer.keys.copy(), layer.values.copy()) for layer in other.layers]
    out = generate(m, PROMPTS, max_new_tokens=8, rng=SplitMix64(3), keep_logits=True)
    assert grad_enabled()
    for n, p in m.named_parameters():
        assert np.array_equal(p.value, before[n]) and p.grad is None
    for layer, (k, v) in zip(other.layers, saved, strict=True):
        assert np.array_equal(layer.keys, k) and np.array_equal(layer.values, v)
    assert out.cache is not other
    for layer in out.cache.layers:
        assert layer.written[0].requires_grad is False  # ran under no_grad: nothing recorded
