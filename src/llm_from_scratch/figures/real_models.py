"""Chapter 13's figure: each family's block as a difference from the book's own block.

:func:`block_parts` reads a built :class:`~llm_from_scratch.nn.Decoder` (its modules, not its
config) into six short descriptions: norm, positions, attention sharing, feed-forward, biases
and the head. :func:`differences_figure` draws one row per model and one column per part, a
cell filled where the part differs from the first row's (the book's block) and left quiet where
it is the same.
"""

from __future__ import annotations

from typing import Any

from ..nn.decoder import Decoder
from ..nn.norms import LayerNorm
from .style import INK, LIGHT, PALETTE, BookFigure, new_figure

PARTS = ("norm", "positions", "attention", "feed-forward", "biases", "head")


def _positions(model: Decoder) -> str:
    if model.positions == "learned":
        return f"learned table ({model.max_positions} rows)"
    rope = model.blocks[0].attention.positions
    if model.positions != "rope" or rope is None:
        return str(model.positions)
    text = f"RoPE {rope.pairing}, θ = {rope.theta:g}"
    if rope.scaling is not None:
        text += f", {rope.scaling['rope_type']} ×{rope.scaling['factor']:g}"
    return text


def _attention(model: Decoder) -> str:
    a = model.blocks[0].attention
    text = f"H = {a.num_heads}, G = {a.num_kv_heads}"
    if a.head_width * a.num_heads != a.model_width:
        text += f", d_h = {a.head_width}"
    if a.window is not None:
        text += f", window {a.window}"
    if a.qk_norm:
        text += ", QK-norm"
    return text


def _feed_forward(model: Decoder) -> str:
    ffn = model.blocks[0].ffn
    kind = type(ffn).__name__
    if kind == "FeedForward":
        name = {"gelu": "GELU", "gelu_tanh": "GELU tanh"}.get(ffn.activation, ffn.activation)
        return f"{name} {ffn.model_width}→{ffn.hidden_width}"
    if kind == "SparseMoE":
        width = ffn.experts[0].hidden_width
        return f"MoE top-{ffn.top_k} of {ffn.num_experts} SwiGLU ({width})"
    return f"SwiGLU {ffn.hidden_width}"


def _biases(model: Decoder) -> str:
    names = [n for n, _ in model.named_parameters() if ".blocks.0." in n and n.endswith(".bias")]
    where = []
    if any(".attention." in n for n in names):
        where.append("attention")
    if any(".ffn." in n and "_norm" not in n for n in names):
        where.append("FFN")
    return " + ".join(where) if where else "none"


def block_parts(model: Decoder) -> dict[str, str]:
    """{part: description} for the six parts a family changes, read from the model's modules."""
    norm = model.blocks[0].attention_norm
    kind = "LayerNorm" if isinstance(norm, LayerNorm) else "RMSNorm"
    return {
        "norm": f"{kind}, ε = {norm.eps:g}",
        "positions": _positions(model),
        "attention": _attention(model),
        "feed-forward": _feed_forward(model),
        "biases": _biases(model),
        "head": "tied to embedding" if model.tie_embeddings else "separate",
    }


def differing(rows: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """{model: parts whose design differs from the first row's} (sizes and ε aside)."""
    names = list(rows)
    base = rows[names[0]]
    out = {}
    for name in names:
        out[name] = [p for p in PARTS if _design(p, rows[name][p]) != _design(p, base[p])]
    return out


def _design(part: str, text: str) -> str:
    """What counts as a design choice in each part: the kind, not the sizes."""
    if part == "norm":
        return text.split(",")[0]
    if part == "feed-forward":
        return text.rsplit(" ", 1)[0] if not text.startswith("MoE") else "MoE"
    if part == "positions":
        return text.split(",")[0] if "llama3" not in text else text.split(",")[0] + " llama3"
    if part == "attention":
        heads = text.split(",")[:2]
        shared = (
            "G < H" if heads[0].split("=")[1].strip() != heads[1].split("=")[1].strip() else ""
        )
        extras = [t.split()[0] for t in text.split(", ")[2:]]
        return " ".join([shared, *extras])
    return text


def differences_figure(rows: dict[str, dict[str, str]]) -> BookFigure:
    """One row per model, one column per part; filled cells differ from the first row."""
    names = list(rows)
    changed = differing(rows)
    fig, ax = new_figure(6.4, 0.55 * len(names) + 0.9)
    ax.set_xlim(0, len(PARTS))
    ax.set_ylim(len(names), -0.8)
    ax.axis("off")
    for j, part in enumerate(PARTS):
        ax.text(j + 0.5, -0.4, part, ha="center", va="center", fontsize=8.5, weight="bold")
    for i, name in enumerate(names):
        ax.text(-0.05, i + 0.5, name, ha="right", va="center", fontsize=8.5, weight="bold")
        for j, part in enumerate(PARTS):
            differs = part in changed[name]
            ax.add_patch(
                _cell(j, i, PALETTE.sky_blue if differs else LIGHT if i == 0 else "white")
            )
            ax.text(
                j + 0.5,
                i + 0.5,
                _wrap(rows[name][part]),
                ha="center",
                va="center",
                fontsize=8,
                color=INK,
            )
    fig.subplots_adjust(left=0.14, right=0.99, top=0.99, bottom=0.01)
    return fig


def _cell(x: int, y: int, colour: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.02, y + 0.04), 0.96, 0.92, facecolor=colour, edgecolor=INK, lw=0.5)


def _wrap(text: str, width: int = 15) -> str:
    """Break a description into lines of about ``width`` characters at spaces."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "\n".join(lines)
