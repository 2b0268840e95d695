"""In a real kernel: a widget is two outputs with stable text, and its state is saved with it."""

from __future__ import annotations

import nbclient
import nbformat
import pytest

CELLS = [
    "from llm_from_scratch.widgets import predict_number, precomputed_slider",
    'predict_number("What is y0?", 2 * 2 + 1.5, reason="2 * 2 + 1.5.")',
    'precomputed_slider("k", [1, 2], ["<b>one</b>", "<b>two</b>"])',
]


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    """The cells above, run by nbclient the way myst-nb and nbval run chapters."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbclient.NotebookClient(
        notebook, kernel_name="python3", timeout=120, store_widget_state=True
    ).execute()
    return notebook


def test_predict_widget_is_a_view_then_a_reveal(executed: nbformat.NotebookNode) -> None:
    view, reveal = executed.cells[1].outputs
    assert view.output_type == reveal.output_type == "display_data"
    assert view.data["text/plain"] == (
        'Predict-then-check (number): What is y0? [answer hidden: expand "Show the answer"]'
    )
    assert "application/vnd.jupyter.widget-view+json" in view.data
    assert reveal.data["text/plain"] == "Show the answer: 5.5\nWhy: 2 * 2 + 1.5."
    assert reveal.data["text/html"].startswith("<details")


def test_slider_text_is_stable(executed: nbformat.NotebookNode) -> None:
    (output,) = executed.cells[2].outputs
    assert output.data["text/plain"] == "Precomputed slider: k (2 values, 1 to 2; showing 1)"


def test_widget_state_with_module_is_saved_in_the_notebook(
    executed: nbformat.NotebookNode,
) -> None:
    state = executed.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    specs = [m["state"]["spec"] for m in state.values() if "spec" in m["state"]]
    assert [spec["answer_text"] for spec in specs] == ["5.5"]
    modules = [m["state"]["_esm"] for m in state.values() if "_esm" in m["state"]]
    assert len(modules) == 2
    assert all("export default { render };" in esm for esm in modules)
