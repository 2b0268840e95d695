"""Modules and named parameters.

A parameter is a leaf tensor that requires gradients and carries a stable dotted name such as
``token_projection.weight``. A module owns parameters and child modules; both are registered in
the order they are assigned, which is the order of the forward pass, so ``named_parameters``
lists them in a stable, meaningful order.

Every layer is made in one of two ways, and both end in the layer's own ``_build``, which
registers its parameters and children, so the two ways cannot build different layers:

- ``Layer(widths..., rng=...)`` checks every argument, draws the initial weights from a draft of
  ``rng`` (``rng.transaction()``: a failure leaves the caller's generator unadvanced) and calls
  ``self._build(...)``;
- ``Layer.from_parameters(arrays...)`` checks the given values and returns
  ``cls._assemble(...)``: the same ``_build``, with nothing drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np

from ..autodiff import Tensor
from ..errors import ArgumentError, ParameterError, RankError, ShapeError, WidthError
from ..validate import ErrorType, as_float_array, received


class Parameter(Tensor):
    """A named leaf tensor that requires gradients."""

    __slots__ = ()

    def __init__(self, data: Any, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"A parameter needs a non-empty string name; got {name!r}.")
        super().__init__(data, requires_grad=True, name=name)

    def __repr__(self) -> str:
        body = np.array2string(self.value, separator=", ", prefix="Parameter(")
        return f"Parameter({body}, name={self.name!r})"


def as_tensor(value: Any, label: str, *, error: ErrorType = ArgumentError) -> Tensor:
    """``value`` itself if it is a Tensor (graph kept), else a constant Tensor (NaN allowed)."""
    if isinstance(value, Tensor):
        return value
    return Tensor.wrap(as_float_array(value, label, error=error))


def check_name(name: Any, kind: str) -> str:
    """Validate a module name (a non-empty dotted string) and return it."""
    if not isinstance(name, str) or not name or any(not part for part in name.split(".")):
        raise ArgumentError(
            f"{kind} name must be a non-empty dotted string such as 'token_projection'; "
            f"got {name!r}."
        )
    return name


def check_feature_axis(x: Tensor, width: int, label: str, scalar_message: str) -> None:
    """Raise unless x has a feature axis (rank ≥ 1) whose length is ``width``.

    ``label`` names the layer in the width message; ``scalar_message`` is the whole message for
    a rank-0 input (each layer says in its own words how to add the missing axis).
    """
    if x.ndim == 0:
        raise RankError(scalar_message)
    if x.shape[-1] != width:
        raise WidthError(f"{label} expects input whose last axis is {width}; got shape {x.shape}.")


def check_part(module: Any, label: str, model_width: int, why: str) -> None:
    """``module`` must be a Module that reads and returns [..., model_width] (as it declares)."""
    if not isinstance(module, Module):
        raise ArgumentError(f"{label} must be a Module; got {type(module).__name__}.")
    model = getattr(module, "model_width", None)
    reads = getattr(module, "input_width", model)
    writes = getattr(module, "output_width", model)
    if reads is None:
        reads = getattr(module, "width", None)  # LayerNorm, RMSNorm
        writes = reads if writes is None else writes
    if (reads is not None and reads != model_width) or (
        writes is not None and writes != model_width
    ):
        raise WidthError(
            f"{label} must read and return the model width {model_width}, {why}; got "
            f"{module!r}, reading {reads} and returning {writes}. Build it for width "
            f"{model_width}."
        )


class Module:
    """Base class: registers parameters and children as attributes, in assignment order."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", check_name(name, type(self).__name__))
        object.__setattr__(self, "_members", {})  # attr -> Parameter | Module, forward order

    def __setattr__(self, attr: str, value: Any) -> None:
        if isinstance(value, Parameter | Module):
            self._register(attr, value)
        else:
            self._members.pop(attr, None)
        object.__setattr__(self, attr, value)

    def _register(self, attr: str, value: Parameter | Module) -> None:
        taken = {n for a, m in self._members.items() if a != attr for n in _names_of(m)}
        clash = [n for n in _names_of(value) if n in taken]
        if clash:
            raise ParameterError(
                f"Parameter names must be unique within a module; {type(self).__name__} "
                f"{self.name!r} already has {clash[0]!r}. Give the sub-module another name=."
            )
        self._members[attr] = value

    @classmethod
    def _assemble(cls, *parts: Any, **options: Any) -> Self:
        """A new ``cls`` built from checked parts by ``_build`` alone (``from_parameters``)."""
        module = cls.__new__(cls)  # no __init__: nothing is drawn
        module._build(*parts, **options)
        return module

    def __copy__(self) -> Module:
        """A shallow clone: the same parameter and child objects, its own registry."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        object.__setattr__(clone, "_members", dict(self._members))
        return clone

    # --- parameters --------------------------------------------------------------------------

    def named_parameters(self) -> list[tuple[str, Parameter]]:
        """(name, parameter) pairs in forward order, children's parameters in place."""
        pairs: list[tuple[str, Parameter]] = []
        for value in self._members.values():
            if isinstance(value, Parameter):
                pairs.append((value.name, value))
            else:
                pairs.extend(value.named_parameters())
        return pairs

    def children(self) -> list[Module]:
        """The direct sub-modules, in forward order."""
        return [m for m in self._members.values() if isinstance(m, Module)]

    def modules(self) -> list[Module]:
        """This module and every module below it, each before its children, in forward order."""
        found = [self]
        for child in self.children():
            found.extend(child.modules())
        return found

    def parameters(self) -> list[Parameter]:
        """The parameters, in forward order."""
        return [p for _, p in self.named_parameters()]

    @property
    def parameter_count(self) -> int:
        """How many scalars the parameters hold."""
        return int(sum(p.size for p in self.parameters()))

    def zero_grad(self) -> None:
        """Forget every parameter's accumulated gradient."""
        for p in self.parameters():
            p.grad = None

    def state_dict(self) -> dict[str, np.ndarray]:
        """{name: copy of value} for every parameter, in forward order."""
        return {name: p.value.copy() for name, p in self.named_parameters()}

    def load_state_dict(self, mapping: Mapping[str, Any]) -> None:
        """Copy exact values in; unknown, missing or mis-shaped entries change nothing."""
        params = dict(self.named_parameters())
        unknown = sorted(set(mapping) - set(params))
        missing = [n for n in params if n not in mapping]
        if unknown or missing:
            raise ParameterError(
                f"load_state_dict for {self.name!r} needs exactly the names {list(params)}; "
                f"unknown {unknown}, missing {missing}."
            )
        arrays = {}
        for name, p in params.items():
            value = as_float_array(
                mapping[name], f"load_state_dict: {name}", finite=True, error=ParameterError
            )
            if value.shape != p.shape:
                raise ShapeError(
                    f"load_state_dict: {name} has shape {p.shape}; got {value.shape}."
                )
            arrays[name] = value
        for name, p in params.items():
            p.value = arrays[name]
            p.grad = None

    # --- calling ---------------------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define forward().")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, parameters={self.parameter_count})"


def _names_of(value: Any) -> list[str]:
    if isinstance(value, Parameter):
        return [value.name]
    return [n for n, _ in value.named_parameters()]


def mark_fused(module: Any, kind: type[Module], caller: str) -> None:
    """Set ``fused = True`` on every ``kind`` in ``module``'s tree (fuse_affine, fuse_gated)."""
    if not isinstance(module, Module):
        raise ArgumentError(
            f"{caller} marks the {kind.__name__} layers of a Module; got {received(module)}."
        )
    for part in module.modules():
        if isinstance(part, kind):
            part.fused = True
