"""``load_pretrained(folder)`` → the book's Decoder; ``save_pretrained(model, folder, family)``.

Loading checks everything before it builds anything it returns: the config (every field the
book lacks refused), then the stored names and shapes against the family's table (from the
safetensors headers, no data read), then reads one tensor at a time into a fresh state and
assigns it to a freshly built Decoder in one ``load_state_dict`` (which itself changes nothing
unless every entry fits). A failure at any step leaves nothing half-loaded.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError, ParameterError, ShapeError
from ..nn.decoder import Decoder
from ..random import SplitMix64
from .config import read_config, spec_from_config
from .describe import half_pairing, spec_of
from .mapping import BUFFERS, Entry, hf_shape, plan, to_book, to_hf
from .spec import FAMILIES, ModelSpec, parameter_shapes
from .weights import INDEX, SINGLE, read_float64, tensor_index, write_safetensors


def decoder_options(spec: ModelSpec) -> dict[str, Any]:
    """The Decoder keyword arguments a spec stands for."""
    options: dict[str, Any] = dict(
        tie_embeddings=spec.tie_embeddings,
        positions=spec.positions,
        norm=spec.norm,
        norm_eps=spec.norm_eps,
        ffn=spec.ffn,
        num_kv_heads=spec.num_kv_heads,
        attention_bias=spec.attention_bias,
        ffn_bias=spec.ffn_bias,
    )
    if spec.head_width * spec.num_heads != spec.model_width:
        options["head_width"] = spec.head_width
    if spec.positions == "learned":
        options["max_positions"] = spec.max_positions
    else:
        options.update(rope_theta=spec.rope_theta, rope_pairing="half")
        if spec.rope_scaling is not None:
            options["rope_scaling"] = dict(spec.rope_scaling)
    if spec.window is not None:
        options["window"] = spec.window
    if spec.qk_norm:
        options["qk_norm"] = True
    if spec.ffn == "mixtral_moe":
        options.update(num_experts=spec.num_experts, top_k=spec.top_k)
    return options


def build_decoder(spec: ModelSpec, name: str = "decoder") -> Decoder:
    """A Decoder with the spec's shapes (weights drawn from a fixed stream, to be overwritten)."""
    model = Decoder(
        spec.vocab_size,
        spec.model_width,
        spec.num_layers,
        spec.num_heads,
        spec.hidden_width,
        name=name,
        rng=SplitMix64(0),
        **decoder_options(spec),
    )
    declared = parameter_shapes(spec, name)
    built = [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    if sorted(built) != sorted(declared):  # the one shape declaration must be the modules'
        extra = sorted(set(built) - set(declared))
        lacking = sorted(set(declared) - set(built))
        raise ParameterError(
            f"The Decoder built for {spec.family} differs from the declared shapes: built but "
            f"not declared {extra[:3]}, declared but not built {lacking[:3]}."
        )
    return model


def _check_stored(entries: list[Entry], stored: dict, declared: dict, spec: ModelSpec) -> None:
    """Every table tensor present with its shape; nothing else stored but known buffers."""
    wanted = {e.hf for e in entries}
    for entry in entries:
        info = stored.get(entry.hf)
        if info is None:
            raise ParameterError(
                f"The {spec.family} checkpoint must store {entry.hf!r} (for "
                f"{', '.join(entry.book)}); it is missing."
            )
        shape = hf_shape(entry, declared)
        if info.shape != shape:
            raise ShapeError(
                f"Tensor {entry.hf!r} must have shape {shape} for this config; the file "
                f"stores {info.shape}."
            )
    tied_head = spec.tie_embeddings and "lm_head.weight" in stored
    for name in stored:
        if name in wanted or name.endswith(BUFFERS) or (tied_head and name == "lm_head.weight"):
            continue
        raise ParameterError(
            f"The checkpoint stores {name!r}, which the book's {spec.family} table does not "
            "map; refusing rather than dropping a weight. (A bias with attention_bias or "
            "mlp_bias false, or an unsupported part?)"
        )


def _canonical(stored: dict, family: str) -> dict:
    """GPT-2 checkpoints from the original upload omit the ``transformer.`` prefix."""
    if family != "gpt2" or any(n.startswith("transformer.") for n in stored):
        return stored
    return {(n if n == "lm_head.weight" else f"transformer.{n}"): i for n, i in stored.items()}


def load_pretrained(folder: Any, *, name: str = "decoder") -> Decoder:
    """A Hugging Face model folder (config.json + safetensors) as the book's Decoder, float64."""
    folder = Path(folder)
    spec = spec_from_config(read_config(folder))
    stored = _canonical(tensor_index(folder), spec.family)
    declared = dict(parameter_shapes(spec, name))
    entries = plan(spec, declared, name)
    _check_stored(entries, stored, declared, spec)
    model = build_decoder(spec, name)
    state: dict[str, np.ndarray] = {}
    for entry in entries:  # one tensor in memory at a time, beside the state being built
        for book, array in zip(
            entry.book, to_book(entry, read_float64(stored[entry.hf])), strict=True
        ):
            if not np.isfinite(array).all():
                raise ParameterError(f"Tensor {entry.hf!r} holds NaN or infinite values.")
            state[book] = array
    if spec.tie_embeddings and "lm_head.weight" in stored:
        head = read_float64(stored["lm_head.weight"])
        if not np.array_equal(head, state[f"{name}.embedding.weight"]):
            raise ParameterError(
                "config.json ties the head to the embedding (tie_word_embeddings true), but "
                "the stored lm_head.weight differs from the embedding table."
            )
    model.load_state_dict(state)
    model.hub_spec = spec
    return model


# --- saving --------------------------------------------------------------------------------


def config_from_spec(spec: ModelSpec) -> dict[str, Any]:
    """The config.json a spec stands for, in the family's own field names."""
    architecture = {
        "gpt2": "GPT2LMHeadModel",
        "llama": "LlamaForCausalLM",
        "mistral": "MistralForCausalLM",
        "qwen3": "Qwen3ForCausalLM",
        "mixtral": "MixtralForCausalLM",
    }[spec.family]
    base: dict[str, Any] = {"architectures": [architecture], "model_type": spec.family}
    if spec.family == "gpt2":
        return {
            **base,
            "vocab_size": spec.vocab_size,
            "n_embd": spec.model_width,
            "n_layer": spec.num_layers,
            "n_head": spec.num_heads,
            "n_inner": spec.hidden_width,
            "n_positions": spec.max_positions,
            "layer_norm_epsilon": spec.norm_eps,
            "activation_function": "gelu_new",
            "tie_word_embeddings": True,
            "attn_pdrop": 0.0,
            "embd_pdrop": 0.0,
            "resid_pdrop": 0.0,
        }
    rope: dict[str, Any] = {"rope_type": "default", "rope_theta": spec.rope_theta}
    if spec.rope_scaling is not None:
        rope = {**spec.rope_scaling, "rope_theta": spec.rope_theta}
    config = {
        **base,
        "vocab_size": spec.vocab_size,
        "hidden_size": spec.model_width,
        "intermediate_size": spec.hidden_width,
        "num_hidden_layers": spec.num_layers,
        "num_attention_heads": spec.num_heads,
        "num_key_value_heads": spec.num_kv_heads,
        "head_dim": spec.head_width,
        "hidden_act": "silu",
        "rms_norm_eps": spec.norm_eps,
        "rope_parameters": rope,
        "tie_word_embeddings": spec.tie_embeddings,
    }
    if spec.family in ("llama", "qwen3"):
        config["attention_bias"] = spec.attention_bias
    if spec.family == "llama":
        config["mlp_bias"] = spec.ffn_bias
    if spec.family in ("mistral", "mixtral"):
        config["sliding_window"] = spec.window
    if spec.family == "qwen3":
        config["use_sliding_window"] = False
        config["layer_types"] = ["full_attention"] * spec.num_layers
    if spec.family == "mixtral":
        config["num_local_experts"] = spec.num_experts
        config["num_experts_per_tok"] = spec.top_k
    return config


def save_pretrained(model: Decoder, folder: Any, family: str) -> Path:
    """Write config.json + model.safetensors for ``family``, loadable by transformers.

    Every check (the family, that the model's parts are the family's, every name and shape)
    runs before anything is written; the files appear together, moved in from a temporary
    folder beside the target.
    """
    if not isinstance(model, Decoder):
        raise ArgumentError(f"save_pretrained needs a Decoder; got {type(model).__name__}.")
    if family not in FAMILIES:
        raise ArgumentError(f"family must be one of {list(FAMILIES)}; got {family!r}.")
    spec, permute = spec_of(model, family)
    name = model.name
    params = dict(model.named_parameters())
    declared = dict(parameter_shapes(spec, name))
    shapes = {n: tuple(p.shape) for n, p in params.items()}
    if shapes != declared:
        extra = sorted(set(shapes.items()) - set(declared.items()))
        raise ParameterError(
            f"The model's parameters are not those of a {family} model with its config: "
            f"{extra[:3]} do not fit."
        )
    tensors = {}
    for entry in plan(spec, declared, name):
        arrays = [params[b].value for b in entry.book]
        if permute:  # interleaved RoPE → transformers' half pairing
            arrays = [half_pairing(b, a, spec) for b, a in zip(entry.book, arrays, strict=True)]
        tensors[entry.hf] = to_hf(entry, arrays)
    folder = Path(folder)
    if (folder / INDEX).exists():
        raise ArgumentError(
            f"{folder} holds a sharded checkpoint ({INDEX}); save into another folder."
        )
    if folder.exists() and not folder.is_dir():
        raise ArgumentError(f"save_pretrained writes a folder; {folder} is a file.")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".saving-") as tmp:
        tmp = Path(tmp)
        write_safetensors(tensors, tmp / SINGLE)
        (tmp / "config.json").write_text(json.dumps(config_from_spec(spec), indent=2) + "\n")
        for file in ("config.json", SINGLE):
            (tmp / file).replace(folder / file)
    return folder
