"""``limit_blas_threads()`` runs before numpy loads, as Chapter 10 calls it: importing it loads
no numpy (the package's ``__init__`` once imported numpy through ``claim``, so the call came
too late and training in the chapter ran at the machine's BLAS thread count)."""

from __future__ import annotations

import os
import subprocess
import sys

from llm_from_scratch.train import BLAS_THREAD_VARIABLES

PROBE = """
import os, sys
from llm_from_scratch.train import limit_blas_threads
loaded = "numpy" in sys.modules
limit_blas_threads()
from llm_from_scratch import claim  # the package's one name still imports
print(loaded, [os.environ[name] for name in {names!r}], callable(claim))
"""


def test_importing_limit_blas_threads_loads_no_numpy() -> None:
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    code = PROBE.format(names=list(BLAS_THREAD_VARIABLES))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    expected = f"False {['1'] * len(BLAS_THREAD_VARIABLES)} True"
    assert out == expected, f"numpy was loaded before limit_blas_threads() could act: {out}"
