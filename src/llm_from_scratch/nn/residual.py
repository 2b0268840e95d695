"""Residual paths around a branch F with a norm N, in the two orderings a block can use.

- pre-norm:  y = x + F(N(x))   the direct path x → y skips the norm entirely;
- post-norm: y = N(x + F(x))   every path, the direct one included, goes through the norm.

The functions take the norm and the branch as callables, so both orderings can run on the very
same parameter objects; :class:`Residual` wraps a (norm, branch) pair as a module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from ..autodiff import Tensor
from ..errors import ArgumentError, ShapeError
from .module import Module, as_tensor, check_name

Ordering = Literal["pre", "post"]
ORDERINGS: tuple[str, ...] = ("pre", "post")

Layer = Callable[[Tensor], Tensor]


def _check_layers(rule: str, **layers: Any) -> None:
    for label, layer in layers.items():
        if not callable(layer):
            raise ArgumentError(
                f"{rule} {label} must be callable (a Module or a function Tensor -> Tensor); "
                f"got {type(layer).__name__}."
            )


def _check_branch_output(x: Tensor, fx: Any, rule: str) -> None:
    if not isinstance(fx, Tensor):
        raise ShapeError(
            f"{rule} adds the branch output to its input, so the branch must return a Tensor; "
            f"got {type(fx).__name__}."
        )
    if fx.shape != x.shape:
        raise ShapeError(
            f"{rule} adds the branch output to its input, so the branch must keep the shape; "
            f"input {x.shape}, branch output {fx.shape}. Make the branch return width "
            f"{x.shape[-1] if x.ndim else '(scalar)'} (e.g. an FFN D → hidden → D)."
        )


def residual(x: Any, branch: Layer) -> Tensor:
    """y = x + F(x): Jacobian I + J_F (the identity is the direct path)."""
    _check_layers("residual", branch=branch)
    x = as_tensor(x, "residual input")
    fx = branch(x)
    _check_branch_output(x, fx, "residual")
    return x + fx


def pre_norm(x: Any, norm: Layer, branch: Layer) -> Tensor:
    """y = x + F(N(x)): normalize the branch input only; the direct path is untouched."""
    _check_layers("pre_norm", norm=norm, branch=branch)
    x = as_tensor(x, "pre_norm input")
    fx = branch(norm(x))
    _check_branch_output(x, fx, "pre_norm")
    return x + fx


def post_norm(x: Any, norm: Layer, branch: Layer) -> Tensor:
    """y = N(x + F(x)): normalize the sum, so the direct path passes through N as well."""
    _check_layers("post_norm", norm=norm, branch=branch)
    x = as_tensor(x, "post_norm input")
    fx = branch(x)
    _check_branch_output(x, fx, "post_norm")
    return norm(x + fx)


def check_ordering(ordering: Any) -> str:
    """Validate an ordering name, "pre" or "post", and return it."""
    if ordering not in ORDERINGS:
        raise ArgumentError(
            f"Residual ordering must be 'pre' (x + F(N(x))) or 'post' (N(x + F(x))); "
            f"got {ordering!r}."
        )
    return str(ordering)


class Residual(Module):
    """One residual step around ``branch`` with ``norm``: pre-norm or post-norm ordering."""

    def __init__(
        self, norm: Module, branch: Module, *, ordering: Ordering = "pre", name: str = "residual"
    ) -> None:
        for label, part in (("norm", norm), ("branch", branch)):
            if not isinstance(part, Module):
                raise ArgumentError(
                    f"Residual {label} must be a Module (e.g. LayerNorm, FeedForward); "
                    f"got {type(part).__name__}."
                )
        ordering = check_ordering(ordering)
        super().__init__(check_name(name, "Residual"))
        self.ordering = ordering
        self.norm = norm  # children in the order the pre-norm forward uses them
        self.branch = branch

    def with_ordering(self, ordering: Ordering) -> Residual:
        """The same norm and branch objects (shared parameters) in another ordering."""
        return Residual(self.norm, self.branch, ordering=ordering, name=self.name)

    def __repr__(self) -> str:
        return (
            f"Residual({self.ordering}-norm, norm={self.norm.name!r}, "
            f"branch={self.branch.name!r}, parameters={self.parameter_count})"
        )

    def forward(self, x: Any) -> Tensor:
        """x + F(N(x)) for "pre", N(x + F(x)) for "post"."""
        if self.ordering == "pre":
            return pre_norm(x, self.norm, self.branch)
        return post_norm(x, self.norm, self.branch)
