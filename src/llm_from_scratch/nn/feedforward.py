"""Position-wise feed-forward layers: the dense two-layer FFN and the sigmoid-gated GLU.

:class:`FeedForward` is FFN(x) = φ(x W₁ + b₁) W₂ + b₂ on the last axis (the row-vector form of
W₂ φ(W₁ x + b₁) + b₂), expanding width D to a hidden width and back (or to another output
width d_out, as the gated layers allow). Its two :class:`Linear` children are ``up`` (W₁, b₁)
and ``down`` (W₂, b₂), the same names the gated layers use.

``activation="gelu_tanh"`` is GPT-2's ``gelu_new``; ``bias=False`` drops b₁ and b₂ (Llama-style
dense layers), ``bias=True`` (the default) keeps them as GPT-2 has them.

:class:`GLU` is the gated layer with a sigmoid gate: (σ(X W_g) ⊙ (X W_u)) W_2, i.e. u ⊙ σ(a)
with the linear branch u = X W_u and the gate pre-activation a = X W_g. It shares gate, up and down
(and their checks) with :class:`~llm_from_scratch.nn.swiglu.SwiGLU`, which gates with SiLU.
"""

from __future__ import annotations

from typing import Any

from ..autodiff import Tensor
from ..errors import ArgumentError, WidthError
from ..random import SplitMix64
from ..validate import as_flag, as_width, element_count, generator
from .linear import Linear
from .module import Module, as_tensor, check_feature_axis, check_name
from .swiglu import GatedFeedForward

#: The activations a dense FFN accepts, each a Tensor method name (or none for identity).
#: "gelu_tanh" is GPT-2's gelu_new (torch's approximate="tanh"), within 4.8e-4 of "gelu".
ACTIVATIONS: tuple[str, ...] = ("gelu", "relu", "silu", "identity", "gelu_tanh")


def check_activation(activation: Any) -> str:
    """Validate an activation name and return it."""
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ArgumentError(
            f"FeedForward activation must be one of {', '.join(map(repr, ACTIVATIONS))}; "
            f"got {activation!r}."
        )
    return str(activation)


def activate(z: Any, activation: str) -> Tensor:
    """φ(z) by name: GELU zΦ(z), ReLU max(z, 0), SiLU zσ(z), z, or GELU_tanh ½z(1 + tanh u).

    u = √(2/π)(z + 0.044715 z³): the approximation GPT-2 was trained with (``gelu_new``).
    """
    z = as_tensor(z, "activate input")
    activation = check_activation(activation)
    return z if activation == "identity" else getattr(z, activation)()


class FeedForward(Module):
    """FFN(x) = φ(x W₁ + b₁) W₂ + b₂: D → hidden → d_out (D unless given), at every position."""

    def __init__(
        self,
        model_width: int,
        hidden_width: int,
        *,
        output_width: int | None = None,
        activation: str = "gelu",
        bias: bool = True,
        name: str = "ffn",
        rng: SplitMix64,
    ) -> None:
        model_width = as_width(model_width, "FeedForward model width")
        hidden_width = as_width(hidden_width, "FeedForward hidden width")
        output_width = (
            model_width
            if output_width is None
            else as_width(output_width, "FeedForward output width")
        )
        for shape in ((model_width, hidden_width), (hidden_width, output_width)):
            element_count(shape, f"FeedForward({model_width} -> {hidden_width}) weight")
        activation = check_activation(activation)
        bias = as_flag(bias, "FeedForward bias")
        check_name(name, "FeedForward")
        with generator(rng, "FeedForward").transaction() as draft:  # W₁, W₂: all or nothing
            up = Linear(model_width, hidden_width, bias=bias, name=f"{name}.up", rng=draft)
            down = Linear(hidden_width, output_width, bias=bias, name=f"{name}.down", rng=draft)
        self._build(up, down, activation, name)

    @classmethod
    def from_parameters(
        cls,
        W1: Any,
        b1: Any,
        W2: Any,
        b2: Any,
        *,
        activation: str = "gelu",
        name: str = "ffn",
    ) -> FeedForward:
        """A layer holding exactly W₁ [D, hidden], b₁ [hidden], W₂ [hidden, d_out], b₂ [d_out].

        Pass ``None`` for a bias to leave that projection bias-free.
        """
        activation = check_activation(activation)
        check_name(name, "FeedForward")
        up = Linear.from_parameters(W1, b1, name=f"{name}.up")
        down = Linear.from_parameters(W2, b2, name=f"{name}.down")
        return cls._assemble(up, down, activation, name)

    def _build(self, up: Linear, down: Linear, activation: str, name: str) -> None:
        if down.input_width != up.output_width:
            raise WidthError(
                f"FeedForward W₂ must read the hidden width {up.output_width} that W₁ produces; "
                f"got W₂ of shape ({down.input_width}, {down.output_width}). Its first axis "
                f"must be {up.output_width}."
            )
        Module.__init__(self, name)
        self.model_width = up.input_width  # the width it reads, D
        self.input_width = up.input_width
        self.hidden_width = up.output_width
        self.output_width = down.output_width  # d_out: D unless built otherwise
        self.activation = activation
        self.up = up  # registration order = forward order = named_parameters() order
        self.down = down

    def __repr__(self) -> str:
        kind = "affine" if self.up.bias is not None else "bias-free"
        return (
            f"FeedForward({self.model_width} -> {self.hidden_width} -> {self.output_width}, "
            f"{self.activation}, {kind}, name={self.name!r})"
        )

    def check_input(self, x: Tensor) -> None:
        """Raise unless x has rank ≥ 1 and its last axis is ``model_width``."""
        if x.ndim and x.shape[-1] == self.model_width:
            return  # the common case, decided before any message is built
        label = f"FeedForward({self.model_width} -> {self.hidden_width} -> {self.output_width})"
        check_feature_axis(
            x,
            self.model_width,
            label,
            f"{label} needs an input with a feature axis; got a rank-0 value. Wrap a single "
            f"token as shape ({self.model_width},).",
        )

    def forward(self, x: Any) -> Tensor:
        """φ(x W₁ + b₁) W₂ + b₂ on the last axis; leading axes pass through."""
        x = as_tensor(x, "FeedForward input")
        self.check_input(x)
        hidden = activate(self.up(x), self.activation)  # (..., hidden)
        return self.down(hidden)  # (..., d_out)


class GLU(GatedFeedForward):
    """Y = (σ(X W_g) ⊙ (X W_u)) W_2: the linear branch u = X W_u gated by σ(a), a = X W_g."""

    activation = "sigmoid"


__all__ = ["ACTIVATIONS", "GLU", "FeedForward", "activate", "check_activation"]
