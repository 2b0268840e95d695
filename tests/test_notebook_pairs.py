"""Each chapter's MyST source and its committed, executed notebook hold the same cells."""

import json

import nbformat
import pytest

from tools.sync_notebooks import (
    BOOK,
    SYNC_COMMAND,
    USER_EXPRESSIONS,
    chapter_sources,
    paired_path,
    read_source,
    renumber_widget_models,
    serialise,
)

FIX = f"Re-execute and re-pair the chapters with `{SYNC_COMMAND}`."
SOURCES = chapter_sources()


def cell_summary(cell: nbformat.NotebookNode) -> tuple[str, str, str]:
    """Type, source and metadata, without what only the executed notebook holds: timing, and
    the prose's evaluated numbers (``user_expressions``, checked in tests/test_live_prose.py)."""
    skipped = {"execution", USER_EXPRESSIONS}
    metadata = {key: value for key, value in cell.metadata.items() if key not in skipped}
    return cell.cell_type, cell.source, json.dumps(metadata, sort_keys=True)


@pytest.mark.parametrize("md", SOURCES, ids=[md.name for md in SOURCES])
def test_paired_notebook_matches_its_source(md) -> None:
    ipynb = paired_path(md)
    assert ipynb.is_file(), f"{ipynb.name} is missing. {FIX}"
    source = read_source(md).cells
    stored = nbformat.read(ipynb, as_version=4).cells
    assert len(stored) == len(source), (
        f"{ipynb.name} has {len(stored)} cells, {md.name} has {len(source)}. {FIX}"
    )
    for index, (want, have) in enumerate(zip(source, stored, strict=True)):
        assert cell_summary(have) == cell_summary(want), (
            f"cell {index} of {ipynb.name} differs from {md.name} "
            f"(type, source or metadata). {FIX}"
        )
        if have.cell_type == "code":
            assert have.execution_count is not None, (
                f"code cell {index} of {ipynb.name} was never executed, so nbval would not "
                f"compare it. {FIX}"
            )


def test_every_notebook_has_a_source() -> None:
    orphans = [
        ipynb.name for ipynb in BOOK.glob("*.ipynb") if not ipynb.with_suffix(".md").is_file()
    ]
    assert not orphans, f"notebooks with no MyST source beside them: {orphans}"


@pytest.mark.parametrize("md", SOURCES, ids=[md.name for md in SOURCES])
def test_every_figure_has_alt_text(md) -> None:
    ipynb = paired_path(md)
    if not ipynb.is_file():
        return  # test_paired_notebook_matches_its_source reports the missing notebook
    for index, cell in enumerate(nbformat.read(ipynb, as_version=4).cells):
        images = [
            output
            for output in cell.get("outputs", [])
            if any(kind.startswith("image/") for kind in output.get("data", {}))
        ]
        alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
        assert not images or alt.strip(), (
            f"cell {index} of {md.name} draws a figure without alt text: give the cell "
            "metadata `mystnb: {image: {alt: ...}}` (see README, 'Writing a chapter')."
        )


def test_widget_models_are_renumbered_consistently() -> None:
    first, second = "a" * 32, "b" * 32
    text = f'{{"{first}": "IPY_MODEL_{second}", "{second}": 1, "other": "{"c" * 32}"}}'
    renamed = renumber_widget_models(text, [second, first], "demo")
    assert first not in renamed and second not in renamed and "c" * 32 in renamed
    assert renumber_widget_models(text, [second, first], "demo") == renamed


def test_serialise_drops_timing_and_is_stable() -> None:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("1 + 1", id="cell-0", execution_count=1)
    cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
    notebook.cells.append(cell)
    text = serialise(notebook, "demo")
    assert "iopub" not in text and text.endswith("\n")
    assert serialise(nbformat.reads(text, as_version=4), "demo") == text
