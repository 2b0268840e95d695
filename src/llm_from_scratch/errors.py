"""The exception types the whole package raises.

Every message states the rule, what was received and, where useful, the fix. Bad shapes, widths,
ranks and arguments are ``ValueError`` subclasses; misuse of the tape is a ``RuntimeError`` one.
Catch :class:`FromScratchError` to catch anything the package raises on purpose.
"""

from __future__ import annotations


class FromScratchError(Exception):
    """Base of every error the package raises deliberately."""


# --- values: shapes, widths, ranks, arguments --------------------------------------------------


class ShapeError(FromScratchError, ValueError):
    """A tensor has the wrong rank or shape for the operation."""


class WidthError(ShapeError):
    """A feature width is zero, or does not match the width a layer expects."""


class RankError(ShapeError):
    """A tensor has the wrong number of axes."""


class SeedShapeError(ShapeError):
    """The seed handed to ``backward`` does not have the output's shape."""


class ArgumentError(FromScratchError, ValueError):
    """An argument has a value outside what the function accepts."""


class InitializationError(ArgumentError):
    """A parameter cannot be initialised from the arguments given (e.g. zero fan-in)."""


class ParameterError(ArgumentError):
    """Parameter names or a state dict do not fit the module (duplicate, unknown, missing)."""


# --- the tape ------------------------------------------------------------------------------------


class TapeError(FromScratchError, RuntimeError):
    """The tape was used in a way reverse mode does not allow."""


class GraphReleasedError(TapeError):
    """A backward pass reached a graph that an earlier backward already released."""


class NoGradientError(TapeError):
    """``backward`` was called on a tensor that does not require gradients."""


# --- Linear (checked in this order: weight rank, widths, bias rank, bias width) ---


class WeightRankError(RankError):
    """A projection weight is not a rank-2 [input_width, output_width] matrix."""


class ZeroInputWidthError(WidthError):
    """A projection was asked to read zero input features."""


class ZeroOutputWidthError(WidthError):
    """A projection was asked to produce zero output features."""


class BiasRankError(RankError):
    """A bias is not a rank-1 vector."""


class BiasWidthError(WidthError):
    """A bias has a different width from the projection's output."""


class ScalarInputError(RankError):
    """A layer that reads a feature axis was given a rank-0 input."""


class InputWidthError(WidthError):
    """An input's last axis differs from the width the layer reads."""
