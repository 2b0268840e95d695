"""Kernels that `pytest --nbval` starts run numpy's baseline code, the same on every x86-64 CPU.

The book build (`tools/install_and_build.sh`) executes every chapter with numpy's SIMD paths as
the machine has them, and `tests/test_portable_outputs.py` compares that run with the stored
outputs. Here, before any kernel starts, every dispatched SIMD target of numpy 2.4 is turned off
for child processes, so nbval re-executes the chapters under a second numeric configuration and
one `pytest --nbval` proves the outputs on both. This pytest process keeps the native paths
(numpy is imported first), so the unit tests run as a reader's code does. A value already set in
the environment is respected. `OPENBLAS_*` variables are never touched: some machines set them
for correctness.
"""

import gc
import os
import platform

import numpy  # noqa: F401  (imported before the variable is set: this process stays native)
import pytest

from tests.book import warm_kernel

BASELINE_ONLY = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"  # numpy 2.4's dispatch targets on x86-64


def pytest_configure(config: pytest.Config) -> None:
    """Set the variable for kernels started from here; an xdist controller leaves it to workers.

    The workers pytest-xdist starts inherit this process's environment: were it set here, their
    numpy would start on the baseline paths. Each worker sets it after importing numpy instead.
    """
    controller = getattr(config, "workerinput", None) is None and bool(
        config.getoption("numprocesses", default=None)
    )
    if platform.machine().lower() in {"x86_64", "amd64"} and not controller:
        os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", BASELINE_ONLY)
    # Kernels (and torch in the workers) compute on one thread: OMP_NUM_THREADS sets the thread
    # count of numpy's OpenBLAS (when no OPENBLAS_NUM_THREADS is set) and of torch. The book's
    # matrices gain nothing from a second thread, and beside the other worker's busy core the
    # two threads wait on each other: next to one busy process Chapter 11 ran 59.8 s instead
    # of 5.4 s, Chapter 13 23.9 s instead of 11.3 s. nbval still compares every output with
    # the book build's, which ran at the machine's thread count. This process's numpy, loaded
    # above, keeps its threads.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if config.getoption("nbval", default=False) and not controller:
        # nbval's kernels (kernel name in pyproject.toml) are forked from a template that has
        # imported the book's libraries, with this environment: tests/book/warm_kernel.py.
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            filter(None, (warm_kernel.kernels_folder(), os.environ.get("JUPYTER_PATH")))
        )
        warm_kernel.ensure_template()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Keep what is imported out of the cyclic collector's sight (see pytest_collection_finish)."""
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep what was imported and collected out of the cyclic collector's sight.

    Modules, test items and their notebooks live until the session ends. Frozen, a full
    collection walks only what the tests made since: with torch and hypothesis imported, each
    of a worker's 13-18 full collections in a run took 0.3-0.5 s, and pytest runs five more when
    it unconfigures. Garbage the tests make is collected as before.
    """
    gc.freeze()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a notebook's first cell: a template with the environment as it is now."""
    if item.nodeid.split("::", 1)[0].endswith(".ipynb") and item.name == "Cell 0":
        warm_kernel.ensure_template()


# --- scheduling for pytest-xdist ---------------------------------------------------------------
# Work that must stay in one process stays together: a notebook's cells share one kernel, and a
# module's module-scoped fixtures (a JupyterLab server, a checked bug matrix) are built once.
# The fixture-edit runs stand alone and are spread case by case; the per-page browser checks of
# test_screens.py are grouped by page, since they read the same two visits of it. The longest
# work is handed out first, so the two workers finish together.
SPREAD_MODULES = {"tests/book/test_fixture_edits.py"}
PER_PAGE_MODULES = {"tests/browser/test_screens.py"}
# Modules that share one session-scoped fixture: one group (the JupyterLab server is started once).
SHARED_GROUPS = dict.fromkeys(
    ("tests/browser/test_jupyterlab_live_prose.py", "tests/browser/test_jupyterlab_roundtrip.py"),
    "tests/browser/test_jupyterlab_*.py",
)
# Folders whose modules share one: tests/hub's tiny reference models are built once (2-3 s).
SHARED_FOLDERS = ("tests/hub/",)
FIRST = ("tests/book/test_fixture_edits.py", "book/", "tests/browser/")


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return next((i for i, prefix in enumerate(FIRST) if path.startswith(prefix)), len(FIRST))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist: group each notebook and module, longest work first (before xdist)."""
    if not hasattr(config, "workerinput"):
        return
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path in PER_PAGE_MODULES:
            page = getattr(item, "callspec", None) and item.callspec.params.get("path")
            item.add_marker(pytest.mark.xdist_group(f"{path}:{page or item.name}"))
        elif path not in SPREAD_MODULES:
            folder = next((f for f in SHARED_FOLDERS if path.startswith(f)), None)
            item.add_marker(pytest.mark.xdist_group(folder or SHARED_GROUPS.get(path, path)))
    items.sort(key=_rank)  # stable: within a rank, collection order
