"""The numbers behind the current-attention chapter's figures, and smoke tests on Agg."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.current_attention import (
    ablation_curves,
    ablation_figure,
    grouping_figure,
    kv_head_reads,
    logit_growth,
    qk_norm_figure,
    window_figure,
    window_reach,
)
from llm_from_scratch.figures.style import MIN_TEXT_PX
from llm_from_scratch.nn import MultiHeadAttention
from llm_from_scratch.random import SplitMix64


@pytest.mark.parametrize(("heads", "kv_heads"), [(8, 2), (6, 3), (4, 4), (4, 1)])
def test_each_query_head_reads_exactly_the_head_of_its_consecutive_group(heads, kv_heads):
    layer = MultiHeadAttention(
        2 * heads, heads, num_kv_heads=kv_heads, causal=True, rng=SplitMix64(heads)
    )
    reads = kv_head_reads(layer)
    group = heads // kv_heads
    truth = np.zeros((heads, kv_heads), dtype=bool)  # written from GQA's rule g = ⌊h / (H/G)⌋
    for h in range(heads):
        truth[h, h // group] = True
    assert reads.shape == (heads, kv_heads)
    assert np.array_equal(reads, truth)


@pytest.mark.parametrize(("window", "depth", "tokens"), [(3, 4, 16), (2, 3, 9), (4, 5, 12)])
def test_reach_grows_by_w_minus_one_per_layer_until_the_start(window, depth, tokens):
    rng = SplitMix64(window)
    layers = [
        MultiHeadAttention(8, 2, causal=True, window=window, name=f"a{i}", rng=rng)
        for i in range(depth)
    ]
    reach = window_reach(layers, tokens)
    for n in range(1, depth + 1):
        first = max(0, tokens - 1 - n * (window - 1))  # the oldest position n layers can reach
        want = np.zeros(tokens, dtype=bool)
        want[first:] = True
        assert np.array_equal(reach.depends[n - 1], want), n
    assert reach.reach.tolist() == [min(n * (window - 1) + 1, tokens) for n in range(1, depth + 1)]
    i, j = np.indices((tokens, tokens))
    assert np.array_equal(reach.mask, (j <= i) & (j > i - window))  # Mistral: itself + w − 1


def test_qk_norm_bounds_the_largest_logit_while_the_plain_one_grows_with_the_square():
    plain = MultiHeadAttention(16, 2, rng=SplitMix64(2))
    normed = MultiHeadAttention(16, 2, qk_norm=True, rng=SplitMix64(2))
    x = SplitMix64(3).normal((1, 6, 16))
    growth = logit_growth(plain, normed, [1.0, 10.0, 100.0], x)
    assert growth.bound == pytest.approx(math.sqrt(8))  # √d_h with unit gains
    assert np.all(growth.normed <= growth.bound)
    assert growth.plain[1] == pytest.approx(100 * growth.plain[0], rel=1e-12)  # s² scaling
    assert growth.plain[2] == pytest.approx(1e4 * growth.plain[0], rel=1e-12)
    # the largest plain logit written out from the weights: max |x W_Q,h · x W_K,h| / √d_h
    q, k = x[0] @ plain.query.weight.value, x[0] @ plain.key.weight.value  # (T, D)
    truth = max(
        np.abs(q[:, h * 8 : (h + 1) * 8] @ k[:, h * 8 : (h + 1) * 8].T).max() / math.sqrt(8)
        for h in range(2)
    )
    assert growth.plain[0] == pytest.approx(truth, rel=1e-12)


def test_ablation_curves_read_the_logged_evaluations():
    logs = {
        "G = 4": {
            "evals": [
                {"step": 0, "validation_bits_per_char": 7.0},
                {"step": 10, "validation_bits_per_char": 3.0},
            ]
        },
        "G = 1": {
            "evals": [
                {"step": 0, "validation_bits_per_char": 7.0},
                {"step": 10, "validation_bits_per_char": 3.5},
            ]
        },
    }
    curves = ablation_curves(logs)
    assert curves.labels == ("G = 4", "G = 1")
    assert curves.final.tolist() == [3.0, 3.5]
    assert curves.steps[0].tolist() == [0, 10]


def test_figures_draw_and_stay_legible():
    layer = MultiHeadAttention(16, 8, num_kv_heads=2, rng=SplitMix64(0))
    rng = SplitMix64(1)
    layers = [
        MultiHeadAttention(8, 2, causal=True, window=3, name=f"a{i}", rng=rng) for i in range(3)
    ]
    growth = logit_growth(
        MultiHeadAttention(8, 2, rng=SplitMix64(2)),
        MultiHeadAttention(8, 2, qk_norm=True, rng=SplitMix64(2)),
        [1.0, 10.0],
        SplitMix64(3).normal((1, 4, 8)),
    )
    curves = ablation_curves(
        {
            "a": {
                "evals": [
                    {"step": 0, "validation_bits_per_char": 5.0},
                    {"step": 5, "validation_bits_per_char": 4.0},
                ]
            }
        }
    )
    for fig in (
        grouping_figure(kv_head_reads(layer)),
        window_figure(window_reach(layers, 10)),
        qk_norm_figure(growth),
        ablation_figure(curves, baseline=4.5),
    ):
        fig.render_png()
        assert fig.legibility.displayed_text_px() >= MIN_TEXT_PX


def test_bad_inputs_are_refused():
    layer = MultiHeadAttention(8, 2, rng=SplitMix64(0))
    with pytest.raises(ArgumentError):
        kv_head_reads("not a layer")
    with pytest.raises(ArgumentError):
        kv_head_reads(layer, tokens=1)
    with pytest.raises(ShapeError):
        grouping_figure(np.zeros(3, dtype=bool))
    with pytest.raises(ArgumentError):
        window_reach([layer], 4)  # no window
    with pytest.raises(ArgumentError):
        window_reach([], 4)
    with pytest.raises(ArgumentError):
        logit_growth(layer, layer, [1.0], np.zeros((1, 2, 8)))  # the second has no QK-norm
    normed = MultiHeadAttention(8, 2, qk_norm=True, rng=SplitMix64(0))
    with pytest.raises(ArgumentError):
        logit_growth(layer, normed, [0.0], np.zeros((1, 2, 8)))
    with pytest.raises(ArgumentError):
        ablation_curves({})
    with pytest.raises(ArgumentError):
        ablation_curves({"a": {"evals": []}})
