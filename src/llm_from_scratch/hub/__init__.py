"""Hugging Face checkpoints (config.json + safetensors) as the book's Decoder, and back.

``load_pretrained(folder)`` reads GPT-2, Llama (2 and 3, with llama3 RoPE scaling), Mistral,
Qwen3 and Mixtral folders into :class:`~llm_from_scratch.nn.Decoder` in float64;
``save_pretrained(model, folder, family)`` writes a book model in a family's format. Counts,
cache bytes and FLOPs come from :func:`parameter_shapes`, which allocates nothing. Nothing here
imports torch or transformers.
"""

from .config import read_config, spec_from_config
from .loader import build_decoder, config_from_spec, load_pretrained, save_pretrained
from .mapping import TABLES
from .spec import (
    FAMILIES,
    ModelSpec,
    active_parameters,
    cache_bytes_per_token,
    count_parameters,
    float64_bytes,
    flops_per_token,
    parameter_shapes,
)

__all__ = [
    "FAMILIES",
    "TABLES",
    "ModelSpec",
    "active_parameters",
    "build_decoder",
    "cache_bytes_per_token",
    "config_from_spec",
    "count_parameters",
    "float64_bytes",
    "flops_per_token",
    "load_pretrained",
    "parameter_shapes",
    "read_config",
    "save_pretrained",
    "spec_from_config",
]
