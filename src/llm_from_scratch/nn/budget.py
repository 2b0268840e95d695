"""Parameter budgets of a stack of transformer blocks, counted from the widths alone.

With model width D and feed-forward width D_ff = m·D (m = 4 by default), one block holds

- attention: four D×D projections (queries, keys, values, output) = 4D²,
- a dense FFN: W₁ [D, D_ff] and W₂ [D_ff, D] = 2·D·D_ff = 8D² when m = 4,
- a gated FFN (GLU, SwiGLU): gate, up [D, H] and down [H, D] = 3·D·H,

so a dense block is 12D² weights before biases and normalization parameters. A vocabulary of V
tokens adds a V×D embedding table and, unless the output head reuses (ties) it, V·D more. These
are counts of scalars, not bytes and not time.

Current families change the attention count: with H query heads of width d_h (Qwen3 sets d_h
apart from D/H) and G key/value heads, attention holds D·H·d_h (W_Q) + 2·D·G·d_h (W_K, W_V) +
H·d_h·D (W_O), plus H·d_h + 2·G·d_h + D with biases and 2·d_h with QK-norm gains. A Mixtral
mixture of E gated experts holds E·3·D·D_ff and a router D·E; learned positions add a P×D table.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from ..errors import ArgumentError
from ..validate import as_flag, positive_int
from .attention import check_head_width, check_kv_heads

FeedForwardKind = Literal["dense", "gated"]
NormKind = Literal["layernorm", "rmsnorm"]

#: Scalars per width-D normalization layer: LayerNorm has gain and bias, RMSNorm a gain only.
NORM_PARAMETERS_PER_FEATURE = {"layernorm": 2, "rmsnorm": 1}


def _multiplier(value: Any) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ArgumentError(f"ffn_multiplier must be a positive number; got {value!r}.")
    if not np.isfinite(value) or value <= 0:
        raise ArgumentError(f"ffn_multiplier must be a positive number; got {value!r}.")
    return Fraction(value).limit_denominator(10**6)


def dense_hidden_width(model_width: int, ffn_multiplier: float = 4) -> int:
    """D_ff = m·D for a dense FFN; m·D must be a whole number of features."""
    model_width = positive_int(model_width, "model_width")
    width = _multiplier(ffn_multiplier) * model_width
    if width.denominator != 1:
        raise ArgumentError(
            f"ffn_multiplier × model_width must be a whole number of features; "
            f"got {float(ffn_multiplier):g} × {model_width} = {float(width):g}. "
            "Pass ffn_hidden_width= explicitly."
        )
    return int(width)


def matched_gated_hidden_width(model_width: int, ffn_multiplier: float = 4) -> int:
    """H with 3·D·H closest to the dense 2·D·(m·D): H = round(2mD / 3), ties rounded up."""
    model_width = positive_int(model_width, "model_width")
    exact = Fraction(2) * _multiplier(ffn_multiplier) * model_width / 3
    return max(1, int(exact + Fraction(1, 2)))  # floor(x + ½): nearest, halves upward


@dataclass(frozen=True)
class ParameterBudget:
    """Scalar counts per block, for the stack and for the vocabulary tables."""

    model_width: int
    ffn_hidden_width: int
    ffn_kind: str
    num_layers: int
    vocab_size: int | None
    tie_embeddings: bool
    biases: bool
    norm: str | None
    attention_per_block: int
    ffn_per_block: int
    norms_per_block: int
    per_block: int
    stack: int
    embedding: int
    head: int
    total: int
    position_table: int = 0

    def rows(self) -> list[tuple[str, int]]:
        """(label, count) pairs in reading order, for a table."""
        rows = [
            ("attention per block", self.attention_per_block),
            ("FFN per block", self.ffn_per_block),
        ]
        if self.norm is not None:
            rows.append(("norms per block", self.norms_per_block))
        rows += [
            ("one block", self.per_block),
            (f"{self.num_layers} blocks", self.stack),
        ]
        if self.position_table:
            rows.append(("position table", self.position_table))
        if self.vocab_size is not None:
            rows.append(("token embedding", self.embedding))
            rows.append(("output head" + (" (tied)" if self.tie_embeddings else ""), self.head))
            rows.append(("total", self.total))
        return rows


def parameter_budget(
    model_width: int,
    ffn_multiplier: float = 4,
    *,
    num_layers: int = 12,
    vocab_size: int | None = None,
    tie_embeddings: bool = True,
    ffn_kind: FeedForwardKind = "dense",
    ffn_hidden_width: int | None = None,
    biases: bool = False,
    norm: NormKind | None = None,
    num_heads: int | None = None,
    num_kv_heads: int | None = None,
    head_width: int | None = None,
    qk_norm: bool = False,
    attention_bias: bool | None = None,
    ffn_bias: bool | None = None,
    num_experts: int | None = None,
    max_positions: int | None = None,
) -> ParameterBudget:
    """Count the weights of ``num_layers`` blocks (and optionally the vocabulary tables).

    ``ffn_kind="dense"`` uses D_ff = m·D (two matrices); ``"gated"`` uses three matrices with
    the hidden width that matches the dense budget (:func:`matched_gated_hidden_width`) unless
    ``ffn_hidden_width`` is given. ``biases=True`` adds one bias per projection output (attention
    4D; dense FFN D_ff + D; gated 2H + D). ``norm`` adds two norms per block (LayerNorm 2D each,
    RMSNorm D each). Without ``vocab_size`` the embedding and head count 0.

    ``num_heads`` H with ``num_kv_heads`` G (default H) and ``head_width`` d_h (default D/H)
    count grouped-query attention; ``qk_norm`` adds 2·d_h gains; ``attention_bias`` and
    ``ffn_bias`` (default: ``biases``) set the two kinds of bias apart; ``num_experts`` E (gated
    only) counts E experts and a D×E router; ``max_positions`` P a learned P×D position table.
    """
    model_width = positive_int(model_width, "model_width")
    num_layers = positive_int(num_layers, "num_layers")
    if vocab_size is not None:
        vocab_size = positive_int(vocab_size, "vocab_size")
    if ffn_kind not in ("dense", "gated"):
        raise ArgumentError(f"ffn_kind must be 'dense' or 'gated'; got {ffn_kind!r}.")
    if norm is not None and norm not in NORM_PARAMETERS_PER_FEATURE:
        raise ArgumentError(f"norm must be None, 'layernorm' or 'rmsnorm'; got {norm!r}.")
    tie_embeddings = as_flag(tie_embeddings, "tie_embeddings")
    biases = as_flag(biases, "biases")
    qk_norm = as_flag(qk_norm, "qk_norm")
    attention_bias = (
        biases if attention_bias is None else as_flag(attention_bias, "attention_bias")
    )
    ffn_bias = biases if ffn_bias is None else as_flag(ffn_bias, "ffn_bias")
    heads = None if num_heads is None else positive_int(num_heads, "num_heads")
    if heads is None and (num_kv_heads is not None or head_width is not None or qk_norm):
        raise ArgumentError(
            "num_kv_heads, head_width and qk_norm count per head, so they need num_heads; got "
            "num_heads=None. Pass num_heads."
        )
    if heads is not None:
        kv_heads = check_kv_heads(num_kv_heads, heads)
        d_h = check_head_width(head_width, model_width, heads)
    experts = None if num_experts is None else positive_int(num_experts, "num_experts")
    if experts is not None and ffn_kind != "gated":
        raise ArgumentError(
            "num_experts counts Mixtral's gated (SwiGLU) experts; got ffn_kind="
            f"{ffn_kind!r}. Pass ffn_kind='gated'."
        )
    positions = 0 if max_positions is None else positive_int(max_positions, "max_positions")
    if ffn_hidden_width is not None:
        hidden = positive_int(ffn_hidden_width, "ffn_hidden_width")
    elif ffn_kind == "dense":
        hidden = dense_hidden_width(model_width, ffn_multiplier)
    else:
        hidden = matched_gated_hidden_width(model_width, ffn_multiplier)

    D = model_width
    inner, kv = (D, D) if heads is None else (heads * d_h, kv_heads * d_h)
    attention = 2 * D * inner + 2 * D * kv + ((inner + 2 * kv + D) if attention_bias else 0)
    attention += 2 * d_h if qk_norm else 0
    if ffn_kind == "dense":
        ffn = 2 * D * hidden + ((hidden + D) if ffn_bias else 0)
    else:
        ffn = 3 * D * hidden + ((2 * hidden + D) if ffn_bias else 0)
    if experts is not None:
        ffn = experts * ffn + D * experts  # E experts and the router W_r [D, E]
    norms = 0 if norm is None else 2 * NORM_PARAMETERS_PER_FEATURE[norm] * D
    per_block = attention + ffn + norms
    stack = num_layers * per_block
    embedding = 0 if vocab_size is None else vocab_size * D
    head = 0 if (vocab_size is None or tie_embeddings) else vocab_size * D
    return ParameterBudget(
        model_width=D,
        ffn_hidden_width=hidden,
        ffn_kind=ffn_kind,
        num_layers=num_layers,
        vocab_size=vocab_size,
        tie_embeddings=tie_embeddings,
        biases=biases,
        norm=norm,
        attention_per_block=attention,
        ffn_per_block=ffn,
        norms_per_block=norms,
        per_block=per_block,
        stack=stack,
        embedding=embedding,
        head=head,
        total=stack + embedding + head + positions * D,
        position_table=positions * D,
    )
