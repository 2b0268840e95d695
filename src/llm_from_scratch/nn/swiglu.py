"""Gated feed-forward layers: FFN(X) = (act(X W_g) ⊙ (X W_u)) W_2, one position at a time.

:class:`GatedFeedForward` holds the shared structure: three :class:`Linear` children ``gate``
[d_in, d_ff], ``up`` [d_in, d_ff] and ``down`` [d_ff, d_out], created in that order, bias-free
unless built with ``bias=True`` (then b_g, b_u [d_ff] and b_2 [d_out] start at zero), and
a forward pass composed from existing engine ops (projection, activation, elementwise product,
projection). A subclass only names its gate activation: :class:`SwiGLU` uses SiLU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from ..autodiff import Tensor, ops
from ..autodiff.ops.fused_ffn import GATE_ACTIVATIONS
from ..errors import FromScratchError, WidthError
from ..random import SplitMix64
from ..validate import as_flag, as_width, element_count, generator
from .linear import Linear
from .module import Module, as_tensor, check_name, mark_fused

PROJECTIONS = ("gate", "up", "down")

T = TypeVar("T")
G = TypeVar("G", bound="GatedFeedForward")


def _named(where: str, step: Callable[[], T]) -> T:
    """Run ``step``; re-raise a package error as its own class, its message led by ``where``."""
    try:
        return step()
    except FromScratchError as error:  # the class says what went wrong, the prefix says where
        raise type(error)(f"{where}: {error}") from error


@dataclass(frozen=True)
class GatedIntermediates:
    """One forward pass, stage by stage: A = XW_g, S = act(A), U = XW_u, H = S⊙U, Y = HW_2."""

    A: Tensor  # (..., d_ff) gate pre-activation
    S: Tensor  # (..., d_ff) activated gate
    U: Tensor  # (..., d_ff) up branch
    H: Tensor  # (..., d_ff) gated product
    Y: Tensor  # (..., d_out) output

    def as_dict(self) -> dict[str, Tensor]:
        """The stages in forward order, keyed by their letters."""
        return {"A": self.A, "S": self.S, "U": self.U, "H": self.H, "Y": self.Y}


class GatedFeedForward(Module):
    """Y = (act(X W_g + b_g) ⊙ (X W_u + b_u)) W_2 + b_2; bias-free (no b) unless ``bias=True``."""

    activation: ClassVar[str] = ""  # the Tensor method applied to the gate branch, e.g. "silu"

    def __init__(
        self,
        input_width: int,
        hidden_width: int,
        output_width: int,
        *,
        bias: bool = False,
        name: str = "ffn",
        rng: SplitMix64,
    ) -> None:
        kind = type(self).__name__
        check_name(name, kind)
        bias = as_flag(bias, f"{kind} bias")
        plan = {
            "gate": (input_width, hidden_width),
            "up": (input_width, hidden_width),
            "down": (hidden_width, output_width),
        }
        for projection, (fan_in, fan_out) in plan.items():  # validate before any draw
            self._projection(
                projection,
                lambda a=fan_in, b=fan_out: (
                    as_width(a, "Linear input width"),
                    as_width(b, "Linear output width"),
                ),
            )
        for projection, (fan_in, fan_out) in plan.items():  # every size before any draw
            element_count((fan_in, fan_out), f"{kind} {projection} weight")
        with generator(rng, kind).transaction() as draft:  # gate, up, down: all or nothing
            layers = [
                self._projection(
                    projection,
                    lambda p=projection, a=fan_in, b=fan_out: Linear(
                        a, b, bias=bias, name=f"{name}.{p}", rng=draft
                    ),
                )
                for projection, (fan_in, fan_out) in plan.items()
            ]
        self._build(*layers, name=name)

    @classmethod
    def from_parameters(
        cls: type[G],
        gate_weight: Any,
        up_weight: Any,
        down_weight: Any,
        *,
        gate_bias: Any = None,
        up_bias: Any = None,
        down_bias: Any = None,
        name: str = "ffn",
    ) -> G:
        """A layer holding exactly these weights (order: gate, up, down), and biases if given."""
        check_name(name, cls.__name__)
        weights = {
            "gate": (gate_weight, gate_bias),
            "up": (up_weight, up_bias),
            "down": (down_weight, down_bias),
        }
        layers = [
            cls._projection(
                projection,
                lambda p=projection, w=weight, b=b: Linear.from_parameters(
                    w, b, name=f"{name}.{p}"
                ),
            )
            for projection, (weight, b) in weights.items()
        ]
        return cls._assemble(*layers, name=name)

    def _build(self, gate: Linear, up: Linear, down: Linear, *, name: str) -> None:
        kind = type(self).__name__
        if gate.input_width != up.input_width:
            raise WidthError(
                f"{kind} gate and up projections must read the same input width; got gate "
                f"{gate.input_width} and up {up.input_width}. Give both weights the shape "
                f"[input_width, hidden_width]."
            )
        if gate.output_width != up.output_width:
            raise WidthError(
                f"{kind} gate and up projections must produce the same hidden width, so their "
                f"outputs can be multiplied elementwise; got gate {gate.output_width} and up "
                f"{up.output_width}."
            )
        if down.input_width != gate.output_width:
            raise WidthError(
                f"{kind} down projection must read the hidden width {gate.output_width}; got a "
                f"down weight of shape ({down.input_width}, {down.output_width}). Its first axis "
                f"must be {gate.output_width}."
            )
        Module.__init__(self, name)
        self.input_width = gate.input_width
        self.hidden_width = gate.output_width
        self.output_width = down.output_width
        self.gate = gate  # registration order = forward order = named_parameters() order
        self.up = up
        self.down = down
        self.fused = False  # True: bias-free, the chain recorded as one entry (see fuse_gated)

    @classmethod
    def _projection(cls, projection: str, step: Callable[[], T]) -> T:
        """Run one projection's step; a failure is re-raised, same class, naming the projection."""
        return _named(f"{cls.__name__} {projection} projection", step)

    def _operation(self, operation: str, step: Callable[[], T]) -> T:
        """Run one composed operation; a failure is re-raised, same class, naming the operation."""
        return _named(f"{type(self).__name__} {operation}", step)

    def __repr__(self) -> str:
        biased = [p for p in PROJECTIONS if getattr(self, p).bias is not None]
        kind = "bias-free" if not biased else "affine" if len(biased) == 3 else "biases on "
        kind += "" if len(biased) in (0, 3) else " and ".join(biased)
        return (
            f"{type(self).__name__}({self.input_width} -> {self.hidden_width} -> "
            f"{self.output_width}, {kind}, name={self.name!r})"
        )

    def activate(self, a: Tensor) -> Tensor:
        """The gate activation, applied elementwise to A = X W_g."""
        if not self.activation:
            raise NotImplementedError(f"{type(self).__name__} names no gate activation.")
        return getattr(a, self.activation)()

    def forward_with_intermediates(self, x: Any) -> GatedIntermediates:
        """The named stages A, S, U, H, Y of the one computation ``forward`` returns."""
        x = as_tensor(x, f"{type(self).__name__} input")
        a = self._projection("gate", lambda: self.gate(x))  # (..., d_ff)
        s = self._operation(f"gate activation ({self.activation})", lambda: self.activate(a))
        u = self._projection("up", lambda: self.up(x))  # (..., d_ff)
        h = self._operation("gate product", lambda: s * u)  # (..., d_ff)
        y = self._projection("down", lambda: self.down(h))  # (..., d_out)
        return GatedIntermediates(A=a, S=s, U=u, H=h, Y=y)

    def forward(self, x: Any) -> Tensor:
        """Y = (act(X W_g) ⊙ (X W_u)) W_2 on the last axis; leading axes pass through."""
        if self.fused and self._fusable():
            x = as_tensor(x, f"{type(self).__name__} input")
            if x.ndim >= 2:  # rows: the five entries as one fused_gated_ffn, the same numbers
                self._projection("gate", lambda: self.gate.check_input(x))
                weights = self.gate.weight, self.up.weight, self.down.weight
                return ops.fused_gated_ffn(x, *weights, activation=self.activation)
        return self.forward_with_intermediates(x).Y

    def _fusable(self) -> bool:
        """Whether fused_gated_ffn computes this layer's chain: bias-free, with a gate op it
        knows, applied by the base class's ``activate`` (a subclass may redefine it)."""
        return (
            self.gate.bias is self.up.bias is self.down.bias is None
            and self.activation in GATE_ACTIVATIONS
            and type(self).activate is GatedFeedForward.activate
        )


def fuse_gated(module: Module) -> None:
    """Set ``fused`` on every gated feed-forward layer in ``module``'s tree: a bias-free one
    then records its five entries as one ``fused_gated_ffn`` for inputs of rank ≥ 2.

    The values and gradients are the chain's bit for bit (four tape entries fewer per layer);
    the chain stays what a plain layer records, and what ``forward_with_intermediates`` shows.
    """
    mark_fused(module, GatedFeedForward, "fuse_gated")


class SwiGLU(GatedFeedForward):
    """Y = (SiLU(X W_g) ⊙ (X W_u)) W_2, SiLU(z) = z σ(z) (Shazeer's Swish₁ gate)."""

    activation = "silu"
