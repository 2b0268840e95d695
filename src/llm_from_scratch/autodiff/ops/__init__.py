"""Every registered op, importable by name (``ops.add``, ``ops.softmax``, …).

Importing the op modules registers their ops in :data:`~..registry.OPS`; this package then
exposes each one under its name, so a new op in one of these files needs no edit here.
"""

from ..registry import OPS
from . import elementwise, linalg, reductions, shape  # noqa: F401  (registers the primitives)

# isort: split
# Registered after the primitives they are built from, so listings show the primitives first.
from . import composite, fused_attention, fused_ffn  # noqa: F401

globals().update(OPS)  # ops.<name> for every registered op
from .reductions import mean  # noqa: E402, F401  (a composite function: sum times a constant)
from .shape import concat, stack  # noqa: E402, F401  (take a list of tensors; call the concat op)

__all__ = sorted({*OPS, "concat", "mean", "stack"})
