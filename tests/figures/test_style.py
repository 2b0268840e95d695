"""The shared style: Okabe–Ito colours, restored rcParams, crisp PNGs shown at logical size."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import matplotlib as mpl
import pytest
from matplotlib.figure import Figure

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.figures import style
from llm_from_scratch.figures.style import (
    CYCLE,
    DISPLAY_SCALE,
    PALETTE,
    BookFigure,
    book_style,
    new_figure,
    png_size,
)


def test_palette_is_okabe_ito() -> None:
    assert tuple(PALETTE) == (
        "#000000",
        "#E69F00",
        "#56B4E9",
        "#009E73",
        "#F0E442",
        "#0072B2",
        "#D55E00",
        "#CC79A7",
    )
    assert sorted(CYCLE) == sorted(PALETTE)
    assert CYCLE[-1] == PALETTE.yellow  # faint on white: used last


def test_book_style_applies_then_restores() -> None:
    before = mpl.rcParams["axes.spines.top"], mpl.rcParams["savefig.dpi"]
    with book_style():
        assert mpl.rcParams["axes.spines.top"] is False
        assert mpl.rcParams["savefig.dpi"] == 200
        assert mpl.rcParams["axes.prop_cycle"].by_key()["color"][0] == PALETTE.blue
    assert (mpl.rcParams["axes.spines.top"], mpl.rcParams["savefig.dpi"]) == before


def test_apply_sets_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mpl, "rcParams", mpl.rcParams.copy())
    style.apply()
    assert mpl.rcParams["axes.spines.right"] is False


def test_new_figure_is_a_styled_book_figure() -> None:
    fig, ax = new_figure(4, 2)
    assert isinstance(fig, BookFigure) and isinstance(fig, Figure)
    assert tuple(fig.get_size_inches()) == (4.0, 2.0)
    assert not ax.spines["top"].get_visible() and not ax.spines["right"].get_visible()
    (line,) = ax.plot([0, 1], [0, 1])  # drawn outside book_style: the axes keep the cycle
    assert line.get_color() == PALETTE.blue
    fig, axes = new_figure(6, 2, ncols=3, sharey=True)
    assert axes.shape == (3,)


@pytest.mark.parametrize("size", [0, -1, 31, float("nan"), "4", True])
def test_new_figure_rejects_bad_sizes(size: Any) -> None:
    with pytest.raises(ArgumentError):
        new_figure(size, 2)


def test_png_is_twice_the_logical_size_it_is_shown_at() -> None:
    fig, ax = new_figure(3, 2)
    ax.plot([0, 1], [1, 0])
    png, shown = fig._repr_png_()
    width, height = png_size(png)
    assert shown == {"width": width // DISPLAY_SCALE, "height": height // DISPLAY_SCALE}
    assert 250 < shown["width"] <= 300 and 150 < shown["height"] <= 200  # 3 x 2 in at 100 dpi


def test_display_publishes_png_with_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[tuple[dict[str, Any], dict[str, Any]]] = []
    monkeypatch.setattr(style, "display", lambda data, **kw: published.append((data, kw)))
    fig, ax = new_figure(2, 1)
    ax.plot([0, 1])
    fig._ipython_display_()
    ((data, kw),) = published
    assert data["text/plain"] == "<Figure with 1 axis>"
    assert data["image/png"].startswith("iVBORw0KGgo")  # base64 of the PNG signature
    assert kw["raw"] is True and set(kw["metadata"]["image/png"]) == {"width", "height"}


def test_png_size_rejects_non_png() -> None:
    with pytest.raises(ArgumentError):
        png_size(b"GIF89a" + bytes(30))


def test_the_package_never_imports_pyplot() -> None:
    code = (
        "import sys; from llm_from_scratch.figures import shape_diagram; "
        "shape_diagram([('x', (1, 2))])._repr_png_(); "
        "assert 'matplotlib.pyplot' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
