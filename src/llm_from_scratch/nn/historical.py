"""Historical contrasts: pre-modern layer pieces the book sets beside a layer, never used by one.

One adaptive unit's weighted response (Chapter 2, beside ``Linear``) and the hidden activations
of Bengio et al. and of the original Transformer (Chapter 4, beside SiLU). They compute model
outputs from values, like the layers here, and no trace records or reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autodiff import Tensor
from ..errors import WidthError


def scalar_weighted_response(
    inputs: Sequence[float], weights: Sequence[float], bias: float
) -> float:
    """One adaptive unit's response, r = Σᵢ xᵢwᵢ + b: a single output, not a layer.

    ``Linear`` does not call this; it exists so a chapter can set one scalar unit beside the
    shared matrix product and see that it reproduces one output coordinate.
    """
    inputs = [float(v) for v in inputs]
    weights = [float(v) for v in weights]
    if len(inputs) != len(weights):
        raise WidthError(
            f"A weighted response pairs each input with one weight; got {len(inputs)} inputs "
            f"and {len(weights)} weights. Pass equally long sequences."
        )
    total = 0.0
    for feature, weight in zip(inputs, weights, strict=True):
        total += feature * weight
    return total + float(bias)


def tanh_hidden(values: Any) -> np.ndarray:
    """tanh(z) elementwise: the hidden activation of Bengio et al.'s neural language model."""
    return Tensor(values).tanh().value


def relu_hidden(values: Any) -> np.ndarray:
    """max(z, 0) elementwise: the activation of the original Transformer's feed-forward layer."""
    return Tensor(values).relu().value
