"""Fixture edits follow everywhere: re-run each chapter with a reader's edited fixture cell.

Every chapter ``book/NN-slug.md`` keeps all of its input numbers in one code cell tagged
``fixture`` and ships ``tests/book/fixture_variants/NN_slug.py`` with

- ``VARIANTS``: ``{name: replacement source for the fixture cell}`` (at least one), and
- ``MUST_CHANGE``: names of glued values (``myst_nb.glue``) that every variant must change;
- optionally ``CLAIM_FLIPS``: ``{name: [statements]}``, the prose claims
  (``llm_from_scratch.claims.claim``) that the variant is known to make false.

For each chapter the notebook is executed once per variant (jupytext read, nbclient, kernel
``python3``, working directory ``book/``), in a second process that runs beside the rest of the
test session (``tests/book/variant_runs.py``, started by ``tests/book/conftest.py``), and
compared with the chapter as written, read from
its paired notebook (whose outputs nbval re-checks against a fresh run). Each run must finish
without a cell error; under each variant every ``MUST_CHANGE`` glue value must differ from the
original, and the widgets' ``<details>`` answer reveals must not all stay the same (so widget
answers are computed, not typed). The claims each variant flips (the notes a false claim shows)
are reported and must be exactly the variant's ``CLAIM_FLIPS`` entry, so a sentence that an
edit makes false, and that nobody expected, shows up. A chapter without a fixture cell or
without variants fails.

Adding a chapter needs no change here: write its variants file.
"""

from __future__ import annotations

import re
import time
from functools import cache
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from llm_from_scratch.claims import failed_claims
from tests.book.variant_runs import (
    VARIANT_RUNS,
    edited_chapter,
    execute,
    load_variants,
    result_path,
    variants_path,
)
from tests.book.variant_runs import fixture_index as tagged_fixture
from tools.sync_notebooks import chapter_sources, paired_path, read_source

CHAPTER_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")
REVEAL = re.compile(r"<details\b")
CHAPTERS = [md for md in chapter_sources() if CHAPTER_NAME.match(md.stem)]
WAIT_LIMIT = 1800  # seconds to wait for the background runs (the whole set takes about 2 min)


def fixture_index(notebook: nbformat.NotebookNode, md: Path) -> int:
    """Index of the one code cell tagged ``fixture``."""
    index = tagged_fixture(notebook)
    assert index is not None, (
        f"{md.name} must keep its input numbers in exactly one code cell tagged "
        "`fixture` (`:tags: [fixture]`)."
    )
    return index


def variant_run(request: pytest.FixtureRequest, md: Path, variant: str) -> nbformat.NotebookNode:
    """The chapter run with the variant's fixture by the background process; fail on error."""
    runs = request.config.stash.get(VARIANT_RUNS, None)
    label = f"{md.name} with fixture variant {variant!r}"
    if runs is None and hasattr(request.config, "workerinput"):  # a pytest-xdist worker
        try:
            notebook = execute(edited_chapter(md, load_variants(md).VARIANTS[variant]))
        except CellExecutionError as error:
            pytest.fail(f"{label}: a cell raised.\n{error}", pytrace=False)
        return checked(notebook, label)
    assert runs is not None, "the background variant runs never started (tests/book/conftest.py)"
    out, process, log = runs
    done, failed = (result_path(out, md.stem, variant, s) for s in (".ipynb", ".error"))
    deadline = time.monotonic() + WAIT_LIMIT
    while not (done.is_file() or failed.is_file()):
        if process.poll() is not None and not (done.is_file() or failed.is_file()):
            pytest.fail(f"{label}: the background run stopped early; its log:\n{log.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"{label}: no result after {WAIT_LIMIT} s.")
        time.sleep(0.2)
    if failed.is_file():
        error = failed.read_text(encoding="utf-8")
        pytest.fail(f"{label}: a cell raised.\n{error}", pytrace=False)
    return checked(nbformat.read(done, as_version=4), label)


def checked(notebook: nbformat.NotebookNode, label: str) -> nbformat.NotebookNode:
    """The executed notebook, after checking that no cell shows an error output."""
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{label}: cell {index} has an error output."
    return notebook


def glued(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """{glue name: text/plain} for every myst-nb glue output (metadata scrapbook.name).

    A glued value's text sits under ``text/plain``, or under ``<mime_prefix>text/plain``
    (``application/papermill.record/text/plain``) when it was glued with ``display=False``.
    """
    values: dict[str, str] = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook", {})
            if "name" in record:
                # glue(..., display=False) stores its text under a prefixed mime type.
                data = output.get("data", {})
                prefix = record.get("mime_prefix", "")
                values[record["name"]] = data.get(prefix + "text/plain", data.get("text/plain"))
    return values


def reveals(notebook: nbformat.NotebookNode) -> list[str]:
    """The widgets' <details> answer reveals (text/html outputs), in notebook order."""
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/html", "")
            if isinstance(text, list):
                text = "".join(text)
            if REVEAL.search(text):
                found.append(text)
    return found


@cache
def original_run(md: Path) -> nbformat.NotebookNode:
    """The chapter as written: the stored outputs of its paired notebook.

    Those outputs are not trusted blindly: tests/test_notebook_pairs.py checks that the pair has
    the chapter's sources, and nbval re-executes it and compares every output.
    """
    return nbformat.read(paired_path(md), as_version=4)


def variant_cases() -> list[Any]:
    cases = []
    for md in CHAPTERS:
        path = variants_path(md)
        names = list(load_variants(md).VARIANTS) if path.is_file() else ["<no variants file>"]
        cases.extend(pytest.param(md, name, id=f"{md.stem}:{name}") for name in names)
    return cases


@pytest.mark.parametrize("md", CHAPTERS, ids=[md.stem for md in CHAPTERS])
def test_chapter_has_fixture_cell_and_variants(md: Path) -> None:
    fixture_index(read_source(md), md)
    module = load_variants(md)
    variants = getattr(module, "VARIANTS", None)
    must_change = getattr(module, "MUST_CHANGE", None)
    assert isinstance(variants, dict) and variants, f"{md.name}: VARIANTS needs at least one."
    assert all(isinstance(s, str) and s.strip() for s in variants.values())
    assert isinstance(must_change, list) and must_change, f"{md.name}: MUST_CHANGE is empty."


@pytest.mark.parametrize(("md", "variant"), variant_cases())
def test_fixture_edit_follows_everywhere(
    request: pytest.FixtureRequest, md: Path, variant: str
) -> None:
    module = load_variants(md)
    original = original_run(md)
    before = glued(original)
    missing = [key for key in module.MUST_CHANGE if key not in before]
    assert not missing, (
        f"{md.name}: MUST_CHANGE names glue keys the chapter never glues: {missing}"
    )

    edited = variant_run(request, md, variant)
    after = glued(edited)

    lost = [key for key in module.MUST_CHANGE if key not in after]
    assert not lost, f"{md.name} [{variant}]: glue keys missing after the edit: {lost}"
    unchanged = {key: before[key] for key in module.MUST_CHANGE if after[key] == before[key]}
    assert not unchanged, (
        f"{md.name} [{variant}]: these glued values did not follow the fixture (typed in, or "
        f"computed from something else): {unchanged}"
    )
    flipped = sorted(set(failed_claims(edited)))
    expected = sorted(set(getattr(module, "CLAIM_FLIPS", {}).get(variant, [])))
    print(f"{md.name} [{variant}] flips {len(flipped)} claims: {flipped}")
    assert flipped == expected, (
        f"{md.name} [{variant}]: the edit makes these sentences false: {flipped}; the variants "
        f"file expects {expected}. Unexpected: {sorted(set(flipped) - set(expected))}; "
        f"expected but still true: {sorted(set(expected) - set(flipped))}. Reword the claim so "
        "it holds for every sensible fixture, or list the flip in CLAIM_FLIPS."
    )
    old_reveals, new_reveals = reveals(original), reveals(edited)
    if old_reveals:
        assert new_reveals != old_reveals, (
            f"{md.name} [{variant}]: every widget answer stayed the same under the edited "
            "fixture; widget answers must be computed from it."
        )


# --- the harness's own readers, on hand-made outputs -----------------------------------------


def _cell_with(*outputs: dict[str, Any]) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("pass")
    cell.outputs = [nbformat.from_dict(output) for output in outputs]
    notebook.cells.append(cell)
    return notebook


def test_glued_reads_prefixed_and_plain_text() -> None:
    hidden = {
        "output_type": "display_data",
        "data": {"application/papermill.record/text/plain": "'[5.5, 0.5, 2]'"},
        "metadata": {"scrapbook": {"name": "y", "mime_prefix": "application/papermill.record/"}},
    }
    shown = {
        "output_type": "display_data",
        "data": {"text/plain": "9"},
        "metadata": {"scrapbook": {"name": "count", "mime_prefix": ""}},
    }
    other = {"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}}
    assert glued(_cell_with(hidden, shown, other)) == {"y": "'[5.5, 0.5, 2]'", "count": "9"}


def test_reveals_finds_details_html_only() -> None:
    reveal = {
        "output_type": "display_data",
        "data": {"text/html": '<details class="lfs-reveal">\n<summary>Show</summary>\n</details>'},
        "metadata": {},
    }
    table = {
        "output_type": "display_data",
        "data": {"text/html": "<table></table>"},
        "metadata": {},
    }
    assert reveals(_cell_with(reveal, table)) == [reveal["data"]["text/html"]]
