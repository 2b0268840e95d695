"""Cache bytes per token for multi-head, grouped-query, multi-query and latent attention."""

import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.generation import (
    cache_bytes,
    cache_bytes_per_token,
    latent_cache_bytes_per_token,
)


def test_llama3_8b_in_bf16_is_128_kib_per_token():
    # config.json: num_hidden_layers 32, num_key_value_heads 8, hidden 4096 / 32 heads = 128
    assert cache_bytes_per_token(32, 8, 128, 2) == 131072 == 128 * 1024


def test_published_configs():
    assert cache_bytes_per_token(32, 32, 128, 2) == 524288  # Llama 2 7B: 512 KiB, MHA
    assert cache_bytes_per_token(32, 8, 128, 2) == 131072  # Mistral 7B: GQA 8
    assert cache_bytes_per_token(36, 8, 128, 2) == 147456  # Qwen3 8B: 36 layers, 8 KV heads
    assert cache_bytes_per_token(12, 12, 64, 4) == 73728  # GPT-2 small in float32
    assert cache_bytes_per_token(32, 1, 128, 2) == 16384  # multi-query: 1/32 of MHA


def test_default_is_float64_and_matches_cache_bytes_at_g_equal_h():
    # G = H, d_h = D / H: per token, one row, equals cache_bytes over one position
    for layers, heads, width in [(1, 1, 1), (3, 4, 12), (12, 12, 768)]:
        per_token = cache_bytes_per_token(layers, heads, width // heads)
        assert per_token == cache_bytes(layers, 1, width) == 2 * layers * width * 8


def test_latent_attention_deepseek_v2():
    # DeepSeek-V2: 60 layers, kv_lora_rank d_c = 512, qk_rope_head_dim 64, bf16
    assert latent_cache_bytes_per_token(60, 512, 64, 2) == 60 * 576 * 2 == 69120
    assert latent_cache_bytes_per_token(1, 3, 0) == 24  # no RoPE part: d_c float64 numbers


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, None, "8"])
def test_refusals(bad):
    for call in (
        lambda: cache_bytes_per_token(bad, 1, 1),
        lambda: cache_bytes_per_token(1, bad, 1),
        lambda: cache_bytes_per_token(1, 1, bad),
        lambda: cache_bytes_per_token(1, 1, 1, bad),
        lambda: latent_cache_bytes_per_token(bad, 1, 1),
        lambda: latent_cache_bytes_per_token(1, bad, 1),
        lambda: latent_cache_bytes_per_token(1, 1, 1, bad),
    ):
        with pytest.raises(ArgumentError):
            call()
    if bad != 0:
        with pytest.raises(ArgumentError):
            latent_cache_bytes_per_token(1, 1, bad)
