"""Shapes, counts, cache bytes and FLOPs from configs, and the config fields the book refuses."""

from __future__ import annotations

import copy
import json
import math

import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.hub import (
    active_parameters,
    cache_bytes_per_token,
    count_parameters,
    flops_per_token,
    spec_from_config,
)

from .published import PUBLISHED


def _round(value: float, digits: int) -> float:
    """value to ``digits`` significant digits."""
    return float(f"{value:.{digits}g}")


@pytest.mark.parametrize("model", list(PUBLISHED))
def test_published_counts(model: str) -> None:
    entry = PUBLISHED[model]
    count = count_parameters(entry["config"])
    if entry["digits"] is None:
        assert count == entry["published"]
    else:
        assert _round(count, entry["digits"]) == entry["published"]


def test_published_exact_counts_by_hand() -> None:
    """Llama 3.1 8B written out: 2VD + L(2D² + 2D·G·d_h + 3DF + 2D) + D."""
    V, D, L, G, dh, F = 128256, 4096, 32, 8, 128, 14336
    by_hand = 2 * V * D + L * (2 * D * D + 2 * D * G * dh + 3 * D * F + 2 * D) + D
    assert count_parameters(PUBLISHED["Llama 3.1 8B"]["config"]) == by_hand


def test_mixtral_active_and_qwen_non_embedding() -> None:
    mixtral = PUBLISHED["Mixtral 8x7B"]
    assert _round(active_parameters(mixtral["config"]), 3) == mixtral["published_active"]
    qwen = PUBLISHED["Qwen3-0.6B"]
    spec = spec_from_config(qwen["config"])
    non_embedding = count_parameters(qwen["config"]) - spec.vocab_size * spec.model_width
    assert _round(non_embedding, 2) == qwen["published_non_embedding"]
    dense = PUBLISHED["Llama 3.1 8B"]["config"]
    assert active_parameters(dense) == count_parameters(dense)


def test_cache_bytes_per_token() -> None:
    """2·L·G·d_h bytes per number: Llama 3.1 8B in bf16 is 128 KiB, GPT-2 small in f64 288 KiB."""
    assert cache_bytes_per_token(PUBLISHED["Llama 3.1 8B"]["config"], 2) == 128 * 1024
    assert cache_bytes_per_token(PUBLISHED["GPT-2 small"]["config"]) == 2 * 12 * 768 * 8
    qwen = PUBLISHED["Qwen3-0.6B"]["config"]
    assert cache_bytes_per_token(qwen, 2) == 2 * 28 * 8 * 128 * 2


def test_flops_per_token_by_hand() -> None:
    """2·(matrix weights, head included) + 4·L·H·d_h·S, against the formula written out."""
    V, D, L, H, G, dh, F = 128256, 4096, 32, 32, 8, 128, 14336
    matrices = L * (2 * D * H * dh + 2 * D * G * dh + 3 * D * F) + V * D
    config = PUBLISHED["Llama 3.1 8B"]["config"]
    assert flops_per_token(config, 1000) == 2 * matrices + 4 * L * H * dh * 1000
    mistral = PUBLISHED["Mistral 7B"]["config"]  # the window caps the keys read at 4096
    assert flops_per_token(mistral, 10_000) == flops_per_token(mistral, 4096)
    assert flops_per_token(mistral, 10_000) > flops_per_token(mistral, 4095)
    gpt2 = PUBLISHED["GPT-2 small"]["config"]  # tied head still multiplies: V·D counted once
    D2, L2 = 768, 12
    assert flops_per_token(gpt2, 1) == 2 * (L2 * 12 * D2 * D2 + 50257 * D2) + 4 * L2 * D2


def test_counts_of_the_tiny_references(reference_models, family: str) -> None:
    """The declaration counts what torch stores, family by family."""
    model = reference_models[family]
    config = json.loads(model.config.to_json_string())
    assert count_parameters(config) == sum(p.numel() for p in model.parameters())


def _refused(config: dict, *needles: str) -> None:
    with pytest.raises(ArgumentError) as info:
        spec_from_config(config)
    for needle in needles:
        assert needle in str(info.value)


@pytest.mark.parametrize(
    ("model", "field", "value"),
    [
        ("GPT-2 small", "activation_function", "relu"),
        ("GPT-2 small", "scale_attn_by_inverse_layer_idx", True),
        ("GPT-2 small", "reorder_and_upcast_attn", True),
        ("Llama 3.1 8B", "hidden_act", "gelu"),
        ("Llama 3.1 8B", "pretraining_tp", 2),
        ("Llama 3.1 8B", "quantization_config", {"bits": 4}),
        ("Qwen3-0.6B", "use_sliding_window", True),
        ("Qwen3-0.6B", "layer_types", ["sliding_attention"] * 28),
        ("Mixtral 8x7B", "num_experts_per_tok", 9),
        ("Mistral 7B", "num_key_value_heads", 5),
        ("SmolLM2-135M", "rope_interleaved", True),
    ],
)
def test_refusals_name_field_and_value(model: str, field: str, value: object) -> None:
    config = copy.deepcopy(PUBLISHED[model]["config"])
    config[field] = value
    _refused(config, repr(field), repr(value))


def test_rope_scaling_refusals() -> None:
    config = copy.deepcopy(PUBLISHED["Llama 3.1 8B"]["config"])
    config["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0}
    _refused(config, "'rope_type'", "'yarn'", "llama3")
    config["rope_scaling"] = {**PUBLISHED["Llama 3.1 8B"]["config"]["rope_scaling"], "beta": 1.0}
    _refused(config, "beta")
    spec = spec_from_config(PUBLISHED["Llama 3.1 8B"]["config"])
    assert spec.rope_scaling["factor"] == 8.0
    assert math.isclose(spec.rope_theta, 500000.0)


def test_unknown_family_and_null_fields() -> None:
    _refused({"model_type": "bert"}, "'model_type'", "'bert'")
    config = copy.deepcopy(PUBLISHED["Mistral 7B"]["config"])
    config["some_future_field"] = None  # null means "not used": accepted
    assert spec_from_config(config).window == 4096
