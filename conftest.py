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

import os
import platform

import numpy  # noqa: F401  (imported before the variable is set: this process stays native)

BASELINE_ONLY = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"  # numpy 2.4's dispatch targets on x86-64
if platform.machine().lower() in {"x86_64", "amd64"}:
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", BASELINE_ONLY)
