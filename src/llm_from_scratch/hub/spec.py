"""What a checkpoint's config means for the book's Decoder, and every shape that follows from it.

:class:`ModelSpec` holds the options the book's :class:`~llm_from_scratch.nn.Decoder` is built
with. :func:`parameter_shapes` declares each parameter's book name and shape from a spec alone,
with no array allocated; parameter counts, KV-cache bytes and FLOPs per token are sums over that
one declaration, so they work for configs far too large to build (Llama 3.1 8B, Mixtral 8x7B).
``load_pretrained`` checks that the Decoder it builds holds exactly these names and shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ArgumentError
from ..generation.cache import cache_bytes_per_token as _cache_bytes_per_token

FAMILIES = ("gpt2", "llama", "mistral", "qwen3", "mixtral")


@dataclass(frozen=True)
class ModelSpec:
    """The book's Decoder options for one checkpoint (read from its config.json)."""

    family: str
    vocab_size: int
    model_width: int  # D
    num_layers: int  # L
    num_heads: int  # H
    num_kv_heads: int  # G
    head_width: int  # d_h (Qwen3: may differ from D / H)
    hidden_width: int  # FFN hidden width (per expert for Mixtral)
    norm: str  # "layer" | "rms"
    norm_eps: float
    positions: str  # "learned" | "rope"
    max_positions: int | None  # rows of the learned table (GPT-2 n_positions)
    ffn: str  # "gelu_tanh" | "swiglu" | "mixtral_moe"
    num_experts: int | None = None
    top_k: int | None = None
    attention_bias: bool = False  # q, k, v and output projections
    ffn_bias: bool = False
    qk_norm: bool = False
    window: int | None = None
    rope_theta: float = 10000.0
    rope_scaling: dict[str, Any] | None = field(default=None, compare=False)
    tie_embeddings: bool = True

    @property
    def query_width(self) -> int:
        """H·d_h: the width of the queries (and of the attention output before W_O)."""
        return self.num_heads * self.head_width

    @property
    def kv_width(self) -> int:
        """G·d_h: the width of the keys and of the values."""
        return self.num_kv_heads * self.head_width


def block_shapes(spec: ModelSpec, i: int, prefix: str = "decoder") -> list[tuple[str, tuple]]:
    """(book name, shape) of block i's parameters in forward order."""
    d, b = spec.model_width, f"{prefix}.blocks.{i}"
    norm = ["gain", "bias"] if spec.norm == "layer" else ["gain"]
    shapes: list[tuple[str, tuple]] = [(f"{b}.attention_norm.{n}", (d,)) for n in norm]
    for role, width in (("query", spec.query_width), ("key", spec.kv_width)):
        shapes.append((f"{b}.attention.{role}.weight", (d, width)))
        if spec.attention_bias:
            shapes.append((f"{b}.attention.{role}.bias", (width,)))
    shapes.append((f"{b}.attention.value.weight", (d, spec.kv_width)))
    if spec.attention_bias:
        shapes.append((f"{b}.attention.value.bias", (spec.kv_width,)))
    if spec.qk_norm:
        shapes.append((f"{b}.attention.query_norm.gain", (spec.head_width,)))
        shapes.append((f"{b}.attention.key_norm.gain", (spec.head_width,)))
    shapes.append((f"{b}.attention.output.weight", (spec.query_width, d)))
    if spec.attention_bias:
        shapes.append((f"{b}.attention.output.bias", (d,)))
    shapes += [(f"{b}.ffn_norm.{n}", (d,)) for n in norm]
    f = spec.hidden_width
    if spec.ffn == "gelu_tanh":
        shapes.append((f"{b}.ffn.up.weight", (d, f)))
        if spec.ffn_bias:
            shapes.append((f"{b}.ffn.up.bias", (f,)))
        shapes.append((f"{b}.ffn.down.weight", (f, d)))
        if spec.ffn_bias:
            shapes.append((f"{b}.ffn.down.bias", (d,)))
    elif spec.ffn == "swiglu":
        for role, shape in (("gate", (d, f)), ("up", (d, f)), ("down", (f, d))):
            shapes.append((f"{b}.ffn.{role}.weight", shape))
            if spec.ffn_bias:
                shapes.append((f"{b}.ffn.{role}.bias", shape[1:]))
    else:  # mixtral_moe: a router and E SwiGLU experts
        shapes.append((f"{b}.ffn.router.weight", (d, spec.num_experts)))
        for e in range(spec.num_experts):
            for role, shape in (("gate", (d, f)), ("up", (d, f)), ("down", (f, d))):
                shapes.append((f"{b}.ffn.experts.{e}.{role}.weight", shape))
    return shapes


def parameter_shapes(spec: ModelSpec, prefix: str = "decoder") -> list[tuple[str, tuple]]:
    """(book name, shape) of every parameter of the Decoder a spec builds, in forward order."""
    d = spec.model_width
    shapes: list[tuple[str, tuple]] = [(f"{prefix}.embedding.weight", (spec.vocab_size, d))]
    if spec.positions == "learned":
        shapes.append((f"{prefix}.positions.weight", (spec.max_positions, d)))
    for i in range(spec.num_layers):
        shapes += block_shapes(spec, i, prefix)
    norm = ["gain", "bias"] if spec.norm == "layer" else ["gain"]
    shapes += [(f"{prefix}.final_norm.{n}", (d,)) for n in norm]
    if not spec.tie_embeddings:
        shapes.append((f"{prefix}.head.weight", (spec.vocab_size, d)))
    return shapes


def _size(shape: tuple) -> int:
    size = 1
    for n in shape:
        size *= int(n)
    return size


def _as_spec(config: Any) -> ModelSpec:
    if isinstance(config, ModelSpec):
        return config
    if isinstance(config, dict):
        from .config import spec_from_config

        return spec_from_config(config)
    raise ArgumentError(
        "Expected a ModelSpec or a config.json dictionary; got "
        f"{type(config).__name__}. Read the file with json.load first."
    )


def count_parameters(config: Any) -> int:
    """Σ over the declared shapes of Π shape: every scalar the model stores (tied counted once)."""
    spec = _as_spec(config)
    return sum(_size(shape) for _, shape in parameter_shapes(spec))


def _is_unused_expert(name: str, top_k: int | None) -> bool:
    """An expert weight beyond the first top_k experts (the active count keeps k per token)."""
    if ".ffn.experts." not in name:
        return False
    return int(name.split(".ffn.experts.")[1].split(".")[0]) >= (top_k or 0)


def active_parameters(config: Any) -> int:
    """Parameters one token's forward pass reads: all but the E − k experts it is not sent to."""
    spec = _as_spec(config)
    return sum(
        _size(shape)
        for name, shape in parameter_shapes(spec)
        if not _is_unused_expert(name, spec.top_k)
    )


def cache_bytes_per_token(config: Any, bytes_per_number: int = 8) -> int:
    """2·L·G·d_h·bytes: the keys and values one more token adds to the cache."""
    spec = _as_spec(config)
    return _cache_bytes_per_token(
        spec.num_layers, spec.num_kv_heads, spec.head_width, bytes_per_number
    )


def _matmul_parameters(spec: ModelSpec) -> int:
    """Weights one token multiplies by: every active matrix, plus the head (tied or not)."""
    total = 0
    for name, shape in parameter_shapes(spec):
        if len(shape) != 2 or _is_unused_expert(name, spec.top_k):
            continue
        if name.endswith(("embedding.weight", "positions.weight")):
            continue  # a lookup, not a product
        total += _size(shape)
    if spec.tie_embeddings:
        total += spec.vocab_size * spec.model_width  # the head reuses the table
    return total


def flops_per_token(config: Any, context: int = 1) -> int:
    """2·(active matrix weights) + 4·L·H·d_h·S: one token's multiply-adds ×2, S keys read.

    S = min(context, window): the scores qkᵀ and the weighted sum of values each cost H·d_h
    multiply-adds per key in every layer. Norms, softmax and activations are left out.
    """
    spec = _as_spec(config)
    keys = context if spec.window is None else min(context, spec.window)
    return 2 * _matmul_parameters(spec) + 4 * spec.num_layers * spec.query_width * keys


def float64_bytes(config: Any) -> int:
    """8 bytes per stored parameter: the weights' memory in float64."""
    return 8 * count_parameters(config)


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a float64 load and generation need, part by part (shapes only, nothing allocated)."""

    weights: int  # 8·N: the model once loaded
    loading: int  # 8·N more while the read state waits to replace the built weights
    cache: int  # 2·L·G·d_h·8 per position, for every position generated
    logits: int  # the prefill's [T, V] logits in float64

    @property
    def total(self) -> int:
        """The peak: weights + loading copy, then cache and logits on top."""
        return self.weights + self.loading + self.cache + self.logits


def memory_estimate(config: Any, tokens: int, batch: int = 1) -> MemoryEstimate:
    """The float64 memory to load a model and generate ``tokens`` positions for ``batch`` rows."""
    spec = _as_spec(config)
    weights = float64_bytes(spec)
    cached = tokens if spec.window is None else min(tokens, spec.window)
    return MemoryEstimate(
        weights=weights,
        loading=weights,
        cache=batch * cached * cache_bytes_per_token(spec),
        logits=8 * batch * tokens * spec.vocab_size,
    )
