"""Transformer Blocks from Scratch: a small numpy reverse-mode engine and transformer layers."""

__version__ = "0.1.0"

from .claims import claim

__all__ = ["claim"]
