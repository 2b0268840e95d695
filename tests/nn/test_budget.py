"""Parameter budgets: seed fact T7 and the counts against real modules."""

from __future__ import annotations

import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.nn import (
    GLU,
    FeedForward,
    LayerNorm,
    ParameterBudget,
    RMSNorm,
    SwiGLU,
    matched_gated_hidden_width,
    parameter_budget,
)
from llm_from_scratch.nn.budget import dense_hidden_width
from llm_from_scratch.random import SplitMix64


def test_gpt2_small_width_768_gives_12_d_squared_per_block_and_84_9m() -> None:
    """Seed fact T7: D = 768: hidden 3072, 12·D² = 7,077,888 per block, 84.9M for 12."""
    b = parameter_budget(768)
    assert isinstance(b, ParameterBudget)
    assert b.ffn_hidden_width == 3072
    assert b.ffn_per_block == 8 * 768**2
    assert b.attention_per_block == 4 * 768**2
    assert b.per_block == 12 * 768**2 == 7_077_888
    assert b.stack == 12 * 7_077_888
    assert round(b.stack / 1e6, 1) == 84.9
    assert b.embedding == 0 and b.head == 0 and b.total == b.stack


def test_vocabulary_tables_tied_and_untied() -> None:
    tied = parameter_budget(8, num_layers=2, vocab_size=10)
    assert tied.embedding == 80 and tied.head == 0
    untied = parameter_budget(8, num_layers=2, vocab_size=10, tie_embeddings=False)
    assert untied.head == 80
    assert untied.total == 2 * 12 * 64 + 160
    labels = [label for label, _ in untied.rows()]
    assert labels == [
        "attention per block",
        "FFN per block",
        "one block",
        "2 blocks",
        "token embedding",
        "output head",
        "total",
    ]
    assert tied.rows()[-2] == ("output head (tied)", 0)


def test_dense_ffn_count_matches_module() -> None:
    for biases in (False, True):
        b = parameter_budget(6, num_layers=1, biases=biases)
        ffn = FeedForward(6, 24, bias=biases, rng=SplitMix64(1))
        assert b.ffn_per_block == ffn.parameter_count


def test_gated_ffn_count_matches_module_and_dense_budget() -> None:
    assert matched_gated_hidden_width(768) == 2048  # 3·768·2048 = 8·768²
    b = parameter_budget(768, ffn_kind="gated")
    assert b.ffn_hidden_width == 2048 and b.ffn_per_block == 8 * 768**2
    small = parameter_budget(6, num_layers=1, ffn_kind="gated")
    assert small.ffn_hidden_width == 16
    for cls in (SwiGLU, GLU):
        assert cls(6, 16, 6, rng=SplitMix64(2)).parameter_count == small.ffn_per_block
    assert matched_gated_hidden_width(512) == 1365  # 8·512/3 = 1365.33…
    assert matched_gated_hidden_width(3, ffn_multiplier=4) == 8
    assert matched_gated_hidden_width(3, ffn_multiplier=0.75) == 2  # 1.5 rounds up


def test_norm_counts_match_modules() -> None:
    ln = parameter_budget(5, num_layers=1, norm="layernorm")
    assert ln.norms_per_block == 2 * LayerNorm(5).parameter_count
    rms = parameter_budget(5, num_layers=1, norm="rmsnorm")
    assert rms.norms_per_block == 2 * RMSNorm(5).parameter_count
    assert ("norms per block", 20) in ln.rows()


def test_biases_added_per_projection() -> None:
    b = parameter_budget(4, num_layers=1, biases=True)
    assert b.attention_per_block == 4 * 16 + 4 * 4
    assert b.ffn_per_block == 2 * 4 * 16 + 16 + 4
    g = parameter_budget(3, num_layers=1, biases=True, ffn_kind="gated")
    assert g.ffn_per_block == 3 * 3 * 8 + 2 * 8 + 3


def test_explicit_hidden_width_and_multiplier() -> None:
    assert parameter_budget(4, ffn_hidden_width=10, num_layers=1).ffn_per_block == 80
    assert parameter_budget(4, 2.5, num_layers=1).ffn_hidden_width == 10
    assert dense_hidden_width(6, 8 / 3) == 16
    with pytest.raises(ArgumentError, match="must be a whole number of features"):
        dense_hidden_width(8, 8 / 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model_width": 0}, "model_width must be at least 1; got 0."),
        ({"model_width": 4, "num_layers": 0}, "num_layers must be at least 1; got 0."),
        ({"model_width": 4, "vocab_size": -1}, "vocab_size must be at least 1; got -1."),
        ({"model_width": 4, "ffn_kind": "moe"}, "ffn_kind must be 'dense' or 'gated'; got 'moe'."),
        (
            {"model_width": 4, "norm": "batchnorm"},
            "norm must be None, 'layernorm' or 'rmsnorm'; got 'batchnorm'.",
        ),
        ({"model_width": 4, "ffn_multiplier": -1}, "ffn_multiplier must be a positive number"),
        (
            {"model_width": 3, "ffn_multiplier": 1.5},
            "ffn_multiplier × model_width must be a whole number of features; got 1.5 × 3 = 4.5.",
        ),
        ({"model_width": 4, "biases": 1}, "biases must be True or False; got 1."),
    ],
)
def test_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        parameter_budget(**kwargs)
    assert str(info.value).startswith(message)
