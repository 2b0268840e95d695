"""The exception types the whole package raises: ten, one per thing a caller would catch.

Every message states the rule, what was received and, where useful, the fix; the message, not
the class, tells one check from another. Bad shapes, widths, ranks and arguments are
``ValueError`` subclasses; misuse of the tape is a ``RuntimeError`` one. Catch
:class:`FromScratchError` to catch anything the package raises on purpose.

    FromScratchError
    ├── ShapeError (ValueError)
    │   ├── WidthError
    │   └── RankError
    ├── ArgumentError (ValueError)
    │   ├── ParameterError
    │   └── TokenError
    └── TapeError (RuntimeError)
        ├── GraphReleasedError
        └── NoGradientError
"""

from __future__ import annotations


class FromScratchError(Exception):
    """Base of every error the package raises deliberately."""


# --- values: shapes, widths, ranks ---------------------------------------------------------------


class ShapeError(FromScratchError, ValueError):
    """A tensor, mask, bias, position or parameter does not have the shape the operation needs."""


class WidthError(ShapeError):
    """A feature width is zero, odd where pairs are needed, or differs from the width expected."""


class RankError(ShapeError):
    """A tensor, weight or bias has the wrong number of axes (a rank-0 input, a rank-3 weight)."""


# --- values: arguments ---------------------------------------------------------------------------


class ArgumentError(FromScratchError, ValueError):
    """An argument (a count, a name, an option, a number) has a value the function refuses."""


class ParameterError(ArgumentError):
    """Parameter names, a state dict or a checkpoint do not fit the module or the optimizer."""


class TokenError(ArgumentError):
    """Token IDs lie outside [0, vocab_size), or prompts and positions do not fit the context."""


# --- the tape ------------------------------------------------------------------------------------


class TapeError(FromScratchError, RuntimeError):
    """The tape was used in a way reverse mode does not allow."""


class GraphReleasedError(TapeError):
    """A backward pass reached a graph that an earlier backward already released."""


class NoGradientError(TapeError):
    """``backward`` was called on a tensor that does not require gradients."""
