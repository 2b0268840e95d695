"""Figures for position schemes: a rotating pair, relative scores, the sinusoidal table, ALiBi.

Each figure has a pure data function (tested) and a drawing function that returns a matplotlib
``Figure``. The rotations are computed by the package (``nn.rotate_pairs``), never re-derived
here, so the pictures show what the layer does. ``rope_slider_frames`` renders the same picture
as inline SVG strings, one per position, for ``widgets.precomputed_slider``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.colors import ListedColormap

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError
from ..nn.positions import rotate_pairs
from ..validate import as_float_array
from .style import (
    DIVERGING_CMAP,
    LIGHT,
    PALETTE,
    SEQUENTIAL_CMAP,
    BookFigure,
    book_style,
    new_figure,
)

__all__ = [
    "RelativeScore",
    "RotationTrack",
    "alibi_bias_figure",
    "future_entries",
    "relative_score",
    "relative_score_figure",
    "rope_slider_frames",
    "rotation_figure",
    "rotation_track",
    "sinusoidal_heatmap_figure",
]

# Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
QUERY_COLOUR = PALETTE.blue
KEY_COLOUR = PALETTE.vermillion
TRACK_COLOUR = PALETTE.bluish_green
CIRCLE_COLOUR = "#999999"
FUTURE_COLOUR = LIGHT


def _pair(label: str, value: object) -> np.ndarray:
    array = as_float_array(value, label, error=ShapeError)
    if array.shape != (2,):
        raise ShapeError(f"{label} must be one coordinate pair, shape (2,); got {array.shape}.")
    return array


def _rotate(pair: np.ndarray, angle: float) -> np.ndarray:
    return rotate_pairs(Tensor(pair), [angle]).value


# --- one pair rotating with position -----------------------------------------------------------


@dataclass(frozen=True)
class RotationTrack:
    """A pair rotated to each position t: angles tω and the rotated coordinates [N, 2]."""

    pair: np.ndarray
    omega: float
    positions: np.ndarray
    angles: np.ndarray
    points: np.ndarray

    @property
    def radius(self) -> float:
        return float(np.linalg.norm(self.pair))


def rotation_track(pair: object, omega: float, positions: Sequence[float]) -> RotationTrack:
    """Rotate ``pair`` by tω for each t in ``positions`` (through ``nn.rotate_pairs``)."""
    base = _pair("pair", pair)
    t = np.asarray(positions, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise ShapeError(f"positions must be a non-empty list of numbers; got shape {t.shape}.")
    angles = t * float(omega)
    points = rotate_pairs(Tensor(np.tile(base, (t.size, 1))), angles[:, None]).value
    return RotationTrack(base, float(omega), t, angles, points)


def _unit_circle(ax, radius: float = 1.0) -> None:
    theta = np.linspace(0.0, 2.0 * math.pi, 241)
    ax.plot(radius * np.cos(theta), radius * np.sin(theta), color=CIRCLE_COLOUR, lw=1)
    ax.axhline(0.0, color=CIRCLE_COLOUR, lw=0.5)
    ax.axvline(0.0, color=CIRCLE_COLOUR, lw=0.5)
    ax.set_aspect("equal")
    limit = 1.35 * radius
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-limit, limit)
    ax.set_xlabel("first coordinate of the pair")
    ax.set_ylabel("second coordinate")


def rotation_figure(track: RotationTrack) -> BookFigure:
    """The pair at each position on its circle, each arrow labelled with t and tω."""
    with book_style():
        fig, ax = new_figure(5.2, 5.2)
        _draw_track(ax, track)
    return fig


def _draw_track(ax, track: RotationTrack) -> None:
    _unit_circle(ax, track.radius)
    for t, angle, (x, y) in zip(track.positions, track.angles, track.points, strict=True):
        ax.annotate(
            "",
            xy=(x, y),
            xytext=(0.0, 0.0),
            arrowprops={"arrowstyle": "->", "color": TRACK_COLOUR},
        )
        ax.plot([x], [y], "o", color=TRACK_COLOUR, ms=4)
        ax.annotate(
            f"t={t:g}\ntω={angle:.2f}",
            xy=(x, y),
            xytext=(1.2 * x, 1.2 * y),
            ha="center",
            va="center",
            fontsize=8,
        )
    ax.set_title(f"One pair rotated by tω, ω = {track.omega:g}")


# --- query and key: the score sees only the offset -----------------------------------------------


@dataclass(frozen=True)
class RelativeScore:
    """q at position i and k at j, then both shifted by the same amount; scores and rotations."""

    q: np.ndarray
    k: np.ndarray
    omega: float
    i: float
    j: float
    shift: float
    q_at_i: np.ndarray
    k_at_j: np.ndarray
    q_shifted: np.ndarray
    k_shifted: np.ndarray
    score: float
    shifted_score: float
    relative_angle: float


def relative_score(
    q: object, k: object, omega: float, i: float, j: float, shift: float
) -> RelativeScore:
    """Rotate q by iω and k by jω (and both by a further shift·ω); dot products of each case."""
    q_pair, k_pair = _pair("q", q), _pair("k", k)
    omega = float(omega)
    q_at_i, k_at_j = _rotate(q_pair, i * omega), _rotate(k_pair, j * omega)
    q_shifted = _rotate(q_pair, (i + shift) * omega)
    k_shifted = _rotate(k_pair, (j + shift) * omega)
    return RelativeScore(
        q=q_pair,
        k=k_pair,
        omega=omega,
        i=float(i),
        j=float(j),
        shift=float(shift),
        q_at_i=q_at_i,
        k_at_j=k_at_j,
        q_shifted=q_shifted,
        k_shifted=k_shifted,
        score=float(q_at_i @ k_at_j),
        shifted_score=float(q_shifted @ k_shifted),
        relative_angle=(float(j) - float(i)) * omega,
    )


def relative_score_figure(data: RelativeScore) -> BookFigure:
    """Two panels: q at i and k at j; the same pair shifted together. Same angle, same score."""
    with book_style():
        fig, axes = new_figure(6.6, 3.6, ncols=2)
        _draw_relative(axes, data)
    return fig


def _draw_relative(axes, data: RelativeScore) -> None:
    cases = (
        (data.i, data.j, data.q_at_i, data.k_at_j, data.score),
        (
            data.i + data.shift,
            data.j + data.shift,
            data.q_shifted,
            data.k_shifted,
            data.shifted_score,
        ),
    )
    radius = max(float(np.linalg.norm(data.q)), float(np.linalg.norm(data.k)), 1e-12)
    for index, (i, j, q, k, score) in enumerate(cases):
        ax = axes[index]
        _unit_circle(ax, radius)
        for vector, colour, label in (
            (q, QUERY_COLOUR, f"q at i={i:g}"),
            (k, KEY_COLOUR, f"k at j={j:g}"),
        ):
            ax.annotate(
                "",
                xy=tuple(vector),
                xytext=(0, 0),
                arrowprops={"arrowstyle": "->", "color": colour, "lw": 2},
            )
            ax.plot([vector[0]], [vector[1]], "o", color=colour, ms=4, label=label)
        ax.legend(loc="lower left", fontsize=8)
        ax.set_title(
            f"i={i:g}, j={j:g}: (j−i)ω={data.relative_angle:.3f}, qᵀk={round(score, 6) + 0.0:.6f}",
            fontsize=9,
        )


# --- the sinusoidal table and the ALiBi biases ---------------------------------------------------


def sinusoidal_heatmap_figure(table: np.ndarray) -> BookFigure:
    """Heat map of a [T, D] sinusoidal table: positions down, coordinates across."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2:
        raise ShapeError(f"table must be [T, D]; got shape {table.shape}.")
    positions, width = table.shape
    with book_style():
        fig, ax = new_figure(6.4, 4.2)
        image = ax.imshow(
            table, cmap=DIVERGING_CMAP, vmin=-1.0, vmax=1.0, aspect="auto", origin="upper"
        )
        ax.set_xlabel("coordinate (even: sin, odd: cos; frequency falls to the right)")
        ax.set_ylabel("position t")
        ax.set_xticks(range(width))
        if positions <= 16:
            ax.set_yticks(range(positions))
        fig.colorbar(image, ax=ax, label="value")
        ax.set_title(f"Sinusoidal encoding, T = {positions}, D = {width}")
    return fig


def future_entries(query_len: int, key_len: int) -> np.ndarray:
    """Boolean [L, S]: True where key j lies after query i (j > S − L + i), drawn grey."""
    rows = np.arange(key_len - query_len, key_len)[:, None]
    return np.arange(key_len)[None, :] > rows


def alibi_bias_figure(bias: np.ndarray, slopes: Sequence[float]) -> BookFigure:
    """One [L, S] panel per head of an ALiBi bias [H, L, S], titled with its slope.

    Entries after the query (left at zero by the bias, blocked by the causal mask) are grey.
    """
    bias = np.asarray(bias, dtype=np.float64)
    slopes = np.asarray(slopes, dtype=np.float64)
    if bias.ndim != 3 or slopes.shape != (bias.shape[0],):
        raise ShapeError(
            f"bias must be [H, L, S] and slopes [H]; got {bias.shape} and {slopes.shape}."
        )
    heads = bias.shape[0]
    if heads == 0:
        raise ArgumentError("alibi_bias_figure needs at least one head.")
    columns = min(heads, 3)  # three panels a row keep the figure inside the 672 px column
    rows = math.ceil(heads / columns)
    low = min(float(bias.min()) if bias.size else -1.0, -1e-12)
    future = future_entries(bias.shape[1], bias.shape[2])
    grey = np.ma.masked_where(~future, np.ones(future.shape))
    with book_style():
        fig, grid = new_figure(
            1.95 * columns + 0.7, 2.1 * rows + 0.4, nrows=rows, ncols=columns, squeeze=False
        )
        axes = list(grid.ravel())
        for ax in axes[heads:]:
            fig.delaxes(ax)
        image = None
        for h, ax in enumerate(axes[:heads]):
            image = ax.imshow(bias[h], cmap=SEQUENTIAL_CMAP, vmin=low, vmax=0.0)
            ax.imshow(grey, cmap=ListedColormap([FUTURE_COLOUR]), vmin=0.0, vmax=1.0)
            ax.set_title(f"head {h}: m = {slopes[h]:.6g}", fontsize=9)
            ax.set_xlabel("key j", fontsize=8)
            ax.set_ylabel("query i", fontsize=8)
        fig.colorbar(image, ax=axes[:heads], label="bias added to the score")
    return fig


# --- slider frames (inline SVG) -----------------------------------------------------------------


def _svg_arrow(x: float, y: float, colour: str, centre: float, scale: float) -> str:
    end_x, end_y = centre + scale * x, centre - scale * y
    return (
        f'<line x1="{centre:.1f}" y1="{centre:.1f}" x2="{end_x:.1f}" y2="{end_y:.1f}" '
        f'stroke="{colour}" stroke-width="3"/>'
        f'<circle cx="{end_x:.1f}" cy="{end_y:.1f}" r="4" fill="{colour}"/>'
    )


def _svg_key(colour: str) -> str:
    """A dot in an arrow's colour before its letter: the letter keeps the page's text colour, so
    it reads in light and dark themes (coloured letters fail the contrast minimum)."""
    return (
        '<span aria-hidden="true" style="display:inline-block;width:0.6em;height:0.6em;'
        f'margin-right:0.25em;border-radius:50%;background:{colour}"></span>'
    )


def rope_slider_frames(
    q: object, k: object, omega: float, offset: float, positions: Sequence[float]
) -> list[str]:
    """One SVG frame per position p: q rotated to p, k to p + offset, and their score.

    Every frame states the positions, the two angles, the rotated pairs and qᵀk (six decimals);
    the score is the same in all frames because only the offset enters it.
    """
    q_pair, k_pair = _pair("q", q), _pair("k", k)
    radius = max(float(np.linalg.norm(q_pair)), float(np.linalg.norm(k_pair)), 1e-12)
    size, centre = 220, 110.0
    scale = 90.0 / radius
    frames = []
    for p in positions:
        data = relative_score(q_pair, k_pair, omega, float(p), float(p) + float(offset), 0.0)
        qx, qy = data.q_at_i
        kx, ky = data.k_at_j
        score = round(data.score, 6) + 0.0  # + 0.0 turns a rounded −0.0 into 0.0
        circle = (
            f'<circle cx="{centre:.1f}" cy="{centre:.1f}" r="{scale * radius:.1f}" '
            f'fill="none" stroke="currentColor" stroke-opacity="0.35"/>'
        )
        svg = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
            f'viewBox="0 0 {size} {size}" role="img" aria-label="q at position {p:g} and k at '
            f'position {p + offset:g} on a circle; score {score:.6f}">'
            f"{circle}{_svg_arrow(qx, qy, QUERY_COLOUR, centre, scale)}"
            f"{_svg_arrow(kx, ky, KEY_COLOUR, centre, scale)}</svg>"
        )
        text = (
            f"<div>{_svg_key(QUERY_COLOUR)}q at i = {p:g} "
            f"(angle {p * data.omega:.3f} rad) = ({qx:.3f}, {qy:.3f}); "
            f"{_svg_key(KEY_COLOUR)}k at j = {p + offset:g} "
            f"(angle {(p + offset) * data.omega:.3f} rad) = ({kx:.3f}, {ky:.3f})<br>"
            f"relative angle (j − i)ω = {data.relative_angle:.3f} rad; "
            f"score qᵀk = <b>{score:.6f}</b></div>"
        )
        frames.append(f'<div class="rope-frame">{svg}{text}</div>')
    return frames
