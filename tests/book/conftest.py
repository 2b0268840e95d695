"""Start the fixture-edit runs in a second process when collection ends; run their tests last.

Executing every chapter under every fixture variant is the slowest part of `pytest --nbval`. The
runs need no result from any other test, so `python -m tests.book.variant_runs` executes them on
the second core while this process runs the unit tests, nbval and the browser tests; the
fixture-edit tests are moved to the end of the session and read the executed notebooks.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

import pytest

from tests.book.variant_runs import VARIANT_RUNS

ROOT = Path(__file__).resolve().parents[2]
VARIANT_TEST = "test_fixture_edit_follows_everywhere"
_LOG_HANDLE = pytest.StashKey[IO[bytes]]()


def _is_variant_case(item: pytest.Item) -> bool:
    return getattr(item, "originalname", None) == VARIANT_TEST


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the fixture-edit cases to the end, so the background runs have time to finish."""
    if hasattr(config, "workerinput"):
        return  # pytest-xdist: the root conftest.py orders the work
    items.sort(key=_is_variant_case)  # stable: every other test keeps its order


def pytest_collection_finish(session: pytest.Session) -> None:
    cases = [
        f"{item.callspec.params['md'].stem}:{item.callspec.params['variant']}"
        for item in session.items
        if _is_variant_case(item)
    ]
    if not cases or session.config.option.collectonly or hasattr(session.config, "workerinput"):
        return  # under pytest-xdist each worker runs the variant cases it is given, inline
    out = Path(tempfile.mkdtemp(prefix="fixture-variants-"))
    log = out / "runs.log"
    handle = log.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.book.variant_runs", str(out), *cases],
        cwd=ROOT,
        stdout=handle,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    session.config.stash[VARIANT_RUNS] = (out, process, log)
    session.config.stash[_LOG_HANDLE] = handle


def pytest_unconfigure(config: pytest.Config) -> None:
    runs = config.stash.get(VARIANT_RUNS, None)
    if runs is None:
        return
    out, process, _ = runs
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    config.stash[_LOG_HANDLE].close()
    shutil.rmtree(out, ignore_errors=True)
