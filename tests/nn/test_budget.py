"""Parameter budgets: seed fact T7 and the counts against real modules."""

from __future__ import annotations

import pytest

from llm_from_scratch.errors import ArgumentError, WidthError
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


def test_llama3_8b_closed_form() -> None:
    """Llama 3 8B config: D 4096, 32 layers, H 32, G 8, D_ff 14336, V 128256, untied, RMSNorm.

    Published total 8,030,261,248 = the 32 blocks and two tables + the final norm's 4096 gains.
    """
    b = parameter_budget(
        4096, num_layers=32, vocab_size=128256, tie_embeddings=False, ffn_kind="gated",
        ffn_hidden_width=14336, norm="rmsnorm", num_heads=32, num_kv_heads=8,
    )  # fmt: skip
    assert b.attention_per_block == 2 * 4096 * 4096 + 2 * 4096 * 8 * 128 == 41_943_040
    assert b.ffn_per_block == 3 * 4096 * 14336
    assert b.total + 4096 == 8_030_261_248


def test_gpt2_small_with_biases_and_learned_positions() -> None:
    """GPT-2 small: 124,439,808 = budget + the final LayerNorm's 2·768 (wte tied, wpe 1024)."""
    b = parameter_budget(768, vocab_size=50257, biases=True, norm="layernorm", max_positions=1024)
    assert b.position_table == 1024 * 768 and ("position table", 786_432) in b.rows()
    assert b.total + 2 * 768 == 124_439_808


@pytest.mark.parametrize(
    "options",
    [
        {"num_kv_heads": 2},
        {"num_kv_heads": 1, "attention_bias": True},
        {"num_kv_heads": 2, "head_width": 6, "qk_norm": True},
        {"attention_bias": True, "ffn_bias": False},
    ],
)
def test_grouped_attention_counts_match_the_module(options) -> None:
    from llm_from_scratch.nn import TransformerBlock

    block = TransformerBlock(8, 4, 12, norm="rms", rng=SplitMix64(3), **options)
    b = parameter_budget(
        8, num_layers=1, ffn_hidden_width=12, norm="rmsnorm", num_heads=4,
        biases=True, **{"ffn_bias": True, "attention_bias": False} | options,
    )  # fmt: skip
    assert b.attention_per_block == block.attention.parameter_count
    assert b.ffn_per_block == block.ffn.parameter_count
    assert b.per_block == block.parameter_count


def test_mixture_of_experts_count() -> None:
    b = parameter_budget(4096, num_layers=1, ffn_kind="gated", ffn_hidden_width=14336,
                         num_experts=8)  # fmt: skip
    assert b.ffn_per_block == 8 * 3 * 4096 * 14336 + 4096 * 8  # Mixtral 8x7B per layer


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"num_kv_heads": 2}, "need num_heads"),
        ({"num_heads": 4, "num_kv_heads": 3}, "must divide"),
        ({"num_heads": 3}, "divisible"),
        ({"num_experts": 4}, "ffn_kind='gated'"),
        ({"max_positions": 0}, "max_positions"),
        ({"qk_norm": 1, "num_heads": 2}, "qk_norm"),
    ],
)
def test_new_options_refused(options, match) -> None:
    with pytest.raises((ArgumentError, WidthError), match=match):
        parameter_budget(8, **options)
