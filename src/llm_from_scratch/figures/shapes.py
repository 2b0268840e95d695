"""Tensor shapes drawn left to right: one box per axis, axes named, the changing axis marked.

:func:`shape_layout` is the pure part (positions, labels, which axes changed) and is unit-tested;
:func:`shape_diagram` only draws it. The Linear chapter's "keep the positions, change the
feature width" ``(1, 2, 2) -> (1, 2, 3)`` and the head split ``(2, 4, 8) -> (2, 4, 2, 4) ->
(2, 2, 4, 4)`` are both one call.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, Rectangle

from ..errors import ArgumentError, RankError, ShapeError
from .style import INK, LIGHT, MUTED, PALETTE, BookFigure, book_style, new_figure

__all__ = [
    "AxisBox",
    "ShapeArrow",
    "ShapeLayout",
    "StageBlock",
    "changed_axes",
    "shape_diagram",
    "shape_layout",
]

Highlight = int | Literal["changed"] | None

# Layout units; one unit is drawn UNIT_INCHES wide (less when the diagram would be too wide).
BOX_WIDTH = 1.0
BOX_HEIGHT = 0.8
BOX_GAP = 0.12  # between the axes of one stage
ARROW_GAP = 1.0  # between stages, room for the arrow
CAPTION_CHAR = 0.16  # approximate width of one caption character (10 pt)
SHAPE_CHAR = 0.15  # approximate width of one character of the shape text (9 pt monospace)
SHAPE_TEXT_Y = 0.2
CAPTION_Y = 0.6
BOX_BOTTOM = 0.95
LABEL_Y = BOX_BOTTOM + BOX_HEIGHT + 0.25
HEIGHT = LABEL_Y + 0.3
UNIT_INCHES = 0.6
MAX_WIDTH_INCHES = 6.5


@dataclass(frozen=True)
class AxisBox:
    """One axis of one stage: its name, its length, where its box sits and how it is marked."""

    stage: int
    axis: int
    label: str
    length: int
    x: float
    y: float
    width: float
    height: float
    changed: bool  # differs from the previous stage (the first stage: from the next one)
    highlighted: bool

    @property
    def center(self) -> tuple[float, float]:
        """The middle of the box."""
        return (self.x + self.width / 2, self.y + self.height / 2)


@dataclass(frozen=True)
class StageBlock:
    """One stage: caption, shape, horizontal extent and its axis boxes (none for a scalar)."""

    index: int
    caption: str
    shape: tuple[int, ...]
    shape_text: str
    x: float
    width: float
    boxes: tuple[AxisBox, ...]

    @property
    def center_x(self) -> float:
        """Horizontal middle of the stage."""
        return self.x + self.width / 2


@dataclass(frozen=True)
class ShapeArrow:
    """An arrow from one stage to the next, at box mid-height."""

    x_start: float
    x_end: float
    y: float


@dataclass(frozen=True)
class ShapeLayout:
    """Everything :func:`shape_diagram` draws, in layout units (origin bottom left)."""

    stages: tuple[StageBlock, ...]
    arrows: tuple[ShapeArrow, ...]
    width: float
    height: float

    def highlighted(self) -> list[list[int]]:
        """For each stage, the axes drawn highlighted."""
        return [[box.axis for box in stage.boxes if box.highlighted] for stage in self.stages]


def _shape_text(shape: tuple[int, ...]) -> str:
    """The shape as Python prints a tuple."""
    return f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"


def _check_stages(
    stages: Sequence[tuple[str, Sequence[int]]],
) -> list[tuple[str, tuple[int, ...]]]:
    """Validated (caption, shape) pairs."""
    if isinstance(stages, str) or not isinstance(stages, Sequence) or len(stages) == 0:
        raise ArgumentError(
            f"stages must be a non-empty list of (caption, shape) pairs; got {stages!r}."
        )
    checked = []
    for stage in stages:
        if not (isinstance(stage, tuple | list) and len(stage) == 2 and isinstance(stage[0], str)):
            raise ArgumentError(
                f"Each stage is a (caption, shape) pair such as ('x', (1, 2, 2)); got {stage!r}."
            )
        caption, shape = stage
        if isinstance(shape, str) or not isinstance(shape, Sequence):
            raise ShapeError(
                f"Stage {caption!r}: the shape must be a tuple of axis lengths; got {shape!r}."
            )
        for n in shape:
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
                raise ShapeError(
                    f"Stage {caption!r}: axis lengths are whole numbers >= 0; "
                    f"got {n!r} in {tuple(shape)!r}."
                )
        checked.append((caption, tuple(int(n) for n in shape)))
    return checked


def _stage_labels(
    axis_labels: Sequence[str] | Sequence[Sequence[str]] | None,
    stages: list[tuple[str, tuple[int, ...]]],
) -> list[tuple[str, ...]]:
    """One tuple of axis names per stage: '' when unnamed, shared names, or one list each."""
    if axis_labels is None:
        return [("",) * len(shape) for _, shape in stages]
    if isinstance(axis_labels, str):
        raise ArgumentError(
            f"axis_labels must be a list of names such as ('B', 'T', 'D'); "
            f"got the string {axis_labels!r}."
        )
    if all(isinstance(name, str) for name in axis_labels):
        per_stage = [tuple(axis_labels)] * len(stages)  # type: ignore[arg-type]
    elif len(axis_labels) == len(stages):
        per_stage = [tuple(names) for names in axis_labels]
    else:
        raise ArgumentError(
            f"axis_labels must be one list of names, or one list per stage "
            f"({len(stages)}); got {len(axis_labels)} lists."
        )
    for (caption, shape), names in zip(stages, per_stage, strict=True):
        if len(names) != len(shape):
            raise RankError(
                f"Stage {caption!r} has shape {_shape_text(shape)} "
                f"({len(shape)} axes) but {len(names)} axis names {names!r}; "
                f"pass one list of names per stage when ranks differ."
            )
    return per_stage


def changed_axes(
    axes: Sequence[tuple[str, int]], neighbour: Sequence[tuple[str, int]] | None
) -> list[int]:
    """Positions whose (name, length) differ from the same position in ``neighbour``."""
    if neighbour is None:
        return []
    return [i for i, axis in enumerate(axes) if i >= len(neighbour) or neighbour[i] != axis]


def shape_layout(
    stages: Sequence[tuple[str, Sequence[int]]],
    *,
    axis_labels: Sequence[str] | Sequence[Sequence[str]] | None = None,
    highlight_axis: Highlight = -1,
) -> ShapeLayout:
    """Place each stage's axis boxes left to right and decide which ones are highlighted.

    ``highlight_axis`` is an axis index marked in every stage (``-1``: the last axis, e.g. the
    feature width a Linear layer changes), ``"changed"`` to mark the axes whose (name, length)
    differ from the previous stage at the same position (split or swapped axes; in the first
    stage, the axes the second one changes), or ``None``.
    """
    checked = _check_stages(stages)
    labels = _stage_labels(axis_labels, checked)
    if (
        highlight_axis is not None
        and highlight_axis != "changed"
        and (isinstance(highlight_axis, bool) or not isinstance(highlight_axis, numbers.Integral))
    ):
        raise ArgumentError(
            f"highlight_axis must be an axis index, 'changed' or None; got {highlight_axis!r}."
        )
    named = [
        list(zip(names, shape, strict=True))
        for names, (_, shape) in zip(labels, checked, strict=True)
    ]
    blocks: list[StageBlock] = []
    arrows: list[ShapeArrow] = []
    x = 0.0
    for s, ((caption, shape), names) in enumerate(zip(checked, labels, strict=True)):
        rank = len(shape)
        boxes_width = BOX_WIDTH if rank == 0 else rank * BOX_WIDTH + (rank - 1) * BOX_GAP
        shape_text = _shape_text(shape)
        width = max(boxes_width, len(caption) * CAPTION_CHAR, len(shape_text) * SHAPE_CHAR)
        # what this stage changed; for the first stage, what the next one will change
        neighbour = named[s - 1] if s > 0 else (named[1] if len(named) > 1 else None)
        changed = set(changed_axes(named[s], neighbour))
        marked = _marked_axes(highlight_axis, rank, changed, caption)
        left = x + (width - boxes_width) / 2
        boxes = tuple(
            AxisBox(
                stage=s,
                axis=i,
                label=names[i],
                length=shape[i],
                x=left + i * (BOX_WIDTH + BOX_GAP),
                y=BOX_BOTTOM,
                width=BOX_WIDTH,
                height=BOX_HEIGHT,
                changed=i in changed,
                highlighted=i in marked,
            )
            for i in range(rank)
        )
        if blocks:
            arrows.append(
                ShapeArrow(
                    x_start=x - ARROW_GAP + 0.15, x_end=x - 0.15, y=BOX_BOTTOM + BOX_HEIGHT / 2
                )
            )
        blocks.append(
            StageBlock(
                index=s,
                caption=caption,
                shape=shape,
                shape_text=shape_text,
                x=x,
                width=width,
                boxes=boxes,
            )
        )
        x += width + ARROW_GAP
    named_any = any(name for names in labels for name in names)
    return ShapeLayout(
        stages=tuple(blocks),
        arrows=tuple(arrows),
        width=x - ARROW_GAP,
        height=HEIGHT if named_any else BOX_BOTTOM + BOX_HEIGHT + 0.15,
    )


def _marked_axes(
    highlight_axis: Highlight, rank: int, changed: set[int], caption: str
) -> set[int]:
    """The axes of one stage to highlight."""
    if highlight_axis is None or rank == 0:
        return set()
    if highlight_axis == "changed":
        return changed
    index = int(highlight_axis)
    if not -rank <= index < rank:
        raise ArgumentError(
            f"highlight_axis={index} does not exist in stage {caption!r}, which has {rank} axes."
        )
    return {index % rank}


def shape_diagram(
    stages: Sequence[tuple[str, Sequence[int]]],
    *,
    axis_labels: Sequence[str] | Sequence[Sequence[str]] | None = None,
    highlight_axis: Highlight = -1,
    title: str | None = None,
) -> BookFigure:
    """Draw stages of tensor shapes left to right, one box per axis, the marked axes in orange."""
    layout = shape_layout(stages, axis_labels=axis_labels, highlight_axis=highlight_axis)
    unit = min(UNIT_INCHES, MAX_WIDTH_INCHES / layout.width)
    title_room = 0.35 if title else 0.0
    # whole pixels at FIGURE_DPI, so the text repr reads "size 469x183"
    width = round(layout.width * unit + 0.2, 2)
    height = round(layout.height * unit + title_room + 0.1, 2)
    fig, ax = new_figure(width, height)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=1.0 - title_room / height)
    with book_style():
        ax.set_axis_off()
        ax.set_xlim(-0.1, layout.width + 0.1)
        ax.set_ylim(0.0, layout.height)
        ax.set_aspect("equal")
        if title:
            ax.set_title(title)
        for stage in layout.stages:
            _draw_stage(ax, stage)
        for arrow in layout.arrows:
            ax.add_patch(
                FancyArrowPatch(
                    (arrow.x_start, arrow.y),
                    (arrow.x_end, arrow.y),
                    arrowstyle="-|>",
                    mutation_scale=14,
                    color=INK,
                    linewidth=1.2,
                )
            )
    return fig


def _draw_stage(ax: Axes, stage: StageBlock) -> None:
    """Boxes, axis names, caption and shape text of one stage."""
    for box in stage.boxes:
        ax.add_patch(
            Rectangle(
                (box.x, box.y),
                box.width,
                box.height,
                facecolor=PALETTE.orange if box.highlighted else LIGHT,
                edgecolor=PALETTE.vermillion if box.highlighted else INK,
                linewidth=2.2 if box.highlighted else 0.9,
            )
        )
        cx, cy = box.center
        ax.text(
            cx,
            cy,
            str(box.length),
            ha="center",
            va="center",
            fontsize=12,
            fontweight="bold" if box.highlighted else "normal",
            color=INK,
        )
        if box.label:
            ax.text(
                cx,
                LABEL_Y,
                box.label,
                ha="center",
                va="center",
                fontsize=10,
                fontstyle="italic",
                color=INK,
            )
    if not stage.boxes:  # a scalar: one dashed box, nothing inside
        ax.add_patch(
            Rectangle(
                (stage.center_x - BOX_WIDTH / 2, BOX_BOTTOM),
                BOX_WIDTH,
                BOX_HEIGHT,
                facecolor="none",
                edgecolor=MUTED,
                linestyle="--",
            )
        )
        ax.text(
            stage.center_x,
            BOX_BOTTOM + BOX_HEIGHT / 2,
            "scalar",
            ha="center",
            va="center",
            fontsize=9,
            color=MUTED,
        )
    ax.text(
        stage.center_x, CAPTION_Y, stage.caption, ha="center", va="center", fontsize=10, color=INK
    )
    ax.text(
        stage.center_x,
        SHAPE_TEXT_Y,
        stage.shape_text,
        ha="center",
        va="center",
        fontsize=9,
        family="monospace",
        color=MUTED,
    )
