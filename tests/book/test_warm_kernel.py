"""A kernel forked from the template (tests/book/warm_kernel.py) behaves as a fresh python3 one.

The same small notebook runs in an ordinary kernel and in a forked one; every output must be
the same: the working directory, the argv and path a fresh kernel has, an inline figure, the
environment jupyter_client gives it, a subprocess (the template ignores SIGCHLD; a kernel must
not) and an interrupt. A client with another environment gets an ordinary kernel, not a fork.
"""

from __future__ import annotations

import json
import os
import time

import nbformat
import pytest
from jupyter_client.manager import AsyncKernelManager, KernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient

from tests.book import warm_kernel
from tools.sync_notebooks import BOOK

CELLS = [
    "import os, sys\nprint(os.getcwd(), os.path.basename(sys.argv[0]), sys.path[0] == '')",
    "print(sorted(k for k in os.environ if k.startswith('JPY_')), os.environ['MPLBACKEND'])",
    "import subprocess\nprint(subprocess.run([sys.executable, '-c', 'print(7)'],"
    " capture_output=True, text=True).stdout)",
    "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.show()",
    "import numpy as np\nprint(sorted(k for k, on in np._core._multiarray_umath.__cpu_features__"
    ".items() if on))",
]


def outputs(manager: AsyncKernelManager) -> list[str]:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    run_sync(manager.start_kernel)(cwd=str(BOOK))
    NotebookClient(notebook, km=manager, timeout=60, shutdown_kernel="immediate").execute(
        cleanup_kc=True
    )
    return [json.dumps(merged_streams(cell.outputs), sort_keys=True) for cell in notebook.cells]


def merged_streams(outputs: list) -> list:
    """The outputs with consecutive stream chunks of one stream joined: a busy kernel sends
    ``print``'s text and its newline in one message or in two, whichever kernel it is."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            output["output_type"] == "stream"
            and previous is not None
            and previous["output_type"] == "stream"
            and previous["name"] == output["name"]
        ):
            merged[-1] = {**previous, "text": previous["text"] + output["text"]}
        else:
            merged.append(dict(output))
    return merged


def test_a_forked_kernel_gives_a_fresh_kernels_outputs(capfd: pytest.CaptureFixture) -> None:
    fresh = outputs(AsyncKernelManager(kernel_name="python3"))
    capfd.readouterr()
    forked = outputs(
        AsyncKernelManager(
            kernel_name=warm_kernel.NAME, kernel_spec_manager=warm_kernel.spec_manager()
        )
    )
    assert "an ordinary kernel" not in capfd.readouterr().err  # it was a fork
    assert forked == fresh
    assert "image/png" in fresh[3] and "7" in fresh[2], fresh  # the cells did run


def test_an_interrupt_reaches_the_forked_kernel() -> None:
    manager = KernelManager(
        kernel_name=warm_kernel.NAME, kernel_spec_manager=warm_kernel.spec_manager()
    )
    manager.start_kernel(cwd=str(BOOK))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=30)
        request = client.execute("import time\ntime.sleep(60)")
        while not (  # the kernel has begun this request (on a busy machine that takes a while)
            (status := client.get_iopub_msg(timeout=20))["msg_type"] == "status"
            and status["content"]["execution_state"] == "busy"
            and status["parent_header"].get("msg_id") == request
        ):
            pass
        time.sleep(0.5)  # from busy into time.sleep itself
        manager.interrupt_kernel()
        reply = client.get_shell_msg(timeout=20)
        while reply["parent_header"].get("msg_id") != request:
            reply = client.get_shell_msg(timeout=20)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_another_environment_gets_an_ordinary_kernel(capfd: pytest.CaptureFixture) -> None:
    manager = AsyncKernelManager(
        kernel_name=warm_kernel.NAME, kernel_spec_manager=warm_kernel.spec_manager()
    )
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import os\nprint(os.environ['LFS_OTHER'])")]
    )
    run_sync(manager.start_kernel)(cwd=str(BOOK), env={**os.environ, "LFS_OTHER": "yes"})
    NotebookClient(notebook, km=manager, timeout=60, shutdown_kernel="immediate").execute(
        cleanup_kc=True
    )
    assert notebook.cells[0].outputs[0]["text"] == "yes\n"
    assert "an ordinary kernel (environment differs in ['LFS_OTHER'])" in capfd.readouterr().err
