"""Linear: one shared affine projection of the last axis, Y = XW + b."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import Tensor, ops
from ..errors import RankError, WidthError
from ..random import SplitMix64, xavier_uniform
from ..validate import as_flag, as_float_array, as_width, element_count, generator
from .module import Module, Parameter, as_tensor, check_feature_axis, check_name, mark_fused


class Linear(Module):
    """Y = XW + b on the last axis: W is [input_width, output_width], b is [output_width].

    Every check runs before anything is drawn, built or computed, and the first failing check
    wins, in this documented order:

    - construction (``Linear(...)``): input width (``ArgumentError`` if not an integer,
      ``WidthError`` if below 1), output width (likewise), the weight's
      size (``ArgumentError`` above :data:`~llm_from_scratch.validate.MAX_ELEMENTS` values),
      ``bias`` (exactly True or False), name, ``rng`` (a SplitMix64); only then is the weight
      drawn, so a failure leaves ``rng`` unadvanced;
    - ``from_parameters``: weight and bias are rectangular arrays of finite numbers
      (``ArgumentError``), weight rank (``RankError``), zero input width (``WidthError``), zero
      output width (``WidthError``), bias rank (``RankError``), bias width (``WidthError``), name;
    - ``forward``: input rank 0 (``RankError``), then the last axis (``WidthError``).
    """

    def __init__(
        self,
        input_width: int,
        output_width: int,
        *,
        bias: bool = True,
        name: str = "linear",
        rng: SplitMix64,
    ) -> None:
        input_width = as_width(input_width, "Linear input width")
        output_width = as_width(output_width, "Linear output width")
        element_count(
            (input_width, output_width), f"Linear({input_width} -> {output_width}) weight"
        )
        bias = as_flag(bias, "bias")
        check_name(name, "Linear")
        rng = generator(rng, "Linear")
        weight = xavier_uniform(input_width, output_width, rng)  # advances rng only on success
        self._build(weight, np.zeros(output_width) if bias else None, name)

    @classmethod
    def from_parameters(cls, weight: Any, bias: Any = None, *, name: str = "linear") -> Linear:
        """A layer holding exactly these values (checked in the documented order)."""
        w = as_float_array(weight, "Linear weight", finite=True)
        if w.ndim != 2:
            raise RankError(
                f"Linear weight must be rank 2, [input_width, output_width]; "
                f"got rank {w.ndim}, shape {w.shape}."
            )
        if w.shape[0] == 0:
            raise WidthError(
                f"Linear weight must read at least one input feature; got shape {w.shape}."
            )
        if w.shape[1] == 0:
            raise WidthError(
                f"Linear weight must produce at least one output feature; got shape {w.shape}."
            )
        b = None
        if bias is not None:
            b = as_float_array(bias, "Linear bias", finite=True)
            if b.ndim != 1:
                raise RankError(
                    f"Linear bias must be rank 1, [output_width]; "
                    f"got rank {b.ndim}, shape {b.shape}."
                )
            if b.shape[0] != w.shape[1]:
                raise WidthError(
                    f"Linear bias width must equal the output width {w.shape[1]}; "
                    f"got {b.shape[0]}."
                )
        return cls._assemble(w, b, check_name(name, "Linear"))

    def _build(self, weight: np.ndarray, bias: np.ndarray | None, name: str) -> None:
        Module.__init__(self, name)
        self.input_width, self.output_width = weight.shape
        self.weight = Parameter(weight, f"{name}.weight")
        self.bias = None if bias is None else Parameter(bias, f"{name}.bias")
        self.fused = False  # True: XW + b recorded as one ``affine`` entry (set by fuse_affine)

    def __repr__(self) -> str:
        kind = "affine" if self.bias is not None else "bias-free"
        return f"Linear({self.input_width} -> {self.output_width}, {kind}, name={self.name!r})"

    def check_input(self, x: Tensor) -> None:
        """Raise unless x has rank ≥ 1 and its last axis is ``input_width``."""
        if x.ndim and x.shape[-1] == self.input_width:
            return  # the common case, decided before any message is built
        label = f"Linear({self.input_width} -> {self.output_width})"
        check_feature_axis(
            x,
            self.input_width,
            label,
            f"{label} needs an input with a feature axis; got a rank-0 value. Wrap a single "
            f"feature vector as shape ({self.input_width},).",
        )

    def forward(self, x: Any) -> Tensor:
        """Y = XW + b on the last axis; leading axes (even empty ones) pass through."""
        x = as_tensor(x, "Linear input")
        self.check_input(x)
        if x.ndim == 1:  # (d_in) → (1, d_in) → (1, d_out) → (d_out)
            y = (x.reshape(1, self.input_width) @ self.weight).reshape(self.output_width)
        else:
            if self.fused and self.bias is not None:  # matmul and add as one entry
                return ops.affine(x, self.weight, self.bias)
            y = x @ self.weight  # (..., d_in) @ (d_in, d_out) → (..., d_out)
        return y if self.bias is None else y + self.bias


def fuse_affine(module: Module) -> None:
    """Set ``fused`` on every Linear in ``module``'s tree: a biased one then records XW + b as
    one ``affine`` entry for inputs of rank ≥ 2 (a single vector keeps matmul then add).

    The values and gradients are the matmul-then-add chain's bit for bit (one temporary and one
    tape entry fewer per layer); the chain stays what a plain Linear records.
    """
    mark_fused(module, Linear, "fuse_affine")
