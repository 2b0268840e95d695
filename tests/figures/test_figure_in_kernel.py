"""In a real kernel a BookFigure shows as a PNG with its display size, with or without pyplot."""

from __future__ import annotations

import nbclient
import nbformat
import pytest

CELLS = [
    "from llm_from_scratch.figures import shape_diagram\n"
    "fig = shape_diagram([('x', (1, 2, 2)), ('y', (1, 2, 3))], axis_labels=('B', 'T', 'D'))\n"
    "fig",
    "%matplotlib inline\nfig",  # the inline backend registers its own Figure formatter
]


@pytest.fixture(scope="module")
def outputs() -> list[list[nbformat.NotebookNode]]:
    """The outputs of each cell above."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbclient.NotebookClient(notebook, kernel_name="python3", timeout=120).execute()
    return [cell.outputs for cell in notebook.cells]


@pytest.mark.parametrize("cell", [0, 1])
def test_one_png_output_with_half_size_metadata(
    outputs: list[list[nbformat.NotebookNode]], cell: int
) -> None:
    (output,) = outputs[cell]
    assert output.data["image/png"].startswith("iVBORw0KGgo")
    assert output.data["text/plain"] == "<Figure with 1 axis>"
    size = output.metadata["image/png"]
    assert 300 < size["width"] < 500 and 100 < size["height"] < 250
