"""Parameter budgets of a stack of transformer blocks, counted from the widths alone.

With model width D and feed-forward width D_ff = m·D (m = 4 by default), one block holds

- attention: four D×D projections (queries, keys, values, output) = 4D²,
- a dense FFN: W₁ [D, D_ff] and W₂ [D_ff, D] = 2·D·D_ff = 8D² when m = 4,
- a gated FFN (GLU, SwiGLU): gate, up [D, H] and down [H, D] = 3·D·H,

so a dense block is 12D² weights before biases and normalization parameters. A vocabulary of V
tokens adds a V×D embedding table and, unless the output head reuses (ties) it, V·D more. These
are counts of scalars, not bytes and not time.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from ..errors import ArgumentError
from ..validate import as_flag, positive_int

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
) -> ParameterBudget:
    """Count the weights of ``num_layers`` blocks (and optionally the vocabulary tables).

    ``ffn_kind="dense"`` uses D_ff = m·D (two matrices); ``"gated"`` uses three matrices with
    the hidden width that matches the dense budget (:func:`matched_gated_hidden_width`) unless
    ``ffn_hidden_width`` is given. ``biases=True`` adds one bias per projection output (attention
    4D; dense FFN D_ff + D; gated 2H + D). ``norm`` adds two norms per block (LayerNorm 2D each,
    RMSNorm D each). Without ``vocab_size`` the embedding and head count 0.
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
    if ffn_hidden_width is not None:
        hidden = positive_int(ffn_hidden_width, "ffn_hidden_width")
    elif ffn_kind == "dense":
        hidden = dense_hidden_width(model_width, ffn_multiplier)
    else:
        hidden = matched_gated_hidden_width(model_width, ffn_multiplier)

    D = model_width
    attention = 4 * D * D + (4 * D if biases else 0)
    if ffn_kind == "dense":
        ffn = 2 * D * hidden + ((hidden + D) if biases else 0)
    else:
        ffn = 3 * D * hidden + ((2 * hidden + D) if biases else 0)
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
        total=stack + embedding + head,
    )
