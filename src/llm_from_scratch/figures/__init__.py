"""Figures drawn from computed values: one shared style, and one module per figure family.

Every helper returns a :class:`~llm_from_scratch.figures.style.BookFigure` (a matplotlib
``Figure``) and never calls ``pyplot.show``; chapters write each figure's alt text in the cell's
``mystnb.image.alt`` metadata.
"""

from .shapes import shape_diagram, shape_layout
from .style import PALETTE, BookFigure, apply, book_style, new_figure

__all__ = [
    "PALETTE",
    "BookFigure",
    "apply",
    "book_style",
    "new_figure",
    "shape_diagram",
    "shape_layout",
]
