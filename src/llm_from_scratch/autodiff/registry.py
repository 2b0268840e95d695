"""The op registry: each op is a numpy forward with its vector-Jacobian product beside it.

An op is declared once and becomes a callable that records itself on the tape::

    @op
    def mul(x, y):
        return x * y

    @mul.vjp
    def _(grad, _out, x, y):
        return grad * y, grad * x

The forward receives numpy arrays (and keyword parameters); the VJP receives the upstream
gradient, the forward's output and the same inputs, and returns one gradient per input (or a
bare array for a one-input op). A VJP that does not read the output names that parameter
``_out``: it is then passed None, and the backward pass lets the output's array go as soon as
it reaches that op (unless the caller still holds the tensor). A VJP may return gradients in
the broadcast output shape: the engine sums them back to each input's shape in one place
(:func:`unbroadcast`). A VJP that names a ``needs`` parameter receives a tuple of booleans
saying which inputs want a gradient, so it can skip work (a matmul by a constant need not compute
that constant's gradient). An op declared with ``@op(saves=True)`` returns ``(out, saved)`` from
its forward and gets ``saved=`` in its VJP.

An op with parameters may attach a check (``@permute.checks``): it receives the input arrays and
the parameters, raises a typed error for a bad one, and returns the parameters to record,
normalised (non-negative axes) and copied where a VJP will read a caller's array. Inputs that are
not tensors are copied into fresh float64 arrays (:func:`~.checks.as_float_array`), so editing
the caller's array after the forward cannot change the gradient.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ArgumentError, FromScratchError, ShapeError, TapeError
from .checks import as_float_array, received
from .tensor import Tensor, _grad_mode, sequence, unbroadcast

__all__ = ["OPS", "Op", "op", "unbroadcast"]

_sequence = sequence
_new = object.__new__
_F64 = np.dtype(np.float64)


def _as_f64(data: Any) -> np.ndarray:
    return np.asarray(data, dtype=np.float64)


def _constant(data: Any) -> Tensor:
    """A non-tensor input as a constant tensor on a fresh copy (see the module docstring)."""
    return Tensor._constant(as_float_array(data, "An op input"))


OPS: dict[str, Op] = {}


class Op:
    """A differentiable primitive: ``forward`` on arrays plus its VJP, recorded on the tape."""

    __slots__ = (
        "backward",
        "check",
        "doc",
        "forward",
        "name",
        "reads_out",
        "saves",
        "wants_needs",
    )

    def __init__(
        self, forward: Callable[..., Any], *, saves: bool = False, name: str | None = None
    ) -> None:
        if not callable(forward):
            raise ArgumentError(f"An op's forward must be a function; got {received(forward)}.")
        self.name = forward.__name__ if name is None else name
        self.forward = forward
        self.saves = saves
        self.backward: Callable[..., Any] | None = None
        self.check: Callable[..., dict[str, Any]] | None = None
        self.wants_needs = False
        self.reads_out = True
        self.doc = forward.__doc__ or ""
        if self.name in OPS:
            raise TapeError(f"An op named {self.name!r} is already registered.")
        OPS[self.name] = self

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    def vjp(self, backward: Callable[..., Any]) -> Callable[..., Any]:
        """Attach the vector-Jacobian product (used as a decorator under the forward)."""
        if not callable(backward):
            raise ArgumentError(
                f"The VJP of {self.name!r} must be a function; got {received(backward)}."
            )
        names = list(inspect.signature(backward).parameters)
        if len(names) < 2 or names[1] not in ("out", "_out"):
            raise TapeError(
                f"The VJP of {self.name!r} must take (grad, out, *inputs, ...), its second "
                f"parameter named out (or _out when it does not read the output); got "
                f"{names[:2]}."
            )
        self.backward = backward
        self.wants_needs = "needs" in names
        self.reads_out = names[1] == "out"
        return backward

    def checks(self, check: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        """Attach the parameter check: (*input arrays, **params) → the params to record."""
        if not callable(check):
            raise ArgumentError(
                f"The check of {self.name!r} must be a function; got {received(check)}."
            )
        self.check = check
        return check

    def __call__(self, *inputs: Any, **params: Any) -> Tensor:
        # One and two inputs without parameters are spelled out: this is the engine's hottest
        # path, and calling the forward with explicit arguments skips building *args/**kwargs.
        count = len(inputs)
        if count == 2:
            a, b = inputs
            if not isinstance(a, Tensor):
                a = _constant(a)
                inputs = (a, b)
            if not isinstance(b, Tensor):
                b = _constant(b)
                inputs = (a, b)
            record = a.requires_grad or b.requires_grad
            try:
                if self.check is not None:
                    params = self.check(a.value, b.value, **params)
                out = (
                    self.forward(a.value, b.value, **params)
                    if params
                    else self.forward(a.value, b.value)
                )
            except FromScratchError:
                raise
            except (ValueError, TypeError, IndexError) as error:
                raise self._call_error(inputs, params, error) from error
        elif count == 1:
            a = inputs[0]
            if not isinstance(a, Tensor):
                a = _constant(a)
                inputs = (a,)
            record = a.requires_grad
            try:
                if self.check is not None:
                    params = self.check(a.value, **params)
                out = self.forward(a.value, **params) if params else self.forward(a.value)
            except FromScratchError:
                raise
            except (ValueError, TypeError, IndexError) as error:
                raise self._call_error(inputs, params, error) from error
        else:
            inputs = tuple(x if isinstance(x, Tensor) else _constant(x) for x in inputs)
            record = any(t.requires_grad for t in inputs)
            try:
                if self.check is not None:
                    params = self.check(*[t.value for t in inputs], **params)
                out = self.forward(*[t.value for t in inputs], **params)
            except FromScratchError:
                raise
            except (ValueError, TypeError, IndexError) as error:
                raise self._call_error(inputs, params, error) from error
        saved = None
        if self.saves:
            out, saved = out
        result = _new(Tensor)  # the fields of Tensor._constant, inlined on this hot path
        result.value = out if type(out) is np.ndarray and out.dtype is _F64 else _as_f64(out)
        result.grad = result.name = None
        result._retains_grad = False
        if record and _grad_mode.enabled:
            result.requires_grad = True
            # The tape entry: params None lets the backward pass call the VJP directly.
            result._node = (self, inputs, params or None, saved)
            result._seq = next(_sequence)
        else:
            result.requires_grad = False
            result._node = None
        return result

    def _call_error(
        self, inputs: tuple[Tensor, ...], params: dict[str, Any], error: Exception
    ) -> ShapeError | ArgumentError:
        """numpy's complaint about a forward, as the package's error naming the op's inputs."""
        shapes = ", ".join(str(t.value.shape) for t in inputs)
        if isinstance(error, ValueError):  # numpy's broadcasting and shape rules
            return ShapeError(f"{self.name} cannot combine inputs of shapes {shapes}: {error}")
        given = ", ".join(f"{k}={received(v)}" for k, v in params.items()) or "no parameters"
        return ArgumentError(
            f"{self.name} cannot take inputs of shapes {shapes} with {given}: {error}"
        )


def op(
    forward: Callable[..., Any] | None = None, *, saves: bool = False, name: str | None = None
) -> Any:
    """Register ``forward`` as an op: ``@op``, ``@op(saves=True)`` or ``@op(name="concat")``."""
    if forward is None:
        return lambda fn: Op(fn, saves=saves, name=name)
    return Op(forward, saves=saves, name=name)
