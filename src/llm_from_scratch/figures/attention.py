"""Figures for multi-head attention: the split/merge path, where values land, weight heat maps.

Each figure has a pure function that computes what it shows (tested without drawing) and a
drawing function that returns a matplotlib ``Figure``:

- :func:`split_path_stages` / :func:`split_path_figure` — [B,T,D] → [B,T,H,d_h] → [B,H,T,d_h]
  → attention per head → [B,T,H,d_h] → [B,T,D], drawn with the general
  :func:`~llm_from_scratch.figures.shapes.shape_diagram`, the moved axes marked;
- :func:`head_split_comparison` / :func:`head_split_markdown` / :func:`head_split_figure` — the
  values 0, 1, 2, … of a projection, placed by the right split (reshape, then permute) and by a
  wrong direct reshape, coloured by the token each value came from;
- :func:`heatmap_cells` / :func:`attention_heatmap_figure` — attention weights [L,S] with their
  values written in and blocked entries marked.

The head split itself is done by the package (``nn.split_heads``), never re-derived here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError
from ..nn.attention import split_heads
from ..validate import as_float_array, non_negative_int, positive_int
from .shapes import shape_diagram
from .style import LIGHT, MUTED, PALETTE, new_figure

__all__ = [
    "HeadSplitComparison",
    "ShapeStage",
    "attention_heatmap_figure",
    "head_split_comparison",
    "head_split_figure",
    "head_split_markdown",
    "heatmap_cells",
    "split_path_figure",
    "split_path_stages",
    "token_colours",
]

# One colour per token (Okabe–Ito, strongest contrasts first), reused cyclically.
_TOKEN_COLOURS = (
    PALETTE.sky_blue,
    PALETTE.orange,
    PALETTE.bluish_green,
    PALETTE.reddish_purple,
    PALETTE.yellow,
    PALETTE.blue,
    PALETTE.vermillion,
    "#BBBBBB",
)


def token_colours(count: int) -> list[str]:
    """A colour for each of ``count`` tokens (cycling through eight colour-blind-safe ones)."""
    return [_TOKEN_COLOURS[t % len(_TOKEN_COLOURS)] for t in range(count)]


# --- the split / merge path ------------------------------------------------------------------


@dataclass(frozen=True)
class ShapeStage:
    """One step of the path: what was done, the resulting axis names and lengths."""

    label: str
    axes: tuple[str, ...]
    shape: tuple[int, ...]

    @property
    def shape_text(self) -> str:
        return "[" + ", ".join(str(n) for n in self.shape) + "]"


def split_path_stages(batch: int, tokens: int, width: int, num_heads: int) -> list[ShapeStage]:
    """The six shapes from a projection [B,T,D] through the heads and back to [B,T,D]."""
    batch = non_negative_int(batch, "batch")
    tokens = non_negative_int(tokens, "tokens")
    width = non_negative_int(width, "width")
    num_heads = positive_int(num_heads, "num_heads")
    if width % num_heads:
        raise ShapeError(f"width {width} is not divisible by num_heads {num_heads}.")
    b, t, d, h = batch, tokens, width, num_heads
    dh = d // h
    return [
        ShapeStage("Q = XW_Q", ("B", "T", "D"), (b, t, d)),
        ShapeStage("reshape", ("B", "T", "H", "d_h"), (b, t, h, dh)),
        ShapeStage("permute(0,2,1,3)", ("B", "H", "T", "d_h"), (b, h, t, dh)),
        ShapeStage("heads' outputs", ("B", "H", "T", "d_h"), (b, h, t, dh)),
        ShapeStage("permute(0,2,1,3)", ("B", "T", "H", "d_h"), (b, t, h, dh)),
        ShapeStage("reshape (join)", ("B", "T", "D"), (b, t, d)),
    ]


def split_path_figure(stages: Sequence[ShapeStage], *, title: str | None = None) -> Figure:
    """Draw consecutive stages with ``figures.shape_diagram``, marking the axes each step moves."""
    if not stages:
        raise ArgumentError("split_path_figure needs at least one stage.")
    return shape_diagram(
        [(stage.label, stage.shape) for stage in stages],
        axis_labels=[stage.axes for stage in stages],
        highlight_axis="changed",
        title=title,
    )


# --- which values land where -----------------------------------------------------------------


@dataclass(frozen=True)
class HeadSplitComparison:
    """Values 0..B·T·D−1 laid out as [B,T,D], then split right and reshaped wrongly.

    ``right`` and ``wrong`` are [B,H,T,d_h]; ``right_tokens`` / ``wrong_tokens`` give, for each
    entry, the token the value came from (value // D mod T).
    """

    batch: int
    tokens: int
    width: int
    num_heads: int
    values: np.ndarray
    right: np.ndarray
    wrong: np.ndarray

    @property
    def head_width(self) -> int:
        return self.width // self.num_heads

    def source_token(self, values: np.ndarray) -> np.ndarray:
        return (values.astype(np.int64) // self.width) % self.tokens

    @property
    def right_tokens(self) -> np.ndarray:
        return self.source_token(self.right)

    @property
    def wrong_tokens(self) -> np.ndarray:
        return self.source_token(self.wrong)

    @property
    def equal(self) -> bool:
        """Whether the wrong reshape happens to give the same values (only if H = 1 or T = 1)."""
        return bool(np.array_equal(self.right, self.wrong))

    @property
    def mixed_slots(self) -> int:
        """How many wrong (batch, head, slot) rows hold a value of a token other than the slot."""
        slot = np.arange(self.tokens)[None, None, :, None]
        return int(np.any(self.wrong_tokens != slot, axis=-1).sum())


def head_split_comparison(
    batch: int, tokens: int, width: int, num_heads: int
) -> HeadSplitComparison:
    """Lay out 0, 1, 2, … as [B,T,D]; split with ``nn.split_heads`` and by a direct reshape."""
    split_path_stages(batch, tokens, width, num_heads)  # validates the arguments
    values = np.arange(batch * tokens * width, dtype=np.float64).reshape(batch, tokens, width)
    right = split_heads(Tensor(values), num_heads).value
    wrong = Tensor(values).reshape(batch, num_heads, tokens, width // num_heads).value
    return HeadSplitComparison(batch, tokens, width, num_heads, values, right, wrong)


def _values_text(row: np.ndarray) -> str:
    return "(" + ", ".join(str(int(v)) for v in row) + ")"


def head_split_markdown(comparison: HeadSplitComparison, batch_index: int = 0) -> str:
    """Markdown table: per head and slot, the values each layout puts there and their tokens."""
    c = comparison
    if not 0 <= batch_index < c.batch:
        raise ArgumentError(f"batch_index must be in [0, {c.batch}); got {batch_index}.")
    lines = [
        "| head | slot | right split: values | from token "
        "| direct reshape: values | from tokens |",
        "| ---: | ---: | --- | ---: | --- | --- |",
    ]
    for h in range(c.num_heads):
        for t in range(c.tokens):
            right = c.right[batch_index, h, t]
            wrong = c.wrong[batch_index, h, t]
            right_tokens = sorted(set(c.source_token(right).tolist()))
            wrong_tokens = sorted(set(c.source_token(wrong).tolist()))
            lines.append(
                f"| {h} | {t} | {_values_text(right)} | "
                f"{', '.join(map(str, right_tokens))} | {_values_text(wrong)} | "
                f"{', '.join(map(str, wrong_tokens))} |"
            )
    return "\n".join(lines)


def _grid(ax, values: np.ndarray, tokens: np.ndarray, colours: list[str], title: str) -> None:
    """One head's [T, d_h] block: each cell shows its value, coloured by its source token."""
    rows, cols = values.shape
    ax.set_xlim(0, max(cols, 1))
    ax.set_ylim(max(rows, 1), 0)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([r + 0.5 for r in range(rows)], [f"slot {r}" for r in range(rows)])
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    for r in range(rows):
        for k in range(cols):
            ax.add_patch(
                Rectangle(
                    (k, r),
                    1,
                    1,
                    facecolor=colours[int(tokens[r, k])],
                    edgecolor="white",
                    linewidth=1.2,
                )
            )
            ax.text(k + 0.5, r + 0.5, str(int(values[r, k])), ha="center", va="center")
    ax.set_title(title, fontsize=9)


def head_split_figure(comparison: HeadSplitComparison, batch_index: int = 0) -> Figure:
    """Head blocks, right split above and direct reshape below, cells coloured by token."""
    c = comparison
    if not 0 <= batch_index < c.batch:
        raise ArgumentError(f"batch_index must be in [0, {c.batch}); got {batch_index}.")
    colours = token_colours(c.tokens)
    width = 1.0 + c.num_heads * (0.45 * c.head_width + 0.9)
    height = 1.2 + 2 * (0.45 * c.tokens + 0.5)
    fig, axes = new_figure(max(width, 4.0), height, nrows=2, ncols=c.num_heads, squeeze=False)
    fig.set_layout_engine("constrained")
    for h in range(c.num_heads):
        _grid(
            axes[0, h],
            c.right[batch_index, h],
            c.right_tokens[batch_index, h],
            colours,
            f"right: head {h}",
        )
        _grid(
            axes[1, h],
            c.wrong[batch_index, h],
            c.wrong_tokens[batch_index, h],
            colours,
            f"direct reshape: 'head' {h}",
        )
    handles = [
        Rectangle((0, 0), 1, 1, facecolor=colours[t], edgecolor="white") for t in range(c.tokens)
    ]
    fig.legend(
        handles,
        [f"token {t}" for t in range(c.tokens)],
        loc="outside lower center",
        ncols=min(c.tokens, 8),
    )
    fig.suptitle(
        f"Where the values of [{c.batch}, {c.tokens}, {c.width}] land with H = {c.num_heads}",
        fontsize=10,
    )
    return fig


# --- attention-weight heat maps --------------------------------------------------------------


def heatmap_cells(
    weights: np.ndarray, blocked: np.ndarray | None = None, digits: int = 2
) -> list[list[str]]:
    """The text written in each cell of an [L, S] heat map: the weight, or '×' where blocked."""
    w = as_float_array(weights, "weights", error=ShapeError)
    if w.ndim != 2:
        raise ShapeError(f"weights must be [L, S]; got shape {w.shape}.")
    b = np.zeros(w.shape, bool) if blocked is None else np.asarray(blocked, dtype=bool)
    if b.shape != w.shape:
        raise ShapeError(f"blocked must have the weights' shape {w.shape}; got {b.shape}.")
    return [
        ["×" if b[i, j] else f"{w[i, j]:.{digits}f}" for j in range(w.shape[1])]
        for i in range(w.shape[0])
    ]


def attention_heatmap_figure(
    panels: Sequence[tuple[str, np.ndarray, np.ndarray | None]],
    *,
    title: str | None = None,
) -> Figure:
    """A heat map per (title, weights [L,S], blocked [L,S] or None): queries down, keys across."""
    if not panels:
        raise ArgumentError("attention_heatmap_figure needs at least one panel.")
    cells = [heatmap_cells(w, b) for _, w, b in panels]
    widest = max(len(c[0]) if c else 1 for c in cells)
    tallest = max(len(c) for c in cells)
    fig, axes = new_figure(
        0.5 + len(panels) * (0.5 * widest + 0.8),
        1.3 + 0.5 * tallest,
        ncols=len(panels),
        squeeze=False,
    )
    fig.set_layout_engine("constrained")
    image = None
    for ax, (label, weights, _), text in zip(axes[0], panels, cells, strict=True):
        w = as_float_array(weights, "weights", error=ShapeError)
        image = ax.imshow(w, cmap="cividis", vmin=0.0, vmax=1.0)
        rows, cols = w.shape
        for i in range(rows):
            for j in range(cols):
                if text[i][j] == "×":
                    ax.add_patch(
                        Rectangle(
                            (j - 0.5, i - 0.5),
                            1,
                            1,
                            facecolor="white",
                            edgecolor=LIGHT,
                            hatch="///",
                            linewidth=0.5,
                        )
                    )
                    colour = MUTED
                else:
                    colour = "black" if w[i, j] > 0.55 else "white"
                ax.text(j, i, text[i][j], ha="center", va="center", fontsize=8, color=colour)
        ax.set_xticks(range(cols))
        ax.set_yticks(range(rows))
        ax.set_xlabel("key j", fontsize=9)
        ax.set_ylabel("query i", fontsize=9)
        ax.set_title(label, fontsize=9)
    fig.colorbar(image, ax=list(axes[0]), label="weight", shrink=0.8)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
