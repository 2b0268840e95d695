"""Generation reads its arguments strictly (issue 28): each case below was silently misread once.

Every test here failed on the tree before the fix: the cache attended to slots never written, a
flat prompt list became one-token prompts, ``do_sample="no"`` sampled, a position of 1.7 was
truncated to 1, ``pad_id = V`` was accepted, and greedy decoding ignored garbage options.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import Tensor
from llm_from_scratch.errors import ArgumentError, TapeError, TokenError
from llm_from_scratch.generation import (
    KVCache,
    decode_step,
    decoder_step_work,
    entropy,
    generate,
    multiply_adds,
    next_tokens,
    pad_prompts,
    prefill,
)
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64

VOCAB = 11


def model(positions="rope", layers=1):
    return Decoder(VOCAB, 8, layers, 2, 16, positions=positions, rng=SplitMix64(2))


# --- the cache never reads a slot it has not written ----------------------------------------


def test_a_query_past_the_written_slots_is_refused_before_anything_runs():
    d = model()
    c = KVCache(d, 1, 8)
    with pytest.raises(TokenError, match=r"slot 0.*prefill 0 … T − 1 first"):
        c.start(np.array([[3]]))  # slots 0, 1, 2 were never written: zero keys and values
    assert c.query_positions.shape == (1, 0)  # refused before anything was set
    assert not c.layers[0].filled.any()


def test_positions_must_continue_the_sequence_and_a_rewrite_makes_later_slots_stale():
    d = model(layers=2)
    c = KVCache(d, 1, 8)
    prefill(d, c, np.array([[1, 2, 3]]))  # slots 0, 1, 2
    with pytest.raises(TokenError, match="slot 3"):
        decode_step(d, c, [4], [4])  # skips slot 3
    decode_step(d, c, [4], [3])  # continues: slots 0 … 3
    decode_step(d, c, [5], [1])  # re-runs position 1: slots 2 and 3 are stale now
    assert c.filled_lengths().tolist() == [2]
    with pytest.raises(TokenError, match="slot 2"):
        decode_step(d, c, [6], [3])
    decode_step(d, c, [6], [2])
    assert c.filled_lengths().tolist() == [3]


def test_a_position_twice_in_one_pass_is_refused():
    d = model()
    c = KVCache(d, 1, 8)
    with pytest.raises(TokenError, match="repeats a position"):
        c.start(np.array([[0, 0]]))


def test_a_layer_written_out_of_turn_is_refused_too():
    d = model()
    c = KVCache(d, 1, 8)
    c.query_positions = np.array([[2]])  # set by hand, bypassing start
    k = Tensor(np.ones((1, 2, 1, 4)))
    with pytest.raises(TokenError, match="slot 0"):
        c.layer(0).append(k, k)
    assert not c.layers[0].filled.any() and not c.layers[0].keys.any()


@pytest.mark.parametrize("index", [1, -1, 1.0, True, "0", None])
def test_layer_indices_outside_the_blocks_are_refused(index):
    c = KVCache(model(), 1, 4)
    with pytest.raises(ArgumentError, match=r"KVCache\.layer index"):
        c.layer(index)


def test_an_empty_pass_is_refused():
    c = KVCache(model(), 1, 4)
    with pytest.raises(TokenError, match="L >= 1"):
        c.start(np.zeros((1, 0), dtype=np.int64))


# --- prompts, flags, positions and IDs are read exactly ----------------------------------------


def test_a_flat_list_is_refused_not_read_as_one_token_prompts():
    d = model()
    with pytest.raises(TokenError, match=r"write \[\[1, 2, 3\]\]"):
        generate(d, [1, 2, 3], max_new_tokens=2, do_sample=False)
    with pytest.raises(TokenError, match=r"write \[\[1, 2, 3\]\]"):
        pad_prompts([1, 2, 3], VOCAB)
    with pytest.raises(TokenError, match=r"\[B, T\]"):
        generate(d, np.array([1, 2, 3]), max_new_tokens=2, do_sample=False)
    with pytest.raises(TokenError, match="1-D"):
        generate(d, [[[1, 2]]], max_new_tokens=2, do_sample=False)
    one = generate(d, [[1, 2, 3]], max_new_tokens=2, do_sample=False)
    assert len(one.sequences) == 1 and one.sequences[0][:3].tolist() == [1, 2, 3]


@pytest.mark.parametrize("flag", ["no", "yes", 0, 1, None, 0.0])
def test_flags_must_be_booleans(flag):
    d = model()
    with pytest.raises(ArgumentError, match="do_sample must be True or False"):
        generate(d, [[1]], max_new_tokens=1, do_sample=flag, rng=SplitMix64(0))
    with pytest.raises(ArgumentError, match="do_sample must be True or False"):
        next_tokens(np.zeros((1, 3)), SplitMix64(0), do_sample=flag)
    with pytest.raises(ArgumentError, match="cached must be True or False"):
        decoder_step_work(d, 3, cached=flag)


@pytest.mark.parametrize("position", [1.7, 1.0, np.float64(1.0), True, "1", [[1]]])
def test_positions_are_integers_never_rounded(position):
    d = model()
    c = KVCache(d, 1, 8)
    prefill(d, c, np.array([[1]]))
    with pytest.raises(TokenError, match="decode_step positions"):
        decode_step(d, c, [2], [position])
    assert c.filled_lengths().tolist() == [1]


@pytest.mark.parametrize("token", [1.7, 2.0, True, VOCAB, -1])
def test_decode_tokens_are_ids_in_the_vocabulary(token):
    d = model()
    c = KVCache(d, 1, 8)
    prefill(d, c, np.array([[1]]))
    with pytest.raises(TokenError):
        decode_step(d, c, [token], [1])


@pytest.mark.parametrize("pad_id", [VOCAB, VOCAB + 5, -1, 1.0, True, "0"])
def test_pad_id_is_a_token_of_the_vocabulary(pad_id):
    with pytest.raises(TokenError, match="pad_id"):
        generate(model(), [[1], [2, 3]], max_new_tokens=1, do_sample=False, pad_id=pad_id)
    with pytest.raises(TokenError, match="pad_id"):
        pad_prompts([[1], [2, 3]], VOCAB, pad_id=pad_id)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"temperature": "hot"}, "temperature"),
        ({"temperature": 0.0}, "temperature"),
        ({"top_k": 2.5}, "top_k"),
        ({"top_p": 2.0}, "top_p"),
        ({"rng": 3}, "SplitMix64"),
        ({"context": 2.0}, "context"),
    ],
)
def test_greedy_decoding_checks_the_options_it_does_not_read(options, match):
    with pytest.raises(ArgumentError, match=match):
        generate(model(), [[1]], max_new_tokens=1, do_sample=False, **options)
    if "context" not in options:
        with pytest.raises(ArgumentError, match=match):
            next_tokens(np.zeros((1, 3)), do_sample=False, **options)


def test_prefill_and_decode_step_check_model_cache_and_ids():
    d, other = model(), model(layers=2)
    c = KVCache(d, 1, 8)
    with pytest.raises(ArgumentError, match="needs a KVCache"):
        prefill(d, object(), np.array([[1]]))
    with pytest.raises(ArgumentError, match="1 blocks of width 8"):
        prefill(other, c, np.array([[1]]))
    with pytest.raises(ArgumentError, match=r"prefill needs an nn\.Decoder"):
        prefill(object(), c, np.array([[1]]))
    with pytest.raises(TokenError, match="B = 1"):
        prefill(d, c, np.array([[1], [2]]))
    with pytest.raises(TokenError, match="must be integers"):
        prefill(d, c, [[1.5]])
    with pytest.raises(TokenError, match="one per cache row"):
        decode_step(d, c, [1, 2], [0])


def test_multiply_adds_takes_a_list_not_a_tensor_it_would_iterate_row_by_row():
    x = Tensor(np.ones((3, 2)), requires_grad=True)
    y = x @ np.ones((2, 2))
    assert multiply_adds([y]) == 3 * 2 * 2
    with pytest.raises(ArgumentError, match=r"multiply_adds\(\[t\]\)"):
        multiply_adds(y)


@pytest.mark.parametrize(
    ("probs", "match"),
    [
        ([[0.5, 0.7]], "sum to 1"),
        ([[1.5, -0.5]], ">= 0"),
        ([[]], "V >= 1"),
        (0.5, "V >= 1"),
        ([[np.nan, 1.0]], "finite"),
    ],
)
def test_entropy_needs_distributions(probs, match):
    with pytest.raises(ArgumentError, match=match):
        entropy(probs)
    assert entropy([[0.5, 0.5]])[0] == pytest.approx(np.log(2.0), abs=1e-15)


def test_a_backward_through_a_cached_pass_is_refused_before_any_gradient():
    """The cache stores numbers: a gradient through it would miss the key and value paths."""
    d = model()
    c = KVCache(d, 1, 8)
    prefill(d, c, np.array([[1, 2]]))  # recorded: grad mode is on
    logits = decode_step(d, c, [3], [2])
    with pytest.raises(TapeError, match="cannot pass through a KV cache"):
        logits.sum().backward()
    assert all(p.grad is None for p in d.parameters())
    d(np.array([[1, 2, 3]])).sum().backward()  # the uncached pass trains as before
    assert all(p.grad is not None for p in d.parameters())
