"""Execute fixture-edit variants in a second process, while the rest of `pytest --nbval` runs.

`tests/book/conftest.py` starts ``python -m tests.book.variant_runs OUT CASE...`` as soon as
collection ends, with every selected case of ``test_fixture_edit_follows_everywhere`` as
``<chapter stem>:<variant>``; those tests are moved to the end of the run and read the executed
notebooks from ``OUT``. On two cores this overlaps the variants with the unit tests, nbval and
the browser tests instead of running them after. For each case it writes
``OUT/<stem>--<variant>.ipynb`` (the executed notebook) or ``OUT/<stem>--<variant>.error``
(the cell error), atomically, so a reader of ``OUT`` never sees half a file.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tests.book import warm_kernel
from tools.sync_notebooks import BOOK, read_source

# Where conftest.py keeps (results folder, process, log); defined here, in a module both
# conftest.py and the tests import, so both see one key.
VARIANT_RUNS = pytest.StashKey[tuple[Path, "subprocess.Popen[bytes]", Path]]()
CELL_TIMEOUT = 120  # seconds per cell; the chapters' cells take well under one
FIXTURE_TAG = "fixture"
VARIANTS_DIR = Path(__file__).parent / "fixture_variants"


def variants_path(md: Path) -> Path:
    """book/02-linear-layers.md -> tests/book/fixture_variants/02_linear_layers.py"""
    return VARIANTS_DIR / (md.stem.replace("-", "_") + ".py")


def load_variants(md: Path) -> ModuleType:
    """The chapter's variants module (VARIANTS, MUST_CHANGE); AssertionError if it is missing."""
    path = variants_path(md)
    assert path.is_file(), (
        f"{md.name} has no fixture variants: create {path.relative_to(BOOK.parent)} with "
        "VARIANTS = {name: fixture cell source} and MUST_CHANGE = [glue keys]."
    )
    spec = importlib.util.spec_from_file_location(f"fixture_variants_{md.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def result_path(out: Path, stem: str, variant: str, suffix: str) -> Path:
    return out / f"{stem}--{variant}{suffix}"


def fixture_index(notebook: nbformat.NotebookNode) -> int | None:
    """Index of the one code cell tagged ``fixture``, or None if there is not exactly one."""
    tagged = [
        i
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and FIXTURE_TAG in cell.metadata.get("tags", [])
    ]
    return tagged[0] if len(tagged) == 1 else None


def edited_chapter(md: Path, fixture_source: str) -> nbformat.NotebookNode:
    """The chapter with its fixture cell replaced by ``fixture_source``."""
    notebook = read_source(md)
    index = fixture_index(notebook)
    if index is None:
        raise ValueError(f"{md.name} has no single cell tagged `{FIXTURE_TAG}`.")
    notebook.cells[index].source = fixture_source
    return notebook


def _started_kernel() -> AsyncKernelManager:
    """A fresh python3 kernel process, launched with working directory book/ (not waited for).

    It is forked from a template that has imported the book's libraries and nothing else
    (tests/book/warm_kernel.py): a kernel never used before, without a second of imports.
    """
    manager = AsyncKernelManager(
        kernel_name=warm_kernel.NAME, kernel_spec_manager=warm_kernel.spec_manager()
    )
    run_sync(manager.start_kernel)(cwd=str(BOOK))
    return manager


def _shut_down_spares() -> None:
    while _SPARE:
        manager = _SPARE.pop()
        run_sync(manager.shutdown_kernel)(now=True)


_SPARE: list[AsyncKernelManager] = []  # the next run's kernel, starting while this one runs
atexit.register(_shut_down_spares)


def execute(notebook: nbformat.NotebookNode, *, another: bool = True) -> nbformat.NotebookNode:
    """Run every cell in a fresh python3 kernel with working directory book/.

    Each run gets a kernel process of its own, never used before. While it runs, the next
    run's kernel starts (``another``: a run may follow), so the next run does not wait for a
    kernel's start-up; a kernel is shut down at once when its notebook has run.
    """
    manager = _SPARE.pop() if _SPARE else _started_kernel()
    if another:
        _SPARE.append(_started_kernel())
    client = NotebookClient(
        notebook,
        km=manager,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(BOOK)}},
        record_timing=False,
        shutdown_kernel="immediate",
    )
    client.execute(cleanup_kc=True)  # shuts the kernel down, although this client did not start it
    return notebook


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def run_case(
    out: Path, stem: str, variant: str, fixture_source: str, *, another: bool = True
) -> None:
    try:
        notebook = execute(edited_chapter(BOOK / f"{stem}.md", fixture_source), another=another)
    except (CellExecutionError, ValueError) as error:
        _write(result_path(out, stem, variant, ".error"), str(error))
    else:
        _write(result_path(out, stem, variant, ".ipynb"), nbformat.writes(notebook))


def main(argv: list[str]) -> None:
    out = Path(argv[0])
    cases = argv[1:]
    for number, case in enumerate(cases, start=1):
        stem, variant = case.split(":", 1)
        source = load_variants(BOOK / f"{stem}.md").VARIANTS[variant]
        run_case(out, stem, variant, source, another=number < len(cases))


if __name__ == "__main__":
    main(sys.argv[1:])
