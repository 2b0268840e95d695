"""The op registry: each op is a numpy forward with its vector-Jacobian product beside it.

One registration declares everything about an op: the forward, a small example the gradient
check runs (the op table in Chapter 1 and the unit tests read it from here), and, with
``method=True``, a ``Tensor`` method of the same name. The VJP follows directly below::

    @op(example=Example(lambda a, b: a * b, ((2, 3), (2, 1)), "[2, 1] broadcast"))
    def mul(x, y):
        return x * y

    @mul.vjp
    def _(grad, _out, x, y):
        return grad * y, grad * x

The forward receives numpy arrays (and keyword parameters); the VJP receives the upstream
gradient, the forward's output and the same inputs, and returns one gradient per input (or a
bare array for a one-input op). A VJP that does not read the output names that parameter
``_out``: it is then passed None, and the backward pass lets the output's array go as soon as
it reaches that op (unless the caller still holds the tensor). An input spelled the same way
(``_x``) is the same promise for an input: the VJP reads only its shape, so a large input value
that nothing else can reach is let go during the forward pass (:func:`~.tensor.guard_inputs`).
A VJP may return gradients in
the broadcast output shape: the engine sums them back to each input's shape in one place
(:func:`~.tensor.unbroadcast`). A VJP that names a ``needs`` parameter receives a tuple of
booleans saying which inputs want a gradient, so it can skip work. An op declared with
``saves=True`` returns ``(out, saved)`` from its forward and gets ``saved=`` in its VJP.

An op with parameters may attach a check (``@permute.checks``): it receives the input arrays and
the parameters, raises a typed error for a bad one, and returns the parameters to record,
normalised (non-negative axes) and copied where a VJP will read a caller's array. Inputs that are
not tensors become constant tensors on fresh float64 copies, so editing the caller's array after
the forward cannot change the gradient.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ArgumentError, FromScratchError, ShapeError, TapeError
from ..validate import as_float_array, received
from .tensor import TapeEntry, Tensor, creation_numbers, grad_mode, guard_inputs

__all__ = ["OPS", "Example", "Op", "op"]


@dataclass(frozen=True)
class Example:
    """A gradient-check example: ``call(*tensors)`` on inputs of ``shapes`` drawn from ``domain``.

    ``domain`` says where the inputs are drawn: ``"any"`` (uniform in [−1, 1)), ``"positive"``
    ([0.5, 2)) or ``"away-from-zero"`` (0.2 ≤ |x| < 1.2, signs alternating: no kink, no pole).
    """

    call: Callable[..., Tensor]
    shapes: tuple[tuple[int, ...], ...]
    note: str
    domain: str = "any"


def _constant(data: Any) -> Tensor:
    """A non-tensor input as a constant tensor on a fresh float64 copy."""
    constant = Tensor.wrap(as_float_array(data, "An op input"))
    constant._exposed = False  # nobody else holds the copy
    return constant


DOMAINS = ("any", "positive", "away-from-zero")
OPS: dict[str, Op] = {}  # every registered op by name, in registration order


class Op:
    """A differentiable primitive: ``forward`` on arrays plus its VJP, recorded on the tape."""

    def __init__(
        self,
        forward: Callable[..., Any],
        *,
        example: Example | None = None,
        saves: bool = False,
        method: bool = False,
        name: str | None = None,
    ) -> None:
        if not callable(forward):
            raise ArgumentError(f"An op's forward must be a function; got {received(forward)}.")
        self.name = forward.__name__ if name is None else name
        if not isinstance(example, Example) or example.domain not in DOMAINS:
            raise ArgumentError(
                f"Op {self.name!r} needs example=Example(call, shapes, note, domain) with domain "
                f"one of {DOMAINS}, for the gradient check; got {received(example)}."
            )
        self.forward, self.example, self.saves = forward, example, saves
        self.doc = forward.__doc__ or ""
        self.defaults = {  # keyword parameters with defaults, filled in on every call
            p.name: p.default
            for p in inspect.signature(forward).parameters.values()
            if p.default is not p.empty
        }
        self.backward: Callable[..., Any] | None = None  # the VJP, attached by @<op>.vjp
        self.check: Callable[..., dict[str, Any]] | None = None
        self.reads_out, self.wants_needs = True, False
        self.unread: tuple[int, ...] = ()  # inputs whose values the VJP never reads (``_x``)
        _register(self, method)

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
        self.reads_out = names[1] == "out"
        self.wants_needs = "needs" in names
        self.unread = _unread_inputs(backward)
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
        """Run the forward on the inputs' arrays and, if any input wants a gradient, record it."""
        inputs = tuple([x if isinstance(x, Tensor) else _constant(x) for x in inputs])
        arrays = [t._value for t in inputs]
        if self.defaults:
            params = {**self.defaults, **params}
        try:
            if self.check is not None:
                params = self.check(*arrays, **params)
            out = self.forward(*arrays, **params)
        except FromScratchError:
            raise
        except (ValueError, TypeError, IndexError) as error:  # numpy's complaint, as ours
            raise self._call_error(inputs, params, error) from error
        out, saved = out if self.saves else (out, None)
        needs = [t.requires_grad for t in inputs]  # which inputs want a gradient
        if True not in needs or not grad_mode.enabled:
            return Tensor.from_op(out, None, arrays)
        if self.backward is None:
            raise TapeError(
                f"Op {self.name!r} has no VJP, so it cannot be recorded for a backward pass. "
                f"Declare one right below its forward with @{self.name}.vjp."
            )
        keywords = params  # what the VJP receives after the inputs
        if self.wants_needs:
            keywords = {**keywords, "needs": needs}
        if self.saves:
            keywords = {**keywords, "saved": saved}
        seen = guard_inputs(inputs)  # the bytes of inputs the caller could still edit
        entry = TapeEntry(self, inputs, keywords, needs, next(creation_numbers), seen)
        return Tensor.from_op(out, entry, arrays)

    def vjp_shares(self, grad: Any, out: Any, entry: TapeEntry) -> tuple[Any, ...]:
        """The VJP applied to one tape entry: one gradient share (or None) per input."""
        shares = self.backward(grad, out, *[t._value for t in entry.inputs], **entry.keywords)
        shares = shares if type(shares) is tuple or type(shares) is list else (shares,)
        if len(shares) != len(entry.inputs):
            raise TapeError(
                f"The VJP of {self.name!r} returned {len(shares)} gradient shares for "
                f"{len(entry.inputs)} inputs; it must return one per input (None for an input "
                "it does not differentiate)."
            )
        return shares

    def _call_error(
        self, inputs: tuple[Tensor, ...], params: dict[str, Any], error: Exception
    ) -> ShapeError | ArgumentError:
        """numpy's complaint about a forward, as the package's error naming the op's inputs."""
        shapes = ", ".join(str(t.shape) for t in inputs)
        if isinstance(error, ValueError):  # numpy's broadcasting and shape rules
            return ShapeError(f"{self.name} cannot combine inputs of shapes {shapes}: {error}")
        given = ", ".join(f"{k}={received(v)}" for k, v in params.items()) or "no parameters"
        return ArgumentError(
            f"{self.name} cannot take inputs of shapes {shapes} with {given}: {error}"
        )


def _unread_inputs(backward: Callable[..., Any]) -> tuple[int, ...]:
    """Positions of the inputs a VJP spells with a leading underscore (it reads only the shape)."""
    positions = []
    for i, p in enumerate(list(inspect.signature(backward).parameters.values())[2:]):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break  # *inputs and keyword parameters: read
        if p.name.startswith("_"):
            positions.append(i)
    return tuple(positions)


def _register(new: Op, method: bool) -> None:
    """Add an op to OPS (and its Tensor method); re-running the cell that defines it is allowed."""
    old = OPS.get(new.name)
    same_source = old is not None and (old.forward.__module__, old.forward.__qualname__) == (
        new.forward.__module__,
        new.forward.__qualname__,
    )
    if old is not None and not same_source:
        raise TapeError(
            f"An op named {new.name!r} is already registered (from {old.forward.__module__}). "
            "Choose another name, e.g. @op(name=..., example=...)."
        )
    OPS[new.name] = new
    if method:
        _attach_method(new)


def _attach_method(new: Op) -> None:
    """``Tensor.<name>(self, *params)``: the op applied to the tensor, parameters by position."""
    names = list(inspect.signature(new.forward).parameters)[1:]

    def method(self: Tensor, *args: Any, **params: Any) -> Tensor:
        if len(args) > len(names):
            raise ArgumentError(
                f"Tensor.{new.name} takes at most {len(names)} parameters {names}; got "
                f"{len(args)} positional arguments."
            )
        return new(self, **dict(zip(names, args, strict=False)), **params)

    method.__name__ = method.__qualname__ = new.name
    method.__doc__ = new.doc
    setattr(Tensor, new.name, method)


def op(
    forward: Callable[..., Any] | None = None,
    *,
    example: Example | None = None,
    saves: bool = False,
    method: bool = False,
    name: str | None = None,
) -> Any:
    """Register ``forward`` as an op: ``@op(example=Example(...))``, with the VJP below it."""
    if forward is None:
        return lambda fn: Op(fn, example=example, saves=saves, method=method, name=name)
    return Op(forward, example=example, saves=saves, method=method, name=name)
