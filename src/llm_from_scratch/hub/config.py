"""config.json → :class:`ModelSpec`, field by field, with every field the book lacks refused.

Each family keeps an explicit table of the fields it understands. A field is either

- *read* into the spec (widths, counts, ε, RoPE θ and scaling, window, biases, tying);
- *required* to hold the one value the book implements (``hidden_act: "silu"``,
  ``pretraining_tp: 1``, GPT-2's ``scale_attn_weights: true``, …);
- *inert*: it does not change the forward pass the book computes (dropout rates and auxiliary
  losses act only in training, token IDs and initialisation ranges only before or after it).

Any other field is refused with its name and value unless it is null, so a config that asks for
something the book does not build is never loaded as something else.
"""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path
from typing import Any

from ..errors import ArgumentError
from .spec import FAMILIES, ModelSpec

#: Fields any family may carry that do not change the forward pass (metadata, token IDs,
#: generation defaults, training-only regularisation).
INERT = frozenset(
    {
        "architectures",
        "model_type",
        "transformers_version",
        "dtype",
        "torch_dtype",
        "_name_or_path",
        "initializer_range",
        "use_cache",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "return_dict",
        "output_attentions",
        "output_hidden_states",
        "tokenizer_class",
        "task_specific_params",
        "id2label",
        "label2id",
        "is_llama_config",  # SmolLM2's note that it is a Llama config
        "max_position_embeddings",  # RoPE families: a training length, not a table size
    }
)

#: Per family: fields with the only value the book implements.
REQUIRED: dict[str, dict[str, Any]] = {
    "gpt2": {
        "activation_function": "gelu_new",
        "scale_attn_weights": True,
        "scale_attn_by_inverse_layer_idx": False,
        "reorder_and_upcast_attn": False,
        "add_cross_attention": False,
        "tie_word_embeddings": True,
    },
    "llama": {"hidden_act": "silu", "pretraining_tp": 1, "rope_interleaved": False},
    "mistral": {"hidden_act": "silu"},
    "qwen3": {"hidden_act": "silu", "use_sliding_window": False},
    "mixtral": {"hidden_act": "silu"},
}

#: Per family: fields that only act in training (dropout, auxiliary losses, router noise).
TRAINING_ONLY: dict[str, frozenset[str]] = {
    "gpt2": frozenset(
        {
            "attn_pdrop",
            "embd_pdrop",
            "resid_pdrop",
            "summary_activation",
            "summary_first_dropout",
            "summary_proj_to_labels",
            "summary_type",
            "summary_use_proj",
        }
    ),
    "llama": frozenset({"attention_dropout"}),
    "mistral": frozenset({"attention_dropout"}),
    "qwen3": frozenset({"attention_dropout", "max_window_layers", "sliding_window"}),
    "mixtral": frozenset(
        {
            "attention_dropout",
            "router_aux_loss_coef",
            "output_router_logits",
            "router_jitter_noise",
        }
    ),
}

#: Per family: fields read into the spec.
READ: dict[str, frozenset[str]] = {
    "gpt2": frozenset(
        {
            "vocab_size",
            "n_embd",
            "n_layer",
            "n_head",
            "n_inner",
            "n_positions",
            "n_ctx",
            "layer_norm_epsilon",
        }
    ),
    "llama": frozenset(
        {
            "vocab_size",
            "hidden_size",
            "intermediate_size",
            "num_hidden_layers",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "rms_norm_eps",
            "rope_theta",
            "rope_scaling",
            "rope_parameters",
            "attention_bias",
            "mlp_bias",
            "tie_word_embeddings",
        }
    ),
}
READ["mistral"] = (READ["llama"] - {"attention_bias", "mlp_bias"}) | {"sliding_window"}
READ["qwen3"] = READ["llama"] - {"mlp_bias"} | {"layer_types"}
READ["mixtral"] = (READ["llama"] - {"attention_bias", "mlp_bias"}) | {
    "sliding_window",
    "num_local_experts",
    "num_experts_per_tok",
}

LLAMA3_KEYS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")


def refuse(field: str, value: Any, rule: str) -> ArgumentError:
    """The typed error for one config field: its name, its value and the book's rule."""
    return ArgumentError(f"config.json field {field!r} = {value!r}: {rule}")


def read_config(folder: Any) -> dict[str, Any]:
    """The parsed config.json of a model folder (ArgumentError if it is missing or not JSON)."""
    path = Path(folder) / "config.json"
    if not path.is_file():
        raise ArgumentError(
            f"A Hugging Face model folder holds config.json beside its weights; {path} does not "
            "exist. Pass the folder that save_pretrained or a download wrote."
        )
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArgumentError(f"{path} is not readable JSON ({error}).") from None
    if not isinstance(config, dict):
        raise ArgumentError(f"{path} must hold a JSON object; got {type(config).__name__}.")
    return config


def family_of(config: dict[str, Any]) -> str:
    """The family named by config["model_type"], one of the five the book loads."""
    family = config.get("model_type")
    if family not in FAMILIES:
        raise refuse(
            "model_type",
            family,
            f"the book loads the families {list(FAMILIES)}. Other architectures need parts the "
            "book does not build.",
        )
    return str(family)


def _int(config: dict, key: str, *, minimum: int = 1, default: Any = ...) -> int:
    value = config.get(key, default)
    if value is ...:
        raise refuse(key, None, "this field is needed; the folder's config.json lacks it.")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise refuse(key, value, f"must be a whole number of at least {minimum}.")
    return int(value)


def _float(config: dict, key: str, default: Any = ..., *, positive: bool = True) -> float:
    value = config.get(key, default)
    if value is ...:
        raise refuse(key, None, "this field is needed; the folder's config.json lacks it.")
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or (positive and value <= 0):
        raise refuse(key, value, "must be a finite positive number.")
    return float(value)


def _flag(config: dict, key: str, default: bool) -> bool:
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise refuse(key, value, "must be true or false.")
    return value


def _check_fields(config: dict[str, Any], family: str) -> None:
    """Refuse unknown non-null fields and required fields holding another value."""
    known = INERT | READ[family] | TRAINING_ONLY[family] | set(REQUIRED[family])
    for key, value in config.items():
        if key not in known and value is not None:
            raise refuse(
                key,
                value,
                f"the book's {family} loader does not implement this field, so it refuses it "
                "rather than ignore it.",
            )
    for key, wanted in REQUIRED[family].items():
        if key in config and config[key] != wanted:
            raise refuse(key, config[key], f"the book implements only {wanted!r}.")


def _rope(config: dict[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """(θ, scaling or None) from rope_parameters (transformers 5) or rope_theta, rope_scaling."""
    params = config.get("rope_parameters")
    if params is None:
        theta = _float(config, "rope_theta", 10000.0)
        scaling = config.get("rope_scaling")
    else:
        if not isinstance(params, dict):
            raise refuse("rope_parameters", params, "must be an object such as {rope_type, ...}.")
        theta = _float(params, "rope_theta", _float(config, "rope_theta", 10000.0))
        scaling = {k: v for k, v in params.items() if k != "rope_theta"}
    if scaling is None:
        return theta, None
    if not isinstance(scaling, dict):
        raise refuse("rope_scaling", scaling, "must be null or an object with a rope_type.")
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default" and set(scaling) <= {"rope_type", "type"}:
        return theta, None
    if kind != "llama3":
        raise refuse(
            "rope_type", kind, 'the book implements RoPE scaling "llama3" only (and "default").'
        )
    extra = set(scaling) - {"rope_type", "type", *LLAMA3_KEYS}
    if extra:
        key = sorted(extra)[0]
        raise refuse(f"rope_scaling.{key}", scaling[key], "is not part of llama3 scaling.")
    values = {k: _float(scaling, k) for k in LLAMA3_KEYS}
    values["original_max_position_embeddings"] = _int(scaling, "original_max_position_embeddings")
    return theta, {"rope_type": "llama3", **values}


def _heads(config: dict[str, Any], width: int) -> tuple[int, int, int]:
    """(H, G, d_h): G divides H; d_h from head_dim or D / H."""
    heads = _int(config, "num_attention_heads")
    kv_heads = _int(config, "num_key_value_heads", default=heads)
    if heads % kv_heads:
        raise refuse(
            "num_key_value_heads", kv_heads, f"must divide num_attention_heads = {heads}."
        )
    head_dim = config.get("head_dim")
    if head_dim is None:
        if width % heads:
            raise refuse("num_attention_heads", heads, f"must divide hidden_size = {width}.")
        head_dim = width // heads
    head_width = _int({"head_dim": head_dim}, "head_dim")
    if head_width % 2:
        raise refuse("head_dim", head_width, "RoPE rotates coordinate pairs: it must be even.")
    return heads, kv_heads, head_width


def _gpt2_spec(config: dict[str, Any]) -> ModelSpec:
    width = _int(config, "n_embd", default=768)
    heads = _int(config, "n_head", default=12)
    if width % heads:
        raise refuse("n_head", heads, f"must divide n_embd = {width}.")
    positions = _int(config, "n_positions", default=1024)
    if "n_ctx" in config and config["n_ctx"] != positions:
        raise refuse("n_ctx", config["n_ctx"], f"must equal n_positions = {positions}.")
    inner = config.get("n_inner")
    return ModelSpec(
        family="gpt2",
        vocab_size=_int(config, "vocab_size", default=50257),
        model_width=width,
        num_layers=_int(config, "n_layer", default=12),
        num_heads=heads,
        num_kv_heads=heads,
        head_width=width // heads,
        hidden_width=4 * width if inner is None else _int(config, "n_inner"),
        norm="layer",
        norm_eps=_float(config, "layer_norm_epsilon", 1e-5),
        positions="learned",
        max_positions=positions,
        ffn="gelu_tanh",
        attention_bias=True,
        ffn_bias=True,
        tie_embeddings=True,
    )


def _rope_spec(config: dict[str, Any], family: str) -> ModelSpec:
    width = _int(config, "hidden_size")
    heads, kv_heads, head_width = _heads(config, width)
    theta, scaling = _rope(config)
    window = None
    if family in ("mistral", "mixtral") and config.get("sliding_window") is not None:
        window = _int(config, "sliding_window")
    if family == "qwen3":
        layer_types = config.get("layer_types")
        if layer_types is not None and any(t != "full_attention" for t in layer_types):
            raise refuse(
                "layer_types", layer_types, 'the book builds "full_attention" layers only.'
            )
    experts = top_k = None
    if family == "mixtral":
        experts = _int(config, "num_local_experts", default=8)
        top_k = _int(config, "num_experts_per_tok", default=2)
        if top_k > experts:
            raise refuse("num_experts_per_tok", top_k, f"must be at most {experts} experts.")
    default_eps = 1e-6 if family in ("llama", "mistral", "qwen3") else 1e-5
    default_tie = family == "qwen3"
    return ModelSpec(
        family=family,
        vocab_size=_int(config, "vocab_size"),
        model_width=width,
        num_layers=_int(config, "num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_width=head_width,
        hidden_width=_int(config, "intermediate_size"),
        norm="rms",
        norm_eps=_float(config, "rms_norm_eps", default_eps),
        positions="rope",
        max_positions=None,
        ffn="mixtral_moe" if family == "mixtral" else "swiglu",
        num_experts=experts,
        top_k=top_k,
        attention_bias=_flag(config, "attention_bias", False),
        ffn_bias=_flag(config, "mlp_bias", False),
        qk_norm=family == "qwen3",
        window=window,
        rope_theta=theta,
        rope_scaling=scaling,
        tie_embeddings=_flag(config, "tie_word_embeddings", default_tie),
    )


def spec_from_config(config: dict[str, Any]) -> ModelSpec:
    """The book's Decoder options for a config.json dictionary, or a typed refusal."""
    if not isinstance(config, dict):
        raise ArgumentError(f"A config must be a dictionary; got {type(config).__name__}.")
    family = family_of(config)
    _check_fields(config, family)
    return _gpt2_spec(config) if family == "gpt2" else _rope_spec(config, family)
