"""Which machine a benchmark ran on: CPU, the SIMD level numpy dispatches to, the BLAS kernel.

Ratios between the engine and handwritten numpy depend on these (an AVX-512 machine and an
AVX2 one differ by a third on the medium block), so every stored run records them.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform
import sys
from datetime import UTC, datetime

import numpy as np


def cpu_model() -> str:
    """The CPU's model name (Linux), else the platform's processor string."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl")


def cpu_flags() -> str:
    """The SIMD flags the CPU reports (Linux /proc/cpuinfo), of those numpy and BLAS use."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("flags"):
                    present = set(line.split(":", 1)[1].split())
                    return " ".join(f for f in SIMD_FLAGS if f in present)
    except OSError:
        pass
    return "unknown"


def simd_level() -> str:
    """The SIMD target numpy's float64 exp runs in this process (X86_V4 = AVX-512, V3 = AVX2).

    Read from numpy's dispatch table, so ``NPY_DISABLE_CPU_FEATURES`` is taken into account.
    """
    from numpy.lib.introspect import opt_func_info

    info = opt_func_info(func_name="^exp$", signature="float64").get("exp", {})
    target = next(iter(info.values()), {}).get("current", "unknown")
    plain = {"X86_V4": "AVX-512", "X86_V3": "AVX2", "X86_V2": "SSE4.2"}.get(target)
    return f"{target} ({plain})" if plain else target


def blas_kernel() -> str:
    """The BLAS numpy calls, with the kernel OpenBLAS picked at run time (e.g. SkylakeX)."""
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    name = f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()
    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*")):
        for symbol in ("scipy_openblas_get_corename64_", "openblas_get_corename"):
            try:
                function = getattr(ctypes.CDLL(path), symbol)
            except (OSError, AttributeError):
                continue
            function.restype = ctypes.c_char_p
            return f"{name}, kernel {function().decode()}"
    return name


def describe() -> dict:
    """The machine fields every stored benchmark run carries."""
    return {
        "cpu": cpu_model(),
        "cpu_flags": cpu_flags(),
        "cores": os.cpu_count(),
        "simd": simd_level(),
        "blas": blas_kernel(),
        "machine": platform.machine(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
    }


def machine_line(report: dict) -> str:
    """One line naming the machine a report was measured on."""
    m = report.get("machine_info")
    if not m:
        return "machine: not recorded"
    threads = m.get("blas_threads", "default")
    flags = f" (flags: {m['cpu_flags']})" if m.get("cpu_flags") else ""
    return (
        f"machine: {m['cpu']}{flags}, {m['cores']} cores, numpy SIMD {m['simd']}, {m['blas']}, "
        f"BLAS threads {threads}"
    )


def run_fields() -> dict:
    """The fields that open every stored report: when, with which Python and numpy, on what."""
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "machine_info": describe(),
        "machine": platform.machine(),
    }
