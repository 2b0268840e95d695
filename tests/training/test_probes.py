"""Attention maps read from the forward pass, and the induction score on hand-built weights."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch.errors import ShapeError
from llm_from_scratch.nn.decoder import Decoder
from llm_from_scratch.random import SplitMix64
from llm_from_scratch.training import IGNORE_INDEX, induction_batch
from llm_from_scratch.training.probes import attention_maps, induction_scores


def test_maps_are_causal_distributions_of_the_real_forward_pass() -> None:
    model = Decoder(9, 8, 2, 2, 16, rng=SplitMix64(3))
    ids = np.array([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])
    maps = attention_maps(model, ids)
    assert [m.shape for m in maps] == [(2, 2, 5, 5)] * 2
    for m in maps:
        np.testing.assert_allclose(m.sum(axis=-1), 1.0, rtol=1e-12)
        assert np.all(np.triu(m, k=1) == 0.0)  # no weight on later positions
    _, first = model.blocks[0](model.embedding(ids), average_weights=False)
    np.testing.assert_array_equal(maps[0], first.value)


def test_induction_score_of_a_perfect_and_a_uniform_head() -> None:
    _, targets = induction_batch(3, 16, 20, SplitMix64(1), half_lengths=(3, 8))
    batch, tokens = targets.shape
    perfect = np.zeros((batch, 2, tokens, tokens))
    perfect[:, 1] = np.tril(np.ones((tokens, tokens))) / np.arange(1, tokens + 1)[:, None]
    for b in range(batch):
        length = int(np.flatnonzero(targets[b] != IGNORE_INDEX)[0])
        for t in range(tokens):
            perfect[b, 0, t, max(t - length + 1, 0)] = 1.0
    scores = induction_scores(perfect, targets)
    assert scores[0] == pytest.approx(1.0, rel=1e-15)
    # Uniform causal attention gives 1/(t + 1) at query t, averaged over the counted queries.
    counted = [
        (b, t) for b in range(batch) for t in range(tokens) if targets[b, t] != IGNORE_INDEX
    ]
    assert scores[1] == pytest.approx(np.mean([1 / (t + 1) for _, t in counted]), rel=1e-12)
    with pytest.raises(ShapeError):
        induction_scores(perfect[:, :, :-1], targets)
