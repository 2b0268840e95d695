"""The book's one matplotlib style: Okabe–Ito colours, readable sizes, crisp PNGs, no pyplot.

Figures are :class:`BookFigure` objects (a :class:`matplotlib.figure.Figure`) made by
:func:`new_figure` inside :func:`book_style`. A ``BookFigure`` displays itself in Jupyter and in
the built book as a PNG rendered at twice its size (``DISPLAY_SCALE``) and shown at its logical
size, so it is sharp on high-DPI screens and neither huge nor tiny on ordinary ones. A bare
``Figure`` as a cell's last expression shows only its text repr unless ``%matplotlib inline`` ran;
a ``BookFigure`` needs neither pyplot nor that magic, and never opens a window.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import numbers
import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, ParamSpec

import matplotlib as mpl
from cycler import cycler
from IPython.display import display
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text

from ..errors import ArgumentError

__all__ = [
    "COLUMN_PX",
    "CYCLE",
    "DISPLAY_SCALE",
    "DIVERGING_CMAP",
    "FIGURE_DPI",
    "INK",
    "LIGHT",
    "MIN_TEXT_PX",
    "MUTED",
    "PALETTE",
    "RC",
    "SEQUENTIAL_CMAP",
    "BookFigure",
    "Legibility",
    "OkabeIto",
    "apply",
    "book_style",
    "legibility_of",
    "new_figure",
    "png_size",
]


class OkabeIto(NamedTuple):
    """The Okabe–Ito colours, distinguishable with the common colour-vision deficiencies."""

    black: str
    orange: str
    sky_blue: str
    bluish_green: str
    yellow: str
    blue: str
    vermillion: str
    reddish_purple: str


PALETTE = OkabeIto(
    black="#000000",
    orange="#E69F00",
    sky_blue="#56B4E9",
    bluish_green="#009E73",
    yellow="#F0E442",
    blue="#0072B2",
    vermillion="#D55E00",
    reddish_purple="#CC79A7",
)
# Line colours in order of use: the strongest contrasts first, yellow (faint on white) last.
CYCLE = (
    PALETTE.blue,
    PALETTE.vermillion,
    PALETTE.bluish_green,
    PALETTE.orange,
    PALETTE.reddish_purple,
    PALETTE.sky_blue,
    PALETTE.black,
    PALETTE.yellow,
)
INK = "#222222"  # text, axes and outlines
MUTED = "#666666"  # secondary text
LIGHT = "#E6E6E6"  # grid lines and quiet fills
SEQUENTIAL_CMAP = "viridis"  # perceptually uniform and colour-blind safe
DIVERGING_CMAP = "PuOr_r"  # purple-orange diverging, colour-blind safe

FIGURE_DPI = 100  # logical pixels per inch: the size a figure is shown at
DISPLAY_SCALE = 2  # the PNG holds this many pixels per logical pixel (sharp on 2x screens)
# Legibility rule: the book's text column is COLUMN_PX CSS pixels wide on a desktop screen, and a
# wider figure is scaled down to fit it; its smallest text must still be MIN_TEXT_PX tall there.
COLUMN_PX = 672
MIN_TEXT_PX = 11.0

RC: dict[str, Any] = {
    "axes.prop_cycle": cycler(color=list(CYCLE)),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "axes.titlecolor": INK,
    "axes.linewidth": 0.8,
    "axes.grid": False,
    "grid.color": LIGHT,
    "grid.linewidth": 0.8,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "font.size": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "xtick.color": INK,
    "ytick.color": INK,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "text.color": INK,
    "image.cmap": SEQUENTIAL_CMAP,
    "figure.dpi": FIGURE_DPI,
    "figure.facecolor": "white",
    "savefig.dpi": FIGURE_DPI * DISPLAY_SCALE,
    "savefig.facecolor": "white",
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.08,
    "svg.hashsalt": "llm-from-scratch",  # deterministic ids in saved SVGs
}


@contextmanager
def book_style() -> Iterator[None]:
    """Use the book's rcParams inside the block and restore the previous ones after it."""
    with mpl.rc_context(RC):
        yield


def apply() -> None:
    """Make the book's rcParams the default for the rest of the session."""
    mpl.rcParams.update(RC)


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, read from a PNG's IHDR chunk."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ArgumentError("Not a PNG: the data does not start with the PNG signature.")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


class Legibility(NamedTuple):
    """How big a drawn figure is and how small its smallest text, in CSS (logical) pixels."""

    width_px: float  # the width the figure is shown at before a narrower column scales it
    height_px: float
    dpi: float  # logical pixels per inch
    smallest_font_pt: float  # the smallest font size of any drawn text, in points

    @property
    def smallest_text_px(self) -> float:
        """The smallest font size in CSS pixels at the figure's own size: pt · dpi / 72."""
        return self.smallest_font_pt * self.dpi / 72.0

    def scale_in(self, column_px: float = COLUMN_PX) -> float:
        """The factor a column of ``column_px`` shows the figure at: min(1, column / width)."""
        return min(1.0, column_px / self.width_px)

    def displayed_text_px(self, column_px: float = COLUMN_PX) -> float:
        """The smallest text's size as a reader sees it in the column."""
        return self.smallest_text_px * self.scale_in(column_px)


LEGIBILITY_KEY = b"llm-from-scratch:legibility"  # a PNG tEXt chunk holding the Legibility


def _drawn_font_sizes(fig: Figure) -> list[float]:
    """Font sizes (pt) of every visible, non-empty text artist (call after drawing)."""
    return [
        float(text.get_fontsize())
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip() and text.get_alpha() != 0
    ]


def _with_text_chunk(png: bytes, key: bytes, text: str) -> bytes:
    """The PNG with a tEXt chunk ``key`` = ``text`` right after its IHDR chunk."""
    body = key + b"\0" + text.encode("latin-1")
    chunk = (
        struct.pack(">I", len(body))
        + b"tEXt"
        + body
        + struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF)
    )
    ihdr_end = 8 + 8 + 13 + 4  # signature, IHDR length+type, IHDR data, CRC
    return png[:ihdr_end] + chunk + png[ihdr_end:]


def legibility_of(png: bytes) -> Legibility | None:
    """The Legibility a BookFigure stored in its PNG, or None for another PNG."""
    png_size(png)  # checks the signature
    offset = 8
    while offset + 8 <= len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind = png[offset + 4 : offset + 8]
        data = png[offset + 8 : offset + 8 + length]
        if kind == b"tEXt" and data.startswith(LEGIBILITY_KEY + b"\0"):
            fields = json.loads(data[len(LEGIBILITY_KEY) + 1 :].decode("latin-1"))
            return Legibility(**fields)
        if kind == b"IDAT":
            return None
        offset += 12 + length
    return None


class BookFigure(Figure):
    """A Figure that shows itself as a PNG at twice its size, displayed at its logical size.

    Drawing it records its :class:`Legibility` (``fig.legibility``, and a tEXt chunk in the PNG
    that :func:`legibility_of` reads back), so tests can check the book's text-size rule.
    """

    legibility: Legibility | None = None

    def render_png(self) -> bytes:
        """The PNG the book shows: DISPLAY_SCALE * dpi pixels per inch, white, tightly cropped."""
        buffer = io.BytesIO()
        with book_style():
            self.savefig(buffer, format="png", dpi=self.dpi * DISPLAY_SCALE)
        png = buffer.getvalue()
        width, height = png_size(png)
        sizes = _drawn_font_sizes(self)
        self.legibility = Legibility(
            width_px=width / DISPLAY_SCALE,
            height_px=height / DISPLAY_SCALE,
            dpi=float(self.dpi),
            smallest_font_pt=min(sizes) if sizes else float("inf"),
        )
        record = json.dumps(self.legibility._asdict(), sort_keys=True)
        return _with_text_chunk(png, LEGIBILITY_KEY, record)

    def __repr__(self) -> str:
        """A stable text stand-in (no pixel sizes, which shift with layout details)."""
        count = len(self.axes)
        return f"<Figure with {count} {'axis' if count == 1 else 'axes'}>"

    def _repr_png_(self) -> tuple[bytes, dict[str, int]]:
        """PNG bytes and the logical width/height Jupyter and myst-nb display it at."""
        png = self.render_png()
        width, height = png_size(png)
        return png, {"width": width // DISPLAY_SCALE, "height": height // DISPLAY_SCALE}

    def _ipython_display_(self) -> None:
        """Publish the PNG (with its display size) and the text repr, whatever backend is set."""
        png, size = self._repr_png_()
        data = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": repr(self)}
        display(data, metadata={"image/png": size}, raw=True)


def new_figure(
    width: float,
    height: float,
    *,
    nrows: int = 1,
    ncols: int = 1,
    squeeze: bool = True,
    **subplots_kw: Any,
) -> tuple[BookFigure, Any]:
    """A styled ``(figure, axes)`` pair, ``width`` x ``height`` inches, like ``plt.subplots``."""
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 30:
            raise ArgumentError(f"{name} must be a size in inches in (0, 30]; got {value!r}.")
    with book_style():
        fig = BookFigure(figsize=(width, height), dpi=FIGURE_DPI)
        axes = fig.subplots(nrows, ncols, squeeze=squeeze, **subplots_kw)
        for ax in fig.axes:
            _pin_tick_style(ax)
    return fig, axes


def _pin_tick_style(ax: Axes) -> None:
    """Store tick sizes on the axes, so ticks created later (at draw time) keep the style."""
    for axis in ("x", "y"):
        ax.tick_params(
            axis=axis,
            labelsize=RC[f"{axis}tick.labelsize"],
            color=RC[f"{axis}tick.color"],
            labelcolor=INK,
        )


P = ParamSpec("P")


def styled(draw: Callable[P, BookFigure]) -> Callable[P, BookFigure]:
    """Decorator: draw under the book's rcParams (fonts, colours), restored afterwards."""

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> BookFigure:
        with book_style():
            return draw(*args, **kwargs)

    return wrapper
