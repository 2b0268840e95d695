"""Parameters and modules: the layers of a transformer block, built from autodiff ops."""

from .attention import (
    MultiHeadAttention,
    PositionScheme,
    causal_mask,
    merge_heads,
    scaled_dot_product_attention,
    sliding_window_mask,
    split_heads,
)
from .block import BlockStages, TransformerBlock
from .budget import ParameterBudget, matched_gated_hidden_width, parameter_budget
from .decoder import Decoder, DecodeTrace, Embedding
from .feedforward import GLU, FeedForward
from .historical import relu_hidden, scalar_weighted_response, tanh_hidden
from .linear import Linear
from .module import Module, Parameter
from .moe import (
    MixtureOfExperts,
    RoutingReport,
    SparseMoE,
    TopKRouter,
    assign_capacity,
    capacity_from_factor,
    dense_gates,
    importance_loss,
    top_k_gates,
)
from .norms import LayerNorm, RMSNorm, standardize
from .positions import (
    ALiBiPositions,
    LearnedPositions,
    RoPEPositions,
    RotaryEmbedding,
    alibi_bias,
    alibi_slopes,
    pair_frequencies,
    pairing_permutation,
    rotate_pairs,
    rotation_tables,
    sinusoidal_encoding,
)
from .residual import Residual, post_norm, pre_norm, residual
from .swiglu import GatedFeedForward, GatedIntermediates, SwiGLU

__all__ = [
    "GLU",
    "ALiBiPositions",
    "BlockStages",
    "DecodeTrace",
    "Decoder",
    "Embedding",
    "FeedForward",
    "GatedFeedForward",
    "GatedIntermediates",
    "LayerNorm",
    "LearnedPositions",
    "Linear",
    "MixtureOfExperts",
    "Module",
    "MultiHeadAttention",
    "Parameter",
    "ParameterBudget",
    "PositionScheme",
    "RMSNorm",
    "Residual",
    "RoPEPositions",
    "RotaryEmbedding",
    "RoutingReport",
    "SparseMoE",
    "SwiGLU",
    "TopKRouter",
    "TransformerBlock",
    "alibi_bias",
    "alibi_slopes",
    "assign_capacity",
    "capacity_from_factor",
    "causal_mask",
    "dense_gates",
    "importance_loss",
    "matched_gated_hidden_width",
    "merge_heads",
    "pair_frequencies",
    "pairing_permutation",
    "parameter_budget",
    "post_norm",
    "pre_norm",
    "relu_hidden",
    "residual",
    "rotate_pairs",
    "rotation_tables",
    "scalar_weighted_response",
    "scaled_dot_product_attention",
    "sinusoidal_encoding",
    "sliding_window_mask",
    "split_heads",
    "standardize",
    "tanh_hidden",
    "top_k_gates",
]
