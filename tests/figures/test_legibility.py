"""The text-size rule: every figure's smallest text is at least 11 CSS px as shown in the column.

A BookFigure records, when it is drawn, its shown size, dpi and smallest font size (a tEXt chunk
in its PNG). The rule is checked here against the stored notebooks and the figure functions, and
in the browser (tests/browser/test_figures.py) against the width each image is actually shown at.
"""

import base64
import io
import math
from pathlib import Path

import nbformat
import pytest
from PIL import Image

from llm_from_scratch.figures.style import (
    COLUMN_PX,
    DISPLAY_SCALE,
    MIN_TEXT_PX,
    Legibility,
    legibility_of,
    new_figure,
)
from tools.sync_notebooks import SYNC_COMMAND

BOOK = Path(__file__).resolve().parents[2] / "book"


def test_record_matches_what_was_drawn() -> None:
    fig, ax = new_figure(4.0, 2.0)
    ax.plot([0, 1], [0, 1])
    ax.set_title("title", fontsize=14)
    ax.text(0.5, 0.5, "smallest", fontsize=6.5)
    ax.text(0.5, 0.2, "", fontsize=3)  # empty text draws nothing and does not count
    png = fig.render_png()
    image = Image.open(io.BytesIO(png))
    image.load()  # decodes every chunk: fails on a bad CRC
    record = legibility_of(png)
    assert record == fig.legibility
    assert record.smallest_font_pt == 6.5
    assert math.isclose(record.smallest_text_px, 6.5 * 100 / 72)
    assert (record.width_px, record.height_px) == (
        image.width / DISPLAY_SCALE,
        image.height / DISPLAY_SCALE,
    )


def test_displayed_size_follows_the_column() -> None:
    narrow = Legibility(width_px=500, height_px=300, dpi=100, smallest_font_pt=9)
    wide = Legibility(width_px=2 * COLUMN_PX, height_px=300, dpi=100, smallest_font_pt=9)
    assert narrow.scale_in() == 1 and math.isclose(narrow.displayed_text_px(), 12.5)
    assert wide.scale_in() == 0.5 and math.isclose(wide.displayed_text_px(), 6.25)


def test_a_png_without_a_record() -> None:
    fig, _ = new_figure(2.0, 2.0)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert legibility_of(buffer.getvalue()) is None


def stored_figures() -> list[tuple[str, int, bytes]]:
    found = []
    for ipynb in sorted(BOOK.glob("*.ipynb")):
        for index, cell in enumerate(nbformat.read(ipynb, as_version=4).cells):
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if "image/png" in data:
                    found.append((ipynb.name, index, base64.b64decode(data["image/png"])))
    return found


FIGURES = stored_figures()


@pytest.mark.parametrize(
    "png", [png for *_, png in FIGURES], ids=[f"{name}-cell{i}" for name, i, _ in FIGURES]
)
def test_stored_figure_text_is_legible_in_the_column(png: bytes) -> None:
    record = legibility_of(png)
    assert record is not None, (
        f"this figure was stored before figures recorded their text sizes: run `{SYNC_COMMAND}`"
    )
    shown = record.displayed_text_px()
    assert shown >= MIN_TEXT_PX, (
        f"smallest text {record.smallest_font_pt:g} pt = {record.smallest_text_px:.1f} px in a "
        f"{record.width_px:g} px wide figure, shown at {record.scale_in():.2f}x in the "
        f"{COLUMN_PX} px column: {shown:.1f} px < {MIN_TEXT_PX:g} px. Make the figure narrower, "
        "its fonts larger, or split it."
    )
