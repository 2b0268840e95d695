"""The numbers behind the position figures and slider frames; the figures smoke-tested on Agg."""

import math
import re

import matplotlib
import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.figures.positions import (
    alibi_bias_figure,
    future_entries,
    relative_score,
    relative_score_figure,
    rope_slider_frames,
    rotation_figure,
    rotation_track,
    sinusoidal_heatmap_figure,
)
from llm_from_scratch.figures.style import BookFigure
from llm_from_scratch.nn import alibi_bias, alibi_slopes, sinusoidal_encoding

matplotlib.use("Agg")


def test_rotation_track_angles_are_t_omega_and_points_the_closed_form():
    track = rotation_track([1.0, 0.0], 0.5, [0, 1, 2, 3])
    np.testing.assert_allclose(track.angles, [0.0, 0.5, 1.0, 1.5], atol=0)
    expected = [[math.cos(0.5 * t), math.sin(0.5 * t)] for t in range(4)]
    np.testing.assert_allclose(track.points, expected, atol=1e-15)
    assert track.radius == 1.0


def test_rotation_track_keeps_the_radius_of_a_general_pair():
    track = rotation_track([3.0, -4.0], 0.3, [0.0, 2.5, 7.0])
    np.testing.assert_allclose(np.linalg.norm(track.points, axis=1), 5.0, rtol=1e-15)
    a, b, theta = 3.0, -4.0, 0.3 * 2.5
    expected = [
        a * math.cos(theta) - b * math.sin(theta),
        a * math.sin(theta) + b * math.cos(theta),
    ]
    np.testing.assert_allclose(track.points[1], expected, atol=1e-14)


def test_relative_score_at_0_and_90_degrees_and_after_a_shift():
    """Seed fact T14: the score is 1 at 0°, 0 at 90°, unchanged when both positions shift."""
    quarter = math.pi / 2
    aligned = relative_score([1.0, 0.0], [1.0, 0.0], quarter, 0.0, 0.0, 3.0)
    assert aligned.score == 1.0
    assert aligned.shifted_score == pytest.approx(1.0, abs=1e-15)
    turned = relative_score([1.0, 0.0], [1.0, 0.0], quarter, 0.0, 1.0, 3.0)
    np.testing.assert_allclose(turned.k_at_j, [0.0, 1.0], atol=1e-16)
    assert abs(turned.score) < 1e-16
    assert abs(turned.shifted_score) < 1e-15
    assert turned.relative_angle == quarter


def test_relative_score_equals_q_rotated_by_the_offset():
    q, k = np.array([0.3, -1.1]), np.array([0.8, 0.4])
    data = relative_score(q, k, 0.7, 2.0, 5.0, -4.5)
    angle = 0.7 * 3.0
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    assert data.score == pytest.approx(q @ rot @ k, abs=1e-14)
    assert data.shifted_score == pytest.approx(data.score, abs=1e-12)


def test_pair_shape_errors():
    with pytest.raises(ShapeError) as info:
        relative_score([1.0, 0.0, 0.0], [1.0, 0.0], 1.0, 0, 1, 0)
    assert "shape (2,); got (3,)" in str(info.value)
    with pytest.raises(ShapeError):
        rotation_track([1.0, 0.0], 1.0, [])


def test_slider_frames_show_the_same_score_at_every_position():
    q, k = [0.6, 0.8], [1.0, 0.0]
    frames = rope_slider_frames(q, k, 0.4, 2, [0, 1, 2, 5, 10])
    assert len(frames) == 5
    scores = {re.search(r"score qᵀk = <b>(-?[0-9.]+)</b>", f).group(1) for f in frames}
    angle = 0.4 * 2
    expected = 0.6 * math.cos(angle) + 0.8 * math.sin(angle)  # (qᵀ R(2ω) k) by hand
    assert scores == {f"{expected:.6f}"}
    assert "i = 5" in frames[3]
    assert "j = 7" in frames[3]
    assert "(angle 2.000 rad)" in frames[3]  # q at 5 · 0.4
    assert all(f.count("<svg") == 1 for f in frames)


def test_slider_frame_arrow_end_points_follow_the_rotation():
    frames = rope_slider_frames([1.0, 0.0], [1.0, 0.0], math.pi / 2, 1, [0])
    ends = re.findall(r'x2="([-0-9.]+)" y2="([-0-9.]+)"', frames[0])
    # centre 110, radius 90 px: q at angle 0 ends right of centre; k at 90° ends above it
    assert ends == [("200.0", "110.0"), ("110.0", "20.0")]
    assert "score qᵀk = <b>0.000000</b>" in frames[0]


def test_figures_draw_on_agg():
    figures = [
        rotation_figure(rotation_track([1.0, 0.0], 1.0, [0, 1, 2, 3])),
        relative_score_figure(relative_score([1.0, 0.0], [0.0, 1.0], 0.5, 1, 3, 2)),
        sinusoidal_heatmap_figure(sinusoidal_encoding(10, 8)),
        alibi_bias_figure(alibi_bias(6, 5, 5), alibi_slopes(6)),
    ]
    for fig in figures:
        assert isinstance(fig, BookFigure)
        assert fig.render_png().startswith(b"\x89PNG")
    assert len(figures[3].axes) == 7  # six heads and a colour bar


def test_figure_argument_errors():
    with pytest.raises(ShapeError):
        sinusoidal_heatmap_figure(np.zeros(4))
    with pytest.raises(ShapeError):
        alibi_bias_figure(np.zeros((2, 3, 3)), [0.5])
    with pytest.raises(ArgumentError):
        alibi_bias_figure(np.zeros((0, 3, 3)), [])


def test_future_entries_are_keys_after_each_query():
    np.testing.assert_array_equal(
        future_entries(2, 3), [[False, False, True], [False, False, False]]
    )
    np.testing.assert_array_equal(future_entries(3, 3), np.triu(np.ones((3, 3), bool), 1))
