"""Embedding and decoder: T20, T21 shapes, tying, padding, greedy step, gradients."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.autodiff import gradcheck_parameters
from llm_from_scratch.errors import TokenError
from llm_from_scratch.nn import Decoder, Embedding
from llm_from_scratch.random import SplitMix64

IDS = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])


def decoder(**kwargs):
    return Decoder(10, 8, 2, 2, 16, rng=SplitMix64(21), **kwargs)


def test_one_greedy_step_traces_every_stage_shape_and_appends_argmax():
    """Seed fact T21: one decoding step's stage shapes, token IDs [2, 4] to extended IDs [2, 5]."""
    model = decoder()
    trace = model.trace_step(IDS)
    assert dict(trace.stages) == {
        "token IDs": (2, 4),
        "embeddings": (2, 4, 8),
        "block 0": (2, 4, 8),
        "block 1": (2, 4, 8),
        "final norm": (2, 4, 8),
        "logits": (2, 4, 10),
        "last valid position": (2, 10),
        "next IDs": (2,),
        "extended IDs": (2, 5),
    }
    extended = model.greedy_step(IDS)
    assert extended.shape == (2, 5) and np.array_equal(extended[:, :4], IDS)
    assert np.array_equal(extended[:, 4], np.argmax(model.next_token_logits(IDS).value, -1))


def test_head_is_x_final_times_vocab_table_transposed_without_bias():
    """Seed fact T20: logits = X_final Eᵀ with the tied table and no head bias; untied adds V·D."""
    model = decoder()
    assert model.vocab_weight is model.embedding.weight
    logits = model(IDS).value
    np.testing.assert_allclose(
        logits, model.hidden_states(IDS).value @ model.embedding.weight.value.T, rtol=1e-14
    )
    names = [n for n, _ in model.named_parameters()]
    assert names[0] == "decoder.embedding.weight" and not any("head" in n for n in names)
    untied = decoder(tie_embeddings=False)
    assert untied.vocab_weight is not untied.embedding.weight
    assert untied.parameter_count == model.parameter_count + 10 * 8


def test_tied_table_gets_gradient_in_rows_the_input_never_selected():
    model = decoder()
    ids = np.array([[1, 2, 3]])
    model(ids).sum().backward()
    grad = model.embedding.weight.grad
    assert np.all(np.abs(grad[[0, 4, 9]]).sum(axis=1) > 0)  # rows 0, 4, 9 were never looked up
    untied = decoder(tie_embeddings=False)
    untied(ids).sum().backward()
    assert np.all(untied.embedding.weight.grad[[0, 4, 9]] == 0.0)


def test_padded_prompts_use_their_last_valid_position():
    model = decoder()
    ids = np.array([[1, 2, 3, 4], [5, 6, 0, 0]])
    lengths = np.array([4, 2])
    padded = model.next_token_logits(ids, lengths).value
    alone = model.next_token_logits(ids[1:, :2]).value
    np.testing.assert_allclose(padded[1], alone[0], rtol=1e-12, atol=1e-12)
    full = model.next_token_logits(ids[:1]).value
    np.testing.assert_allclose(padded[0], full[0], rtol=1e-12, atol=1e-12)
    extended = model.greedy_step(ids, lengths, pad_id=0)
    assert extended[1, :2].tolist() == [5, 6] and extended[1, 3:].tolist() == [0, 0]
    assert extended[1, 2] == np.argmax(alone[0])


def test_embedding_gathers_rows_and_scatters_gradients():
    table = np.arange(12.0).reshape(4, 3)
    embedding = Embedding.from_parameters(table)
    ids = np.array([[1, 1, 3]])
    out = embedding(ids)
    np.testing.assert_array_equal(out.value[0], table[[1, 1, 3]])
    out.backward(np.ones((1, 3, 3)))
    np.testing.assert_array_equal(embedding.weight.grad[:, 0], [0.0, 2.0, 0.0, 1.0])


@pytest.mark.parametrize("positions", ["rope", "alibi", "sinusoidal", None])
def test_decoder_parameter_gradients(positions):
    model = Decoder(5, 4, 1, 2, 6, positions=positions, rng=SplitMix64(3))
    seed = SplitMix64(4).uniform(-1, 1, (1, 3, 5))
    ids = np.array([[0, 3, 1]])
    params = [model.embedding.weight, model.blocks[0].attention.query.weight]
    result = gradcheck_parameters(lambda: (model(ids) * seed).sum(), params)
    assert result.passed, result.message


def test_bad_ids_and_lengths_are_typed():
    model = decoder()
    with pytest.raises(TokenError, match=r"in \[0, 10\)"):
        model(np.array([[1, 10]]))
    with pytest.raises(TokenError, match="integers"):
        model(np.array([[1.0, 2.0]]))
    with pytest.raises(TokenError, match=r"\[B, T\]"):
        model(np.array([1, 2]))
    with pytest.raises(TokenError, match=r"in \[1, 4\]"):
        model.greedy_step(IDS, lengths=np.array([0, 4]))


def test_failed_decoder_construction_leaves_the_generator_unadvanced():
    rng = SplitMix64(5)
    with pytest.raises(ValueError, match="divisible"):
        Decoder(10, 8, 2, 3, 16, rng=rng)
    assert rng.state == SplitMix64(5).state


def test_embedding_std_draws_the_table_from_a_scaled_normal_and_the_default_stays_xavier():
    from llm_from_scratch.random import xavier_uniform

    scaled = Decoder(10, 8, 2, 2, 16, embedding_std=0.02, rng=SplitMix64(21))
    np.testing.assert_array_equal(
        scaled.embedding.weight.value, 0.02 * SplitMix64(21).normal((10, 8))
    )
    np.testing.assert_array_equal(
        decoder().embedding.weight.value, xavier_uniform(10, 8, SplitMix64(21))
    )
    untied = Decoder(10, 8, 2, 2, 16, tie_embeddings=False, embedding_std=0.5, rng=SplitMix64(3))
    assert abs(float(untied.head_weight.value.std()) - 0.5) < 0.15  # 80 draws of N(0, 0.25)


def test_a_small_embedding_std_starts_the_tied_logits_near_uniform():
    # Unit-RMS final vectors times rows of std σ: logit variance ≈ D σ², loss ≈ ln V + D σ² / 2.
    from llm_from_scratch.training import cross_entropy

    model = Decoder(16, 32, 2, 2, 64, embedding_std=0.02, rng=SplitMix64(8))
    ids = SplitMix64(9).u64_array(4 * 12).reshape(4, 12) % np.uint64(16)
    logits = model(ids.astype(np.int64))
    loss = cross_entropy(logits[:, :-1], ids[:, 1:].astype(np.int64)).item()
    assert abs(loss - np.log(16)) < 0.05
    assert float(logits.value.var(axis=-1).mean()) < 4 * 32 * 0.02**2


@pytest.mark.parametrize("bad", [0.0, -0.1, float("nan"), float("inf"), "0.02", True])
def test_a_bad_embedding_std_is_refused_before_anything_is_drawn(bad):
    from llm_from_scratch.errors import ArgumentError

    rng = SplitMix64(5)
    with pytest.raises(ArgumentError, match="embedding_std"):
        Decoder(10, 8, 2, 2, 16, embedding_std=bad, rng=rng)
    assert rng.state == SplitMix64(5).state
