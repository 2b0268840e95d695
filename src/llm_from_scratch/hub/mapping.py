"""One table per family: Hugging Face tensor name → book parameter name(s) and the transform.

The book multiplies row vectors by weights (Y = X W, W [D_in, D_out]); PyTorch's ``nn.Linear``
stores W_torch = Wᵀ ([D_out, D_in]), so Llama-family projections are transposed on the way in.
GPT-2's ``Conv1D`` already stores [D_in, D_out] (copied as is), and its ``c_attn`` holds
W_Q, W_K, W_V side by side ([D, 3D]: split into three column blocks). RoPE needs no
permutation: transformers rotates pairs (j, j + d_h/2) (``rotate_half``), the book's
``rope_pairing="half"``. ``{i}`` is a layer, ``{e}`` an expert.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .spec import ModelSpec

COPY, TRANSPOSE, SPLIT3 = "copy", "transpose", "split into q, k, v"


@dataclass(frozen=True)
class Row:
    """One Hugging Face tensor and the book parameter(s) it fills."""

    hf: str  # e.g. "model.layers.{i}.self_attn.q_proj.weight"
    book: tuple[str, ...]  # e.g. ("blocks.{i}.attention.query.weight",)
    transform: str  # COPY, TRANSPOSE or SPLIT3


GPT2 = (
    Row("transformer.wte.weight", ("embedding.weight",), COPY),
    Row("transformer.wpe.weight", ("positions.weight",), COPY),
    Row("transformer.h.{i}.ln_1.weight", ("blocks.{i}.attention_norm.gain",), COPY),
    Row("transformer.h.{i}.ln_1.bias", ("blocks.{i}.attention_norm.bias",), COPY),
    Row(
        "transformer.h.{i}.attn.c_attn.weight",
        tuple(f"blocks.{{i}}.attention.{r}.weight" for r in ("query", "key", "value")),
        SPLIT3,
    ),
    Row(
        "transformer.h.{i}.attn.c_attn.bias",
        tuple(f"blocks.{{i}}.attention.{r}.bias" for r in ("query", "key", "value")),
        SPLIT3,
    ),
    Row("transformer.h.{i}.attn.c_proj.weight", ("blocks.{i}.attention.output.weight",), COPY),
    Row("transformer.h.{i}.attn.c_proj.bias", ("blocks.{i}.attention.output.bias",), COPY),
    Row("transformer.h.{i}.ln_2.weight", ("blocks.{i}.ffn_norm.gain",), COPY),
    Row("transformer.h.{i}.ln_2.bias", ("blocks.{i}.ffn_norm.bias",), COPY),
    Row("transformer.h.{i}.mlp.c_fc.weight", ("blocks.{i}.ffn.up.weight",), COPY),
    Row("transformer.h.{i}.mlp.c_fc.bias", ("blocks.{i}.ffn.up.bias",), COPY),
    Row("transformer.h.{i}.mlp.c_proj.weight", ("blocks.{i}.ffn.down.weight",), COPY),
    Row("transformer.h.{i}.mlp.c_proj.bias", ("blocks.{i}.ffn.down.bias",), COPY),
    Row("transformer.ln_f.weight", ("final_norm.gain",), COPY),
    Row("transformer.ln_f.bias", ("final_norm.bias",), COPY),
)

_ATTENTION = tuple(
    Row(
        f"model.layers.{{i}}.self_attn.{hf}_proj.{kind}",
        (f"blocks.{{i}}.attention.{book}.{kind}",),
        TRANSPOSE if kind == "weight" else COPY,
    )
    for hf, book in (("q", "query"), ("k", "key"), ("v", "value"), ("o", "output"))
    for kind in ("weight", "bias")
)
_SWIGLU = tuple(
    Row(
        f"model.layers.{{i}}.mlp.{role}_proj.{kind}",
        (f"blocks.{{i}}.ffn.{role}.{kind}",),
        TRANSPOSE if kind == "weight" else COPY,
    )
    for role in ("gate", "up", "down")
    for kind in ("weight", "bias")
)
_NORMS = (
    Row("model.layers.{i}.input_layernorm.weight", ("blocks.{i}.attention_norm.gain",), COPY),
    Row("model.layers.{i}.post_attention_layernorm.weight", ("blocks.{i}.ffn_norm.gain",), COPY),
)
_ENDS = (
    Row("model.embed_tokens.weight", ("embedding.weight",), COPY),
    Row("model.norm.weight", ("final_norm.gain",), COPY),
    Row("lm_head.weight", ("head.weight",), COPY),
)
_QK_NORM = (
    Row(
        "model.layers.{i}.self_attn.q_norm.weight", ("blocks.{i}.attention.query_norm.gain",), COPY
    ),
    Row("model.layers.{i}.self_attn.k_norm.weight", ("blocks.{i}.attention.key_norm.gain",), COPY),
)
_MOE = (
    Row(
        "model.layers.{i}.block_sparse_moe.gate.weight",
        ("blocks.{i}.ffn.router.weight",),
        TRANSPOSE,
    ),
    Row(
        "model.layers.{i}.block_sparse_moe.experts.{e}.w1.weight",
        ("blocks.{i}.ffn.experts.{e}.gate.weight",),
        TRANSPOSE,
    ),
    Row(
        "model.layers.{i}.block_sparse_moe.experts.{e}.w3.weight",
        ("blocks.{i}.ffn.experts.{e}.up.weight",),
        TRANSPOSE,
    ),
    Row(
        "model.layers.{i}.block_sparse_moe.experts.{e}.w2.weight",
        ("blocks.{i}.ffn.experts.{e}.down.weight",),
        TRANSPOSE,
    ),
)

TABLES: dict[str, tuple[Row, ...]] = {
    "gpt2": GPT2,
    "llama": _ENDS + _NORMS + _ATTENTION + _SWIGLU,
    "mistral": _ENDS + _NORMS + _ATTENTION + _SWIGLU,
    "qwen3": _ENDS + _NORMS + _ATTENTION + _QK_NORM + _SWIGLU,
    "mixtral": _ENDS + _NORMS + _ATTENTION + _MOE,
}

#: Tensors some checkpoints store that are not weights (causal-mask and frequency buffers).
BUFFERS = (".attn.bias", ".attn.masked_bias", ".rotary_emb.inv_freq")


@dataclass(frozen=True)
class Entry:
    """One Hugging Face tensor of a concrete model and the book parameters it fills."""

    hf: str
    book: tuple[str, ...]
    transform: str


def plan(spec: ModelSpec, declared: dict[str, tuple], prefix: str = "decoder") -> list[Entry]:
    """The table expanded over layers and experts, keeping rows whose book names are declared."""
    entries = []
    experts = range(spec.num_experts or 0)
    for row in TABLES[spec.family]:
        layers = range(spec.num_layers) if "{i}" in row.hf else [None]
        for i in layers:
            for e in experts if "{e}" in row.hf else [None]:
                book = tuple(f"{prefix}." + b.format(i=i, e=e) for b in row.book)
                if all(b in declared for b in book):
                    entries.append(Entry(row.hf.format(i=i, e=e), book, row.transform))
    return entries


def hf_shape(entry: Entry, declared: dict[str, tuple]) -> tuple[int, ...]:
    """The shape the Hugging Face tensor must have for the book shapes it fills."""
    shapes = [declared[b] for b in entry.book]
    if entry.transform == TRANSPOSE:
        return tuple(reversed(shapes[0]))
    if entry.transform == SPLIT3:
        return (*shapes[0][:-1], sum(s[-1] for s in shapes))
    return tuple(shapes[0])


def to_book(entry: Entry, array: np.ndarray) -> list[np.ndarray]:
    """The book arrays one Hugging Face array becomes (transposed, copied or split)."""
    if entry.transform == TRANSPOSE:
        return [np.ascontiguousarray(array.T)]
    if entry.transform == SPLIT3:
        return [np.ascontiguousarray(a) for a in np.split(array, 3, axis=-1)]
    return [array]


def to_hf(entry: Entry, arrays: list[np.ndarray]) -> np.ndarray:
    """The inverse of :func:`to_book`: the Hugging Face array from the book's."""
    if entry.transform == TRANSPOSE:
        return np.ascontiguousarray(arrays[0].T)
    if entry.transform == SPLIT3:
        return np.ascontiguousarray(np.concatenate(arrays, axis=-1))
    return np.ascontiguousarray(arrays[0])
