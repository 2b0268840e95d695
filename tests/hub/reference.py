"""Seeded tiny reference models built by transformers offline (float64, eager attention).

Each family gets the feature that sets it apart: grouped-query attention (G = 2 of H = 4) for
Llama, Mistral, Qwen3 and Mixtral, a sliding window of 4 for Mistral (shorter than the prompts
and the 32 generated tokens, so it matters), head_dim 16 ≠ D/H = 8 with QK-norm for Qwen3, and
4 experts, top-2 for Mixtral. D = 32, 2 layers, V = 64: each folder holds about 0.2–0.5 MB.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

VOCAB = 64
WIDTH = 32
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HIDDEN = 48
BOS, EOS = 1, 2
FAMILIES = ("gpt2", "llama", "mistral", "qwen3", "mixtral")


def quiet() -> None:
    """No progress bars or advisory logging from transformers in test output."""
    import transformers as hf

    hf.utils.logging.disable_progress_bar()
    hf.utils.logging.set_verbosity_error()


def reference_config(family: str) -> Any:
    """The transformers config of one tiny family (eager attention, float64-ready)."""
    import transformers as hf

    quiet()
    common = dict(
        vocab_size=VOCAB,
        hidden_size=WIDTH,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        intermediate_size=HIDDEN,
        max_position_embeddings=128,
        bos_token_id=BOS,
        eos_token_id=EOS,
    )
    if family == "gpt2":
        config = hf.GPT2Config(
            vocab_size=VOCAB,
            n_embd=WIDTH,
            n_layer=LAYERS,
            n_head=HEADS,
            n_positions=128,
            bos_token_id=BOS,
            eos_token_id=EOS,
        )
    elif family == "llama":  # Llama 3 style: separate head, llama3 RoPE scaling
        rope = {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 16,
        }
        config = hf.LlamaConfig(**common, tie_word_embeddings=False, rope_parameters=rope)
    elif family == "mistral":
        config = hf.MistralConfig(**common, sliding_window=4, tie_word_embeddings=False)
    elif family == "qwen3":
        config = hf.Qwen3Config(**common, head_dim=16, tie_word_embeddings=True)
    elif family == "mixtral":
        config = hf.MixtralConfig(
            **common, num_local_experts=4, num_experts_per_tok=2, tie_word_embeddings=False
        )
        config._experts_implementation = "eager"  # the grouped kernel refuses float64
    else:
        raise KeyError(family)
    config._attn_implementation = "eager"
    return config


def build_reference(family: str, seed: int = 0) -> Any:
    """A seeded random transformers model of ``family`` in float64, in eval mode."""
    import torch
    import transformers as hf

    classes = {
        "gpt2": hf.GPT2LMHeadModel,
        "llama": hf.LlamaForCausalLM,
        "mistral": hf.MistralForCausalLM,
        "qwen3": hf.Qwen3ForCausalLM,
        "mixtral": hf.MixtralForCausalLM,
    }
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = classes[family](reference_config(family)).double().eval()
        with torch.no_grad():  # random norm gains and biases, so none of them is a silent 1 or 0
            for p in model.parameters():
                if p.ndim == 1:
                    p.add_(0.1 * torch.randn_like(p))
    return model


def save_reference(model: Any, folder: Path) -> Path:
    """save_pretrained into ``folder`` (config.json, generation_config.json, model.safetensors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.save_pretrained(folder)
    return folder


def load_reference(folder: Path, family: str) -> Any:
    """transformers' own loading of a folder, float64, eager attention, eval mode."""
    import torch
    import transformers as hf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs: dict[str, Any] = {"dtype": torch.float64, "attn_implementation": "eager"}
        if family == "mixtral":
            kwargs["experts_implementation"] = "eager"
        model = hf.AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    return model.eval()
