"""Seeded tiny reference models built by transformers offline (float64, eager attention).

Each family gets the feature that sets it apart: grouped-query attention (G = 2 of H = 4) for
Llama, Mistral, Qwen3 and Mixtral, a sliding window of 4 for Mistral (shorter than the prompts
and the 32 generated tokens, so it matters), head_dim 16 ≠ D/H = 8 with QK-norm for Qwen3, and
4 experts, top-2 for Mixtral. D = 32, 2 layers, V = 64: each folder holds about 0.2–0.5 MB.
"""

from __future__ import annotations

import types
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


def _float64_softmax() -> None:
    """torch's softmax keeps float64 when eager attention asks a float64 input for float32."""
    import torch

    functional = torch.nn.functional
    if getattr(functional.softmax, "keeps_float64", False):
        return
    single = functional.softmax

    def softmax(input: Any, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Any:
        if dtype == torch.float32 and input.dtype == torch.float64:
            dtype = None
        return single(input, dim=dim, _stacklevel=_stacklevel, dtype=dtype)

    softmax.keeps_float64 = True
    functional.softmax = softmax


def _rms_forward(self: Any, hidden_states: Any) -> Any:
    """transformers' RMSNorm without its float32 cast: w · x / √(mean(x²) + ε)."""
    import torch

    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


def _router_forward(self: Any, hidden_states: Any) -> Any:
    """Mixtral's router without its ``.float()``: softmax, top-k, renormalised over the k."""
    import torch

    hidden_states = hidden_states.reshape(-1, self.hidden_dim)
    router_logits = torch.nn.functional.linear(hidden_states, self.weight)  # (N, E)
    router_probs = torch.nn.functional.softmax(router_logits, dim=-1)
    top_value, top_index = torch.topk(router_probs, self.top_k, dim=-1)  # (N, k)
    top_value = top_value / top_value.sum(dim=-1, keepdim=True)
    return router_logits, top_value, top_index


def float64_islands(model: Any) -> Any:
    """The reference computed in float64 throughout (transformers keeps four float32 islands).

    In a float64 model transformers still computes, by design, RMSNorm (``.to(torch.float32)``),
    the eager attention softmax (``dtype=torch.float32``), Mixtral's router softmax
    (``.float()``) and the RoPE angles in float32, which puts about 1e-7 relative error in the
    logits. Each is replaced here by the same formula in float64; ``test_as_shipped`` checks the
    unmodified reference agrees with the book to float32 rounding.
    """
    _float64_softmax()
    for module in model.modules():
        kind = type(module).__name__
        if kind.endswith("RMSNorm"):
            module.forward = types.MethodType(_rms_forward, module)
        elif kind == "MixtralTopKRouter":
            module.forward = types.MethodType(_router_forward, module)
    return float64_rope(model)


def float64_rope(model: Any) -> Any:
    """RoPE angles in float64: transformers computes them in float32 even in a float64 model.

    Its rotary embedding multiplies ``inv_freq`` (built with ``dtype=torch.float``) by the
    positions in float32 ("Force float32"), so its float64 logits carry float32 angle errors,
    about 1e-7 relative. Here its own init function runs with ``torch.float`` standing for
    float64 (the same formula, llama3 scaling included; checked equal to its float32 result to
    float32 rounding) and the four lines of its forward run in float64.
    """
    import torch
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rotary = getattr(getattr(model, "model", None), "rotary_emb", None)
    if rotary is None:  # GPT-2: learned positions
        return model
    init = (
        rotary.compute_default_rope_parameters
        if rotary.rope_type == "default"
        else ROPE_INIT_FUNCTIONS[rotary.rope_type]
    )
    single = torch.float
    torch.float = torch.float64
    try:
        inv_freq, scaling = init(rotary.config)
    finally:
        torch.float = single
    assert inv_freq.dtype == torch.float64
    assert torch.allclose(inv_freq.float(), rotary.original_inv_freq.float(), rtol=2e-7, atol=0)

    def forward(self: Any, x: Any, position_ids: Any) -> tuple[Any, Any]:
        freqs = position_ids[..., None].double() * inv_freq  # (B, T, d_h/2)
        emb = torch.cat((freqs, freqs), dim=-1)  # (B, T, d_h): pairs (j, j + d_h/2)
        return (emb.cos() * scaling).to(x.dtype), (emb.sin() * scaling).to(x.dtype)

    rotary.forward = types.MethodType(forward, rotary)
    return model


def save_reference(model: Any, folder: Path) -> Path:
    """save_pretrained into ``folder`` (config.json, generation_config.json, model.safetensors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.save_pretrained(folder)
    return folder


def load_reference(folder: Path, family: str, *, as_shipped: bool = False) -> Any:
    """transformers' own loading of a folder, float64, eager attention, eval mode."""
    import torch
    import transformers as hf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs: dict[str, Any] = {"dtype": torch.float64, "attn_implementation": "eager"}
        if family == "mixtral":
            kwargs["experts_implementation"] = "eager"
        model = hf.AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    return model.eval() if as_shipped else float64_islands(model.eval())
