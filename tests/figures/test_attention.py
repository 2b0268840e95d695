"""Figures for multi-head attention: the numbers behind each picture, then smoke tests."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.attention import (
    attention_heatmap_figure,
    head_split_comparison,
    head_split_figure,
    head_split_markdown,
    heatmap_cells,
    split_path_figure,
    split_path_stages,
    token_colours,
)


def test_split_path_stages_follow_the_seed_sequence():
    stages = split_path_stages(2, 4, 8, 2)
    assert [s.shape for s in stages] == [
        (2, 4, 8),
        (2, 4, 2, 4),
        (2, 2, 4, 4),
        (2, 2, 4, 4),
        (2, 4, 2, 4),
        (2, 4, 8),
    ]
    assert stages[2].axes == ("B", "H", "T", "d_h")
    assert stages[0].shape_text == "[2, 4, 8]"
    with pytest.raises(ShapeError, match="not divisible"):
        split_path_stages(1, 2, 6, 4)
    with pytest.raises(ArgumentError, match="num_heads"):
        split_path_stages(1, 2, 6, 0)


def test_head_split_comparison_token_rows():
    c = head_split_comparison(2, 4, 8, 2)
    assert c.right.shape == c.wrong.shape == (2, 2, 4, 4)
    # token 0's row 0..7 splits into head rows (0,1,2,3) and (4,5,6,7)
    np.testing.assert_array_equal(c.right[0, 0, 0], [0, 1, 2, 3])
    np.testing.assert_array_equal(c.right[0, 1, 0], [4, 5, 6, 7])
    # right split: slot t of every head holds token t's values only
    assert np.all(c.right_tokens == np.arange(4)[None, None, :, None])
    # the direct reshape puts token 0's second half into 'head' 0, slot 1
    np.testing.assert_array_equal(c.wrong[0, 0, 1], [4, 5, 6, 7])
    assert c.wrong_tokens[0, 0, 1, 0] == 0
    assert not c.equal
    # slots 0 of head 0 and 3 of head 1 agree by accident in each batch row; 12 of 16 differ
    assert c.mixed_slots == 12


def test_head_split_comparison_small_case_and_trivial_cases():
    c = head_split_comparison(1, 2, 4, 2)
    assert c.right.shape == c.wrong.shape == (1, 2, 2, 2)
    np.testing.assert_array_equal(c.right[0, 0], [[0, 1], [4, 5]])
    np.testing.assert_array_equal(c.wrong[0, 0], [[0, 1], [2, 3]])
    assert not c.equal
    assert head_split_comparison(1, 3, 4, 1).equal  # one head: nothing to rearrange
    assert head_split_comparison(2, 1, 4, 2).equal  # one token: T and H swap trivially


def test_head_split_markdown_rows():
    text = head_split_markdown(head_split_comparison(1, 2, 4, 2))
    lines = text.splitlines()
    assert len(lines) == 2 + 4
    assert lines[2] == "| 0 | 0 | (0, 1) | 0 | (0, 1) | 0 |"
    assert lines[3] == "| 0 | 1 | (4, 5) | 1 | (2, 3) | 0 |"
    assert lines[4] == "| 1 | 0 | (2, 3) | 0 | (4, 5) | 1 |"
    with pytest.raises(ArgumentError, match="batch_index"):
        head_split_markdown(head_split_comparison(1, 2, 4, 2), batch_index=1)


def test_heatmap_cells():
    weights = np.array([[1.0, 0.0], [0.25, 0.75]])
    blocked = np.array([[False, True], [False, False]])
    assert heatmap_cells(weights, blocked) == [["1.00", "×"], ["0.25", "0.75"]]
    assert heatmap_cells(weights, None, digits=1) == [["1.0", "0.0"], ["0.2", "0.8"]]
    with pytest.raises(ShapeError, match=r"\[L, S\]"):
        heatmap_cells(np.zeros(3))
    with pytest.raises(ShapeError, match="blocked"):
        heatmap_cells(weights, np.zeros((2, 3), bool))


def test_token_colours_cycle():
    colours = token_colours(10)
    assert len(colours) == 10 and colours[8] == colours[0]
    assert len(set(colours[:8])) == 8


def _renders(fig: Figure) -> None:
    assert isinstance(fig, Figure)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue()[:4] == b"\x89PNG"


def test_figures_render():
    stages = split_path_stages(2, 4, 8, 2)
    _renders(split_path_figure(stages[:3], title="split"))
    _renders(split_path_figure(stages[3:]))
    _renders(head_split_figure(head_split_comparison(2, 4, 8, 2)))
    weights = np.array([[1.0, 0.0], [0.4, 0.6]])
    blocked = np.array([[False, True], [False, False]])
    _renders(attention_heatmap_figure([("causal", weights, blocked), ("plain", weights, None)]))
    with pytest.raises(ArgumentError):
        split_path_figure([])
    with pytest.raises(ArgumentError):
        attention_heatmap_figure([])
    with pytest.raises(ArgumentError, match="batch_index"):
        head_split_figure(head_split_comparison(1, 2, 4, 2), batch_index=2)
