"""Shape diagrams: the layout as data (positions, names, changed axes), then a render smoke."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from llm_from_scratch.errors import ArgumentError, RankError, ShapeError
from llm_from_scratch.figures import BookFigure, shape_diagram, shape_layout
from llm_from_scratch.figures.shapes import BOX_GAP, BOX_WIDTH, changed_axes

LINEAR = [("x", (1, 2, 2)), ("Linear(2 -> 3)(x)", (1, 2, 3))]
HEADS = [("x", (2, 4, 8)), ("split heads", (2, 4, 2, 4)), ("swap T and H", (2, 2, 4, 4))]
HEAD_NAMES = [("B", "T", "D"), ("B", "T", "H", "d_h"), ("B", "H", "T", "d_h")]


def test_linear_layout_marks_the_feature_axis_in_both_stages() -> None:
    layout = shape_layout(LINEAR, axis_labels=("B", "T", "D"))
    assert layout.highlighted() == [[2], [2]]
    assert [[b.label for b in s.boxes] for s in layout.stages] == [["B", "T", "D"]] * 2
    assert [[b.length for b in s.boxes] for s in layout.stages] == [[1, 2, 2], [1, 2, 3]]
    assert [[b.changed for b in s.boxes] for s in layout.stages] == [[False, False, True]] * 2
    assert [s.shape_text for s in layout.stages] == ["(1, 2, 2)", "(1, 2, 3)"]


def test_head_split_marks_what_each_stage_changed() -> None:
    layout = shape_layout(HEADS, axis_labels=HEAD_NAMES, highlight_axis="changed")
    # x: D is what the split will change; split: H and d_h are new; swap: H and T moved
    assert layout.highlighted() == [[2], [2, 3], [1, 2]]
    assert shape_layout(HEADS, axis_labels=HEAD_NAMES).highlighted() == [[2], [3], [3]]
    assert shape_layout(HEADS, highlight_axis=None).highlighted() == [[], [], []]


def test_boxes_sit_left_to_right_without_overlap_and_arrows_join_stages() -> None:
    layout = shape_layout(HEADS, axis_labels=HEAD_NAMES)
    boxes = [box for stage in layout.stages for box in stage.boxes]
    for left, right in pairwise(boxes):
        assert left.x + left.width <= right.x + 1e-12
    for stage in layout.stages:
        xs = [b.x for b in stage.boxes]
        assert all(abs((b - a) - (BOX_WIDTH + BOX_GAP)) < 1e-12 for a, b in pairwise(xs))
        assert stage.x <= stage.boxes[0].x
        assert stage.boxes[-1].x + BOX_WIDTH <= stage.x + stage.width
    assert len(layout.arrows) == 2
    for arrow, (before, after) in zip(layout.arrows, pairwise(layout.stages), strict=True):
        assert before.x + before.width < arrow.x_start < arrow.x_end < after.x
    assert layout.width == pytest.approx(layout.stages[-1].x + layout.stages[-1].width)


def test_a_long_caption_widens_its_stage_and_centres_the_boxes() -> None:
    layout = shape_layout([("a very long caption for one axis", (3,))])
    (stage,) = layout.stages
    assert stage.width > BOX_WIDTH
    assert stage.boxes[0].center[0] == pytest.approx(stage.center_x)


def test_a_scalar_stage_has_no_boxes() -> None:
    layout = shape_layout([("x", (3,)), ("sum", ())])
    assert layout.stages[1].boxes == () and layout.stages[1].shape_text == "()"
    assert layout.highlighted() == [[0], []]


def test_without_axis_names_the_name_row_is_dropped() -> None:
    named = shape_layout([("x", (3,))], axis_labels=("D",))
    unnamed = shape_layout([("x", (3,))])
    assert unnamed.height < named.height
    assert all(box.y + box.height < unnamed.height for box in unnamed.stages[0].boxes)


def test_changed_axes_compares_position_by_position() -> None:
    assert changed_axes([("B", 2), ("T", 4)], [("B", 2), ("T", 4)]) == []
    assert changed_axes([("B", 2), ("H", 2), ("T", 4)], [("B", 2), ("T", 4)]) == [1, 2]
    assert changed_axes([("B", 2)], None) == []


@pytest.mark.parametrize(
    ("stages", "kwargs", "error"),
    [
        ([], {}, ArgumentError),
        ("x", {}, ArgumentError),
        ([("x",)], {}, ArgumentError),
        ([(1, (2,))], {}, ArgumentError),
        ([("x", (2, -1))], {}, ShapeError),
        ([("x", (2.0,))], {}, ShapeError),
        ([("x", "23")], {}, ShapeError),
        ([("x", (1, 2))], {"axis_labels": ("B", "T", "D")}, RankError),
        (HEADS, {"axis_labels": ("B", "T", "D")}, RankError),
        (HEADS, {"axis_labels": [("B", "T", "D")]}, ArgumentError),
        ([("x", (1, 2))], {"axis_labels": "BT"}, ArgumentError),
        ([("x", (1, 2))], {"highlight_axis": 2}, ArgumentError),
        ([("x", (1, 2))], {"highlight_axis": "last"}, ArgumentError),
        ([("x", (1, 2))], {"highlight_axis": True}, ArgumentError),
    ],
)
def test_bad_arguments_raise_typed_errors(stages: Any, kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        shape_layout(stages, **kwargs)


def test_rank_error_names_the_stage_and_the_fix() -> None:
    with pytest.raises(
        RankError,
        match=r"Stage 'split heads' has shape \(2, 4, 2, 4\) "
        r"\(4 axes\) but 3 axis names",
    ):
        shape_layout(HEADS, axis_labels=("B", "T", "D"))


@pytest.mark.parametrize(
    ("stages", "kwargs"),
    [
        (LINEAR, {"axis_labels": ("B", "T", "D"), "title": "Linear keeps positions"}),
        (HEADS, {"axis_labels": HEAD_NAMES, "highlight_axis": "changed"}),
        ([("x", (3,)), ("sum", ())], {"highlight_axis": None}),
        ([(f"stage {i}", (2,) * 6) for i in range(4)], {}),  # too wide: scaled to fit
    ],
)
def test_render_smoke(stages: Any, kwargs: dict) -> None:
    fig = shape_diagram(stages, **kwargs)
    assert isinstance(fig, BookFigure)
    assert fig.get_size_inches()[0] <= 7.8
    (ax,) = fig.axes
    texts = {t.get_text() for t in ax.texts}
    assert {caption for caption, _ in stages} <= texts
    png, shown = fig._repr_png_()
    assert len(png) > 1000 and shown["width"] > 0
    if "title" in kwargs:
        assert ax.get_title() == kwargs["title"]
