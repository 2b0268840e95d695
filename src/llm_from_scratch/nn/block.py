"""The transformer block: attention and a feed-forward network, each on a residual path.

Pre-norm (the default):  X₁ = X + Attention(N₁(X)),   X₂ = X₁ + FFN(N₂(X₁)).
Post-norm:               X₁ = N₁(X + Attention(X)),   X₂ = N₂(X₁ + FFN(X₁)).

Both orderings use the same four children, registered in pre-norm forward order:
``<name>.attention_norm``, ``<name>.attention``, ``<name>.ffn_norm``, ``<name>.ffn``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, WidthError
from ..random import SplitMix64
from ..validate import as_flag, as_real, as_width, element_count, generator, positive_int
from .attention import (
    AttentionCache,
    MultiHeadAttention,
    check_head_width,
    check_kv_heads,
    check_window,
)
from .feedforward import FeedForward
from .linear import fuse_affine
from .module import Module, as_tensor, check_name, check_part
from .moe import MixtureOfExperts, RoutingReport, SparseMoE
from .norms import LayerNorm, RMSNorm, check_epsilon
from .positions import PAIRINGS, ALiBiPositions, RoPEPositions, check_scaling
from .swiglu import SwiGLU, fuse_gated

NORMS = {"layer": LayerNorm, "rms": RMSNorm}
ORDERS = ("pre", "post")
FFN_KINDS = ("gelu", "gelu_tanh", "swiglu", "mixtral_moe")
DEFAULT_ROPE_THETA = 10000.0
POSITIONS = (None, "rope", "alibi")


def _choice(value: Any, options: tuple, label: str) -> Any:
    if not isinstance(value, str | None) or value not in options:
        raise ArgumentError(f"{label} must be one of {list(options)}; got {value!r}.")
    return value


def _check_part(module: Any, label: str, model_width: int) -> None:
    """A block part must be a Module that reads and returns [..., model_width]."""
    why = "because a residual adds its output to its input"
    check_part(module, f"TransformerBlock {label}", model_width, why)


def make_positions(
    kind: str | None,
    num_heads: int,
    head_width: int,
    pairing: str,
    theta: float = DEFAULT_ROPE_THETA,
    scaling: dict | None = None,
) -> Any:
    """The attention position scheme for ``kind``: None, RoPE on q and k, or an ALiBi bias."""
    if kind == "rope":
        if theta == DEFAULT_ROPE_THETA and scaling is None:  # today's scheme, exactly
            return RoPEPositions(head_width, pairing=pairing)
        return RoPEPositions(head_width, pairing=pairing, theta=theta, scaling=scaling)
    if kind == "alibi":
        return ALiBiPositions(num_heads)
    return None


@dataclass(frozen=True)
class BlockStages:
    """One block forward pass, stage by stage (pre-norm names; post-norm fills the same slots)."""

    attention_input: Tensor  # (B, T, D) what attention reads: N₁(X) pre-norm, X post-norm
    attention_output: Tensor  # (B, T, D)
    weights: Tensor  # (B, H, T, T) per head
    x1: Tensor  # (B, T, D) after the first residual path
    ffn_input: Tensor  # (B, T, D)
    ffn_output: Tensor  # (B, T, D)
    output: Tensor  # (B, T, D)


def check_moe_options(ffn: Any, num_experts: Any, top_k: Any) -> tuple[int | None, int | None]:
    """E and k for ``ffn="mixtral_moe"`` (1 <= k <= E), and None for both otherwise."""
    if ffn != "mixtral_moe":
        if num_experts is not None or top_k is not None:
            raise ArgumentError(
                "num_experts and top_k size a Mixtral-style mixture of experts; got "
                f"num_experts={num_experts!r}, top_k={top_k!r} with ffn={ffn!r}. Pass "
                "ffn='mixtral_moe', or leave both None."
            )
        return None, None
    if num_experts is None or top_k is None:
        raise ArgumentError(
            "ffn='mixtral_moe' needs num_experts E and top_k k (Mixtral 8x7B: E = 8, k = 2); "
            f"got num_experts={num_experts!r}, top_k={top_k!r}."
        )
    experts = positive_int(num_experts, "num_experts")
    k = positive_int(top_k, "top_k")
    if k > experts:
        raise ArgumentError(
            f"top_k picks k of the E experts for each token, so k <= E; got top_k = {k}, "
            f"num_experts = {experts}."
        )
    return experts, k


def check_rope_options(positions: Any, theta: Any, scaling: Any) -> tuple[float, dict | None]:
    """θ > 0 and a checked rope_scaling dict; both only mean something with positions='rope'."""
    theta_value = as_real(theta, "rope_theta", positive=True, fix="Llama 3 uses 500000.0.")
    scaling = check_scaling(scaling)
    if positions != "rope" and (theta_value != DEFAULT_ROPE_THETA or scaling is not None):
        raise ArgumentError(
            "rope_theta and rope_scaling configure rotary positions; got rope_theta="
            f"{theta_value!r}, rope_scaling={scaling!r} with positions={positions!r}. Pass "
            "positions='rope', or leave them at 10000.0 and None."
        )
    return theta_value, scaling


def make_ffn(
    ffn: str,
    model_width: int,
    hidden_width: int,
    bias: bool | None,
    num_experts: int | None,
    top_k: int | None,
    name: str,
    rng: SplitMix64,
) -> Module:
    """The block's FFN by kind; ``bias`` None keeps each kind's own default (GELU: biased)."""
    options = {} if bias is None else {"bias": bias}
    if ffn in ("gelu", "gelu_tanh"):
        return FeedForward(
            model_width, hidden_width, activation=ffn, name=name, rng=rng, **options
        )
    if ffn == "swiglu":
        return SwiGLU(model_width, hidden_width, model_width, name=name, rng=rng, **options)
    return SparseMoE(  # Mixtral's experts: no capacity, renormalised top-k
        model_width, hidden_width, num_experts, top_k, name=name, rng=rng
    )


def _block_settings(
    model_width: Any,
    num_heads: Any,
    hidden_width: Any,
    *,
    norm: Any = "layer",
    order: Any = "pre",
    ffn: Any = "gelu",
    positions: Any = None,
    rope_pairing: Any = "interleaved",
    causal: Any = True,
    num_kv_heads: Any = None,
    window: Any = None,
    qk_norm: Any = False,
    attention_bias: Any = False,
    head_width: Any = None,
    rope_theta: Any = DEFAULT_ROPE_THETA,
    rope_scaling: Any = None,
    ffn_bias: Any = None,
    num_experts: Any = None,
    top_k: Any = None,
    norm_eps: Any = None,
    fused: Any = False,
) -> dict[str, Any]:
    """Every TransformerBlock option checked (typed errors), before anything is built."""
    model_width = as_width(model_width, "TransformerBlock model_width")
    num_heads = positive_int(num_heads, "num_heads")
    hidden_width = as_width(hidden_width, "TransformerBlock hidden_width")
    num_kv_heads = check_kv_heads(num_kv_heads, num_heads)
    qk_norm = as_flag(qk_norm, "qk_norm")
    attention_bias = as_flag(attention_bias, "attention_bias")
    fused = as_flag(fused, "fused")
    ffn_bias = None if ffn_bias is None else as_flag(ffn_bias, "ffn_bias")
    _choice(norm, tuple(NORMS), "norm")
    _choice(order, ORDERS, "order")
    _choice(positions, POSITIONS, "positions")
    _choice(rope_pairing, PAIRINGS, "rope_pairing")
    rope_theta, rope_scaling = check_rope_options(positions, rope_theta, rope_scaling)
    causal = as_flag(causal, "causal")
    window = check_window(window, causal)
    if isinstance(ffn, Module):
        _check_part(ffn, "ffn", model_width)
        if ffn_bias is not None or num_experts is not None or top_k is not None:
            raise ArgumentError(
                "ffn_bias, num_experts and top_k configure a named ffn kind; got a ready "
                "FFN module with one of them set. Leave them None."
            )
    else:
        _choice(ffn, FFN_KINDS, "ffn")
        num_experts, top_k = check_moe_options(ffn, num_experts, top_k)
        if ffn == "mixtral_moe" and ffn_bias:
            raise ArgumentError(
                "ffn='mixtral_moe' has bias-free experts and router (as Mixtral); got "
                "ffn_bias=True. Pass ffn_bias=None or False."
            )
        element_count((model_width, hidden_width), "TransformerBlock FFN weight")
    norm_eps = None if norm_eps is None else check_epsilon(norm_eps, NORMS[norm].__name__)
    head_width = check_head_width(head_width, model_width, num_heads)
    element_count((model_width, num_heads * head_width), "TransformerBlock attention weight")
    if positions == "rope" and head_width % 2:  # RoPE rotates pairs of a head's coordinates
        raise WidthError(
            f"RoPE rotates coordinate pairs of each head, so the head width d_h = "
            f"{head_width} must be even (d_h = D / H = {model_width} / {num_heads} unless "
            "head_width is given). Choose D and H with an even quotient."
        )
    return {
        "model_width": model_width,
        "num_heads": num_heads,
        "hidden_width": hidden_width,
        "causal": causal,
        "num_kv_heads": num_kv_heads,
        "window": window,
        "qk_norm": qk_norm,
        "attention_bias": attention_bias,
        "head_width": head_width,
        "rope_theta": rope_theta,
        "rope_scaling": rope_scaling,
        "ffn_bias": ffn_bias,
        "num_experts": num_experts,
        "top_k": top_k,
        "norm_eps": norm_eps,
        "fused": fused,
    }


def check_block_options(
    model_width: int,
    num_heads: int,
    hidden_width: int,
    norm: str,
    order: str,
    ffn: str,
    positions: str | None,
    options: dict[str, Any],
) -> dict[str, Any]:
    """The checked settings of a causal block with these options (what a Decoder builds)."""
    return _block_settings(
        model_width,
        num_heads,
        hidden_width,
        norm=norm,
        order=order,
        ffn=ffn,
        positions=positions,
        causal=True,
        **options,
    )


class TransformerBlock(Module):
    """X₁ = X + Attention(Norm(X)), X₂ = X₁ + FFN(Norm(X₁)) (pre-norm), or the post-norm order.

    Attention options (passed to :class:`MultiHeadAttention`): ``num_kv_heads`` G, ``window``
    w, ``qk_norm``, ``attention_bias`` (q, k, v and o biases), ``head_width`` d_h (None: D/H).
    RoPE: ``rope_theta`` θ and ``rope_scaling`` (a Hugging Face dict, e.g. rope_type "llama3").
    FFN: ``ffn`` "gelu" | "gelu_tanh" | "swiglu" | "mixtral_moe" (with ``num_experts``,
    ``top_k``), ``ffn_bias`` (None: GELU biased, SwiGLU not). ``norm_eps`` ε of both norms
    (None: LayerNorm 1e-5, RMSNorm 1e-6). ``fused`` records attention's core as one entry
    where it can (see MultiHeadAttention), each biased projection the block builds as one
    ``affine`` entry (see fuse_affine) and a bias-free gated FFN it builds as one
    ``fused_gated_ffn`` entry (see fuse_gated). Every default is the block as it was before.
    """

    def __init__(
        self,
        model_width: int,
        num_heads: int,
        hidden_width: int,
        *,
        norm: str = "layer",
        order: str = "pre",
        ffn: str | Module = "gelu",
        positions: str | None = None,
        rope_pairing: str = "interleaved",
        causal: bool = True,
        num_kv_heads: int | None = None,
        window: int | None = None,
        qk_norm: bool = False,
        attention_bias: bool = False,
        head_width: int | None = None,
        rope_theta: float = DEFAULT_ROPE_THETA,
        rope_scaling: dict | None = None,
        ffn_bias: bool | None = None,
        num_experts: int | None = None,
        top_k: int | None = None,
        norm_eps: float | None = None,
        fused: bool = False,
        name: str = "block",
        rng: SplitMix64,
    ) -> None:
        settings = _block_settings(
            model_width,
            num_heads,
            hidden_width,
            norm=norm,
            order=order,
            ffn=ffn,
            positions=positions,
            rope_pairing=rope_pairing,
            causal=causal,
            num_kv_heads=num_kv_heads,
            window=window,
            qk_norm=qk_norm,
            attention_bias=attention_bias,
            head_width=head_width,
            rope_theta=rope_theta,
            rope_scaling=rope_scaling,
            ffn_bias=ffn_bias,
            num_experts=num_experts,
            top_k=top_k,
            norm_eps=norm_eps,
            fused=fused,
        )
        model_width, num_heads = settings["model_width"], settings["num_heads"]
        head_width = settings["head_width"]
        check_name(name, "TransformerBlock")
        rng = generator(rng, "TransformerBlock")
        own_ffn = not isinstance(ffn, Module)  # a ready FFN module is the caller's: not marked
        with rng.transaction() as draft:
            attention = MultiHeadAttention(
                model_width,
                num_heads,
                num_kv_heads=settings["num_kv_heads"],
                causal=settings["causal"],
                window=settings["window"],
                qk_norm=settings["qk_norm"],
                head_width=head_width,
                bias=settings["attention_bias"],
                fused=settings["fused"],
                name=f"{name}.attention",
                rng=draft,
            )
            attention.positions = make_positions(
                positions,
                num_heads,
                head_width,
                rope_pairing,
                settings["rope_theta"],
                settings["rope_scaling"],
            )
            if not isinstance(ffn, Module):
                ffn = make_ffn(
                    ffn,
                    model_width,
                    settings["hidden_width"],
                    settings["ffn_bias"],
                    settings["num_experts"],
                    settings["top_k"],
                    f"{name}.ffn",
                    draft,
                )
        norm_class = NORMS[norm]
        eps = {} if settings["norm_eps"] is None else {"eps": settings["norm_eps"]}
        self._build(
            norm_class(model_width, name=f"{name}.attention_norm", **eps),
            attention,
            norm_class(model_width, name=f"{name}.ffn_norm", **eps),
            ffn,
            order,
            name,
        )
        self.norm_kind = norm
        self.positions_kind = positions
        if settings["fused"]:  # biased projections as one affine entry each (see fuse_affine)
            fuse_affine(attention)
            if own_ffn:
                fuse_affine(ffn)
                fuse_gated(ffn)  # a bias-free gated network as one entry (see fuse_gated)

    @classmethod
    def from_modules(
        cls,
        attention_norm: Module,
        attention: MultiHeadAttention,
        ffn_norm: Module,
        ffn: Module,
        *,
        order: str = "pre",
        name: str = "block",
    ) -> TransformerBlock:
        """A block around existing modules (e.g. loaded with exact fixture weights)."""
        _choice(order, ORDERS, "order")
        if not isinstance(attention, MultiHeadAttention):
            raise ArgumentError(
                f"TransformerBlock attention must be a MultiHeadAttention; got "
                f"{type(attention).__name__}."
            )
        width = attention.model_width
        for label, part in (("attention_norm", attention_norm), ("ffn_norm", ffn_norm)):
            _check_part(part, label, width)
        _check_part(ffn, "ffn", width)
        check_name(name, "block")
        block = cls._assemble(attention_norm, attention, ffn_norm, ffn, order, name)
        block.norm_kind = type(attention_norm).__name__
        block.positions_kind = type(attention.positions).__name__ if attention.positions else None
        return block

    def _build(
        self,
        attention_norm: Module,
        attention: MultiHeadAttention,
        ffn_norm: Module,
        ffn: Module,
        order: str,
        name: str,
    ) -> None:
        Module.__init__(self, name)
        self.model_width = attention.model_width
        self.num_heads = attention.num_heads
        self.order = order
        self.attention_norm = attention_norm  # pre-norm forward order
        self.attention = attention
        self.ffn_norm = ffn_norm
        self.ffn = ffn
        self.last_routing: RoutingReport | None = None

    def __repr__(self) -> str:
        return (
            f"TransformerBlock(D={self.model_width}, H={self.num_heads}, order={self.order!r}, "
            f"ffn={type(self.ffn).__name__}, name={self.name!r})"
        )

    def with_order(self, order: str) -> TransformerBlock:
        """The same parameter objects wired in the other ordering."""
        return TransformerBlock.from_modules(
            self.attention_norm,
            self.attention,
            self.ffn_norm,
            self.ffn,
            order=order,
            name=self.name,
        )

    def _feed_forward(self, x: Tensor) -> Tensor:
        if isinstance(self.ffn, MixtureOfExperts):
            out, self.last_routing = self.ffn(x)
            return out
        return self.ffn(x)

    def stages(
        self, x: Any, key_padding_mask: Any = None, cache: AttentionCache | None = None
    ) -> BlockStages:
        """Run the block, keeping every named stage (per-head weights); attention may cache."""
        x = as_tensor(x, "TransformerBlock input")
        if x.ndim != 3 or x.shape[-1] != self.model_width:
            raise WidthError(
                f"TransformerBlock(D = {self.model_width}) expects input [B, T, "
                f"{self.model_width}]; got shape {x.shape}."
            )
        pre = self.order == "pre"
        attention_input = self.attention_norm(x) if pre else x  # (B, T, D)
        attention_output, weights = self.attention(
            attention_input,
            key_padding_mask=key_padding_mask,
            average_weights=False,
            cache=cache,
        )
        x1 = x + attention_output if pre else self.attention_norm(x + attention_output)
        ffn_input = self.ffn_norm(x1) if pre else x1
        ffn_output = self._feed_forward(ffn_input)
        output = x1 + ffn_output if pre else self.ffn_norm(x1 + ffn_output)
        return BlockStages(
            attention_input, attention_output, weights, x1, ffn_input, ffn_output, output
        )

    def forward(
        self,
        x: Any,
        key_padding_mask: Any = None,
        average_weights: bool = True,
        cache: AttentionCache | None = None,
    ) -> tuple[Tensor, Tensor]:
        """(output [B, T, D], attention weights [B, T, T] averaged over heads or [B, H, T, T])."""
        average_weights = as_flag(average_weights, "average_weights")
        s = self.stages(x, key_padding_mask, cache)
        return s.output, (s.weights.mean(axis=1) if average_weights else s.weights)


def block_parameter_names(block: TransformerBlock) -> list[str]:
    """The block's parameter names in forward order (a convenience for tables)."""
    return [n for n, _ in block.named_parameters()]


def shape_of(t: Tensor | np.ndarray) -> tuple[int, ...]:
    """The shape of a tensor or array, as a tuple of ints."""
    return tuple(int(n) for n in t.shape)
