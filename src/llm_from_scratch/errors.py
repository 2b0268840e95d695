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


# --- Positions (sinusoidal encodings, ALiBi, RoPE) ---


class OddWidthError(WidthError):
    """A sinusoidal table or a rotary embedding was asked for an odd width (pairs need even)."""


class PairingError(ArgumentError):
    """A rotation was asked for a coordinate pairing other than "interleaved" or "half"."""


class AngleShapeError(ShapeError):
    """Rotation angles do not broadcast to one angle per coordinate pair of the input."""


class PositionShapeError(ShapeError):
    """Positions do not broadcast to one position per row of the input [..., T, d_h]."""


class QueryLengthError(ShapeError):
    """More queries than keys: queries are the last L of the S key positions, so L <= S."""


class RotaryWidthError(WidthError):
    """The input's last axis differs from the head width a rotary embedding was built for."""


class AlibiHeadCountError(ArgumentError):
    """An ALiBi head count is not a positive integer, or differs from the scheme's own count."""


# --- Gated feed-forward layers: SwiGLU, GLU (projections checked gate, up, down) ---


class GatedFeedForwardError(FromScratchError, ValueError):
    """A gated feed-forward layer (SwiGLU, GLU, ...) rejected its parameters or input."""


class GatedProjectionError(GatedFeedForwardError):
    """One projection of a gated layer (``gate``, ``up`` or ``down``) rejected a value."""

    def __init__(self, message: str, *, projection: str) -> None:
        super().__init__(message)
        self.projection = projection


class GatedOperationError(GatedFeedForwardError):
    """A composed operation of a gated layer (the gate activation or the product) failed."""

    def __init__(self, message: str, *, operation: str) -> None:
        super().__init__(message)
        self.operation = operation


class BranchInputWidthError(GatedFeedForwardError, WidthError):
    """The gate and up projections read different input widths."""


class BranchHiddenWidthError(GatedFeedForwardError, WidthError):
    """The gate and up projections produce different hidden widths."""


class DownInputWidthError(GatedFeedForwardError, WidthError):
    """The down projection does not read the hidden width the branches produce."""


# --- Multi-head attention (split/merge heads, scaled dot-product attention, masks) ---


class HeadCountError(ArgumentError):
    """A head count is not a positive integer."""


class HeadSplitError(WidthError):
    """The model width D is not divisible by the head count H, so d_h = D / H is not whole."""


class AttentionRankError(RankError):
    """An attention input has the wrong number of axes ([B,T,D] or [B,H,T,d_h])."""


class AttentionShapeError(ShapeError):
    """Queries, keys and values disagree on batch, heads, widths or lengths."""


class MaskShapeError(ShapeError):
    """A mask is not [L,S] or [B·H,L,S] (attention mask) or [B,S] (key padding mask)."""


class MaskTypeError(ArgumentError):
    """A mask is neither Boolean nor float, holds NaN or +inf, or the two masks' types differ."""


class ScoreBiasError(ShapeError):
    """A score bias does not broadcast to the scores [B,H,L,S] or is not finite."""


class AttentionWeightError(ShapeError):
    """Attention projection weights are not four [D,D] matrices."""


# --- Normalization, feed-forward, residual paths, parameter budgets (LayerNorm, RMSNorm, FFN) ---


class EpsilonError(ArgumentError):
    """A normalization epsilon is not a finite real number at least 0."""


class NormWidthError(WidthError):
    """A normalization layer was asked to normalize fewer than one feature."""


class NormParameterShapeError(ShapeError):
    """A normalization gain or bias is not a non-empty [width] vector matching the layer."""


class ActivationError(ArgumentError):
    """A feed-forward activation name is not one of the supported choices."""


class FeedForwardWidthError(WidthError):
    """A feed-forward layer's two projections do not fit: D → hidden → D."""


class ResidualOrderingError(ArgumentError):
    """A residual wrapper was asked for an ordering other than "pre" or "post"."""


class ResidualShapeError(ShapeError):
    """A residual branch returned a shape different from its input, so x + F(x) is undefined."""


class BudgetArgumentError(ArgumentError):
    """A parameter-budget argument (width, multiplier, layer or vocabulary count) is invalid."""


# --- Mixture of experts (top-k gates, router, capacity) ---


class ExpertCountError(ArgumentError):
    """A router or mixture was asked for a number of experts or a k it cannot serve."""


class CapacityError(ArgumentError):
    """An expert capacity or overflow policy is outside what the mixture accepts."""


# --- Transformer block, embedding and decoder ---


class BlockConfigError(ArgumentError):
    """A block or decoder option (norm, order, ffn, positions) is not one the package offers."""


class TokenIdError(ArgumentError):
    """Token IDs are not integers in [0, vocab_size), or prompt lengths do not fit the batch."""


# --- generation ------------------------------------------------------------------------------


class ContextLengthError(TokenIdError):
    """A prompt, or a position to write, does not fit the context (the positions a cache holds)."""
