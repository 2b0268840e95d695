"""In a real JupyterLab (with jupyterlab-myst), prose numbers show on open and follow the fixture.

A chapter's prose shows its numbers as ``{eval}`glued["key:spec"]` `` (tools/live_prose.py). The
stored notebook carries the evaluated text in each Markdown cell's ``user_expressions``
(tools/sync_notebooks.py), which jupyterlab-myst renders before anything runs; after a reader
edits the fixture cell and runs all cells, jupyterlab-myst evaluates the expressions again in the
kernel. This test opens Chapter 1 as a reader does, checks that every sentence shows its stored
numbers and no raw role, then edits the fixture (the chapter's first fixture variant), runs all
and checks that the results jupyterlab-myst stores are exactly those of an nbclient run of the
same edited chapter (the same code as `python tools/sync_notebooks.py`), and that the sentence
on the page shows them. Screenshots of both states go to the browser tests' screenshot folder.
"""

from __future__ import annotations

import importlib.util
import json
import runpy
import shutil
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import SCREENSHOTS
from tests.browser.test_jupyterlab_roundtrip import open_settled
from tools.sync_notebooks import USER_EXPRESSIONS, execute, read_source

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "01-autodiff"
VARIANTS = ROOT / "tests" / "book" / "fixture_variants" / "01_autodiff.py"

# Every Markdown cell: its index, rendered text (when drawn) and stored expression results.
PROSE = """() => window.jupyterapp.shell.currentWidget.content.widgets.map((cell, index) =>
  cell.model.type !== 'markdown' ? null : {
    index,
    myst: cell.node.querySelector('.myst') !== null,
    text: cell.node.innerText,
    expressions: cell.model.getMetadata('user_expressions') ?? null,
  }).filter(Boolean)"""
SHOW = """async (index) => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  notebook.activeCellIndex = index;
  await notebook.scrollToItem(index, 'center');  // the notebook draws only cells in view
}"""
SET_SOURCE = """([index, source]) => window.jupyterapp.shell.currentWidget.content.model.cells
  .get(index).sharedModel.setSource(source)"""


def shown_text(result: dict) -> str:
    """What jupyterlab-myst prints for a text/plain result (one pair of quotes stripped)."""
    text = result["data"]["text/plain"]
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else text


@pytest.fixture(scope="module")
def lab(lab_server: tuple[str, Path]) -> tuple[str, Path]:
    """The shared JupyterLab (see conftest.py), with the chapter's notebook copied in."""
    if importlib.util.find_spec("jupyterlab_myst") is None:
        pytest.fail("jupyterlab-myst is not installed: `pip install -r requirements.txt`")
    url, folder = lab_server
    shutil.copyfile(ROOT / "book" / f"{CHAPTER}.ipynb", folder / f"{CHAPTER}.ipynb")
    return url, folder


def read_prose(page: Page, cells: list[int]) -> dict[int, str]:
    """The rendered text of each Markdown cell in ``cells`` (drawn on screen first)."""
    texts = {}
    for index in cells:
        page.evaluate(SHOW, index)
        page.wait_for_function(
            "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].node"
            ".querySelector('.myst')?.innerText.trim()",
            arg=index,
        )
        texts[index] = next(m for m in page.evaluate(PROSE) if m["index"] == index)["text"]
    return texts


def edited_reference(source: str) -> dict[int, list]:
    """{Markdown cell index: user_expressions} of an nbclient run with ``source`` as fixture."""
    notebook = read_source(ROOT / "book" / f"{CHAPTER}.md")
    fixture = next(
        i for i, c in enumerate(notebook.cells) if "fixture" in c.metadata.get("tags", [])
    )
    notebook.cells[fixture].source = source
    execute(notebook, ROOT / "book")
    return {
        index: cell.metadata.get(USER_EXPRESSIONS)
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown"
    }


def test_prose_numbers_show_on_open_and_follow_a_fixture_edit(
    browser: Browser, lab: tuple[str, Path]
) -> None:
    url, folder = lab
    name = f"{CHAPTER}.ipynb"
    stored = nbformat.read(folder / name, as_version=4)
    with_numbers = [
        index
        for index, cell in enumerate(stored.cells)
        if cell.cell_type == "markdown" and cell.metadata.get(USER_EXPRESSIONS)
    ]
    assert with_numbers, f"{name} stores no prose numbers: run tools/live_prose.py and re-pair"
    page, _ = open_settled(browser, url, name)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    # 1. On open, before anything runs: every sentence shows its stored numbers, no raw role.
    before = read_prose(page, with_numbers)
    missing = [
        (index, shown_text(entry["result"]))
        for index in with_numbers
        for entry in stored.cells[index].metadata[USER_EXPRESSIONS]
        if shown_text(entry["result"]) not in before[index]
    ]
    raw = [index for index, text in before.items() if "glued[" in text or "{eval}" in text]
    page.evaluate(SHOW, with_numbers[0])
    page.screenshot(path=SCREENSHOTS / "jupyterlab-live-prose-1-opened.png")
    assert not missing and not raw, (
        f"on open, JupyterLab shows raw roles in cells {raw}; stored numbers not shown: "
        f"{missing[:5]}"
    )

    # 2. Edit the fixture as a reader does and run all cells: the prose follows.
    variant = next(iter(runpy.run_path(str(VARIANTS))["VARIANTS"].values()))
    expected = edited_reference(variant)
    fixture = next(
        i for i, c in enumerate(stored.cells) if "fixture" in c.metadata.get("tags", [])
    )
    page.evaluate(SET_SOURCE, [fixture, variant])
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        """(expected) => {
          const canonical = (v) => JSON.stringify(v, (_, x) => x && typeof x === 'object' &&
            !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x);
          return window.jupyterapp.shell.currentWidget.content.widgets.every(
            (cell, index) => cell.model.type !== 'markdown' ||
              canonical(cell.model.getMetadata('user_expressions') ?? null) ===
              canonical(expected[index] ?? null));
        }""",
        arg={str(k): v for k, v in expected.items()},
        timeout=240_000,
        polling=100,  # ms between two checks of the condition
    )
    lab_results = {m["index"]: m["expressions"] for m in page.evaluate(PROSE)}
    after = read_prose(page, with_numbers)
    page.evaluate(SHOW, with_numbers[0])
    page.screenshot(path=SCREENSHOTS / "jupyterlab-live-prose-2-fixture-edited.png")
    page.close()
    changed = [index for index in with_numbers if after[index] != before[index]]
    unshown = [
        (index, shown_text(entry["result"]))
        for index in with_numbers
        for entry in expected[index]
        if shown_text(entry["result"]) not in after[index]
    ]
    assert lab_results == expected, json.dumps(lab_results)[:500]
    assert changed and not unshown, (
        f"after the fixture edit, sentences changed in cells {changed}; not shown: {unshown[:5]}"
    )
