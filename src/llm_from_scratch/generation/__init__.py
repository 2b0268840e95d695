"""Generating text: sampling rules and a repetition penalty on logits, the key/value cache, the
generation loop."""

from .cache import (
    KVCache,
    LayerCache,
    cache_bytes,
    cache_bytes_per_token,
    latent_cache_bytes_per_token,
)
from .loop import Generation, decode_step, generate, pad_prompts, prefill
from .penalties import repetition_penalty
from .sampling import (
    entropy,
    greedy,
    next_tokens,
    probabilities,
    sample,
    temperature_scale,
    top_k_filter,
    top_p_filter,
)
from .work import decoder_step_work, multiply_adds

__all__ = [
    "Generation",
    "KVCache",
    "LayerCache",
    "cache_bytes",
    "cache_bytes_per_token",
    "decode_step",
    "decoder_step_work",
    "entropy",
    "generate",
    "greedy",
    "latent_cache_bytes_per_token",
    "multiply_adds",
    "next_tokens",
    "pad_prompts",
    "prefill",
    "probabilities",
    "repetition_penalty",
    "sample",
    "temperature_scale",
    "top_k_filter",
    "top_p_filter",
]
