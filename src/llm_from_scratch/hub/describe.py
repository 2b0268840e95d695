"""A book Decoder read back as a family's spec: which parts it has, checked against the family.

``save_pretrained`` uses this for models the book built itself (say the Chapter 10 model trained
in the Llama configuration). A model whose RoPE pairs (2j, 2j + 1) ("interleaved") is saved in
transformers' pairing (j, j + d_h/2) by reordering each head's query and key columns with
``pairing_permutation``: both sides of every qᵀk are permuted alike, so the scores are unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ArgumentError
from ..nn.decoder import Decoder
from ..nn.norms import LayerNorm, RMSNorm
from ..nn.positions import pairing_permutation
from .spec import ModelSpec

#: What each family's block is made of: norm, positions, feed-forward.
PARTS = {
    "gpt2": ("layer", "learned", "gelu_tanh"),
    "llama": ("rms", "rope", "swiglu"),
    "mistral": ("rms", "rope", "swiglu"),
    "qwen3": ("rms", "rope", "swiglu"),
    "mixtral": ("rms", "rope", "mixtral_moe"),
}


def _refuse(family: str, what: str, got: Any, fix: str = "") -> ArgumentError:
    return ArgumentError(
        f"A {family} checkpoint needs {what}; this model has {got}.{' ' + fix if fix else ''}"
    )


def _ffn_kind(ffn: Any) -> str:
    kind = type(ffn).__name__
    if kind == "FeedForward":
        return "gelu_tanh" if ffn.activation == "gelu_tanh" else f"FeedForward({ffn.activation})"
    if kind == "SwiGLU":
        return "swiglu"
    if kind == "SparseMoE":
        return "mixtral_moe"
    return kind


def _has(model: Decoder, suffix: str) -> bool:
    return any(n.endswith(suffix) for n, _ in model.named_parameters())


def spec_of(model: Decoder, family: str) -> tuple[ModelSpec, bool]:
    """(spec, permute): the family spec the model stands for; permute if its RoPE interleaves."""
    blocks = model.blocks
    first = blocks[0]
    attention = first.attention
    norm_kind = "layer" if isinstance(first.attention_norm, LayerNorm) else "rms"
    if not isinstance(first.attention_norm, LayerNorm | RMSNorm):
        raise _refuse(family, "LayerNorm or RMSNorm", type(first.attention_norm).__name__)
    positions = getattr(model, "positions", None)
    rope = attention.positions
    if positions == "rope" and type(rope).__name__ != "RoPEPositions":
        raise _refuse(family, "RoPE on queries and keys", rope)
    wanted = PARTS[family]
    got = (norm_kind, positions, _ffn_kind(first.ffn))
    for label, want, have in zip(("norm", "positions", "feed-forward"), wanted, got, strict=True):
        if want != have:
            raise _refuse(family, f"{label} {want!r}", repr(have))
    eps = {b.attention_norm.eps for b in blocks} | {b.ffn_norm.eps for b in blocks}
    eps.add(model.final_norm.eps)
    if len(eps) != 1:
        raise _refuse(family, "one norm ε throughout (config.json holds one)", sorted(eps))
    attention_bias = _has(model, "attention.query.bias")
    ffn_bias = _has(model, "ffn.down.bias")
    window = attention.window
    qk_norm = attention.qk_norm
    if family == "gpt2":
        checks = [
            (attention_bias and ffn_bias, "biases on every projection", "bias-free projections"),
            (model.tie_embeddings, "a head tied to the embedding", "a separate head"),
            (attention.num_kv_heads == attention.num_heads, "G = H", attention.num_kv_heads),
        ]
    else:
        checks = [(not (ffn_bias and family != "llama"), "bias-free feed-forward", "biases")]
        if family in ("mistral", "mixtral"):
            checks.append((not attention_bias, "bias-free attention", "attention biases"))
    if family not in ("mistral", "mixtral"):
        checks.append((window is None, "full causal attention", f"window={window}"))
    checks.append((qk_norm == (family == "qwen3"), f"qk_norm={family == 'qwen3'}", qk_norm))
    for ok, what, have in checks:
        if not ok:
            raise _refuse(family, what, have)
    ffn = first.ffn
    spec = ModelSpec(
        family=family,
        vocab_size=model.vocab_size,
        model_width=model.model_width,
        num_layers=len(blocks),
        num_heads=attention.num_heads,
        num_kv_heads=attention.num_kv_heads,
        head_width=attention.head_width,
        hidden_width=_hidden_width(ffn),
        norm=norm_kind,
        norm_eps=eps.pop(),
        positions=positions,
        max_positions=getattr(model, "max_positions", None),
        ffn=wanted[2],
        num_experts=getattr(ffn, "num_experts", None),
        top_k=getattr(ffn, "top_k", None),
        attention_bias=attention_bias,
        ffn_bias=ffn_bias,
        qk_norm=qk_norm,
        window=window,
        rope_theta=float(rope.theta) if positions == "rope" else 10000.0,
        rope_scaling=getattr(rope, "scaling", None) if positions == "rope" else None,
        tie_embeddings=model.tie_embeddings,
    )
    return spec, positions == "rope" and rope.pairing == "interleaved"


def _hidden_width(ffn: Any) -> int:
    width = getattr(ffn, "hidden_width", None)
    if width is None:  # a mixture: every expert is as wide as the first
        width = ffn.experts[0].hidden_width
    return int(width)


def half_pairing(name: str, array: np.ndarray, spec: ModelSpec) -> np.ndarray:
    """An interleaved-RoPE query/key weight, bias or QK-norm gain in the half pairing."""
    p = pairing_permutation(spec.head_width)  # (d_h,)
    if name.endswith(("query_norm.gain", "key_norm.gain")):
        return array[p]
    if not name.endswith(
        (
            "attention.query.weight",
            "attention.query.bias",
            "attention.key.weight",
            "attention.key.bias",
        )
    ):
        return array
    heads = array.shape[-1] // spec.head_width
    columns = (np.arange(heads)[:, None] * spec.head_width + p[None, :]).ravel()  # (H·d_h,)
    return array[..., columns]
