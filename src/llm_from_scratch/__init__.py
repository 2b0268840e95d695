"""Transformer Blocks from Scratch: a small numpy reverse-mode engine and transformer layers."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["claim"]


def __getattr__(name: str) -> Any:
    """``claim``, imported on first use: importing a submodule loads no numpy.

    ``llm_from_scratch.train.limit_blas_threads`` must run before numpy loads; an eager import
    here loaded numpy (through claims) the moment ``llm_from_scratch.train`` was imported.
    """
    if name == "claim":
        from .claims import claim

        return claim
    raise AttributeError(f"module 'llm_from_scratch' has no attribute {name!r}")
