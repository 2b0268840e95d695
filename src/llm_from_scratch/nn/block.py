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
from ..validate import as_flag, as_width, element_count, generator, positive_int
from .attention import AttentionCache, MultiHeadAttention, check_kv_heads, check_window
from .feedforward import FeedForward
from .module import Module, as_tensor, check_name, check_part
from .moe import MixtureOfExperts, RoutingReport
from .norms import LayerNorm, RMSNorm
from .positions import PAIRINGS, ALiBiPositions, RoPEPositions
from .swiglu import SwiGLU

NORMS = {"layer": LayerNorm, "rms": RMSNorm}
ORDERS = ("pre", "post")
FFN_KINDS = ("gelu", "swiglu")
POSITIONS = (None, "rope", "alibi")


def _choice(value: Any, options: tuple, label: str) -> Any:
    if not isinstance(value, str | None) or value not in options:
        raise ArgumentError(f"{label} must be one of {list(options)}; got {value!r}.")
    return value


def _check_part(module: Any, label: str, model_width: int) -> None:
    """A block part must be a Module that reads and returns [..., model_width]."""
    why = "because a residual adds its output to its input"
    check_part(module, f"TransformerBlock {label}", model_width, why)


def make_positions(kind: str | None, num_heads: int, head_width: int, pairing: str) -> Any:
    """The attention position scheme for ``kind``: None, RoPE on q and k, or an ALiBi bias."""
    if kind == "rope":
        return RoPEPositions(head_width, pairing=pairing)
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


class TransformerBlock(Module):
    """X₁ = X + Attention(Norm(X)), X₂ = X₁ + FFN(Norm(X₁)) (pre-norm), or the post-norm order."""

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
        name: str = "block",
        rng: SplitMix64,
    ) -> None:
        model_width = as_width(model_width, "TransformerBlock model_width")
        num_heads = positive_int(num_heads, "num_heads")
        hidden_width = as_width(hidden_width, "TransformerBlock hidden_width")
        num_kv_heads = check_kv_heads(num_kv_heads, num_heads)
        qk_norm = as_flag(qk_norm, "qk_norm")
        _choice(norm, tuple(NORMS), "norm")
        _choice(order, ORDERS, "order")
        _choice(positions, POSITIONS, "positions")
        _choice(rope_pairing, PAIRINGS, "rope_pairing")
        causal = as_flag(causal, "causal")
        window = check_window(window, causal)
        if isinstance(ffn, Module):
            _check_part(ffn, "ffn", model_width)
        else:
            _choice(ffn, FFN_KINDS, "ffn")
            element_count((model_width, hidden_width), "TransformerBlock FFN weight")
        check_name(name, "TransformerBlock")
        rng = generator(rng, "TransformerBlock")
        if positions == "rope":  # RoPE rotates pairs of a head's coordinates: d_h must be even
            head_width = model_width // num_heads if model_width % num_heads == 0 else None
            if head_width is not None and head_width % 2:
                raise WidthError(
                    f"RoPE rotates coordinate pairs of each head, so the head width d_h = D / H = "
                    f"{model_width} / {num_heads} = {head_width} must be even. Choose D and H "
                    "with an even quotient."
                )
        with rng.transaction() as draft:
            attention = MultiHeadAttention(
                model_width,
                num_heads,
                num_kv_heads=num_kv_heads,
                causal=causal,
                window=window,
                qk_norm=qk_norm,
                name=f"{name}.attention",
                rng=draft,
            )
            scheme = make_positions(positions, num_heads, attention.head_width, rope_pairing)
            attention.positions = scheme
            if ffn == "gelu":
                ffn = FeedForward(model_width, hidden_width, name=f"{name}.ffn", rng=draft)
            elif ffn == "swiglu":
                ffn = SwiGLU(model_width, hidden_width, model_width, name=f"{name}.ffn", rng=draft)
        norm_class = NORMS[norm]
        self._build(
            norm_class(model_width, name=f"{name}.attention_norm"),
            attention,
            norm_class(model_width, name=f"{name}.ffn_norm"),
            ffn,
            order,
            name,
        )
        self.norm_kind = norm
        self.positions_kind = positions

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
