"""Tensor, the tape it records, and reverse-mode ``backward``.

A tensor produced by an op remembers the op, its input tensors and the op's parameters: that is
the tape. ``backward`` walks it once in reverse topological order (iteratively, so a chain of any
length works), calls each op's vector-Jacobian product, sums gradients that meet at a shared
tensor, and accumulates the results into leaves that require gradients.

The tape holds values, not references to the caller's arrays. ``Tensor(data)`` copies ``data``,
and an op copies any input that is not a tensor (``x * c`` with a numpy array ``c``) and any
array parameter its VJP will read (a mask, an index, RoPE's cos and sin tables). So after
``y = (x * c).sum()``, editing ``c[:] = 0`` changes nothing: ``y.backward()`` gives the gradient
of the function that was computed, with the original ``c``. The one array the engine does not
protect is a tensor's own ``.value``: edit it in place only when no pending backward reads it
(as with PyTorch's ``.data``); to change a parameter, assign a new array to ``.value``.

Recording is switched off per thread: :func:`no_grad` in one thread does not stop another
thread's ops from recording.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from operator import attrgetter
from typing import Any

import numpy as np

from ..errors import (
    ArgumentError,
    GraphReleasedError,
    NoGradientError,
    RankError,
    SeedShapeError,
    ShapeError,
)
from .checks import as_axis, as_flag, as_float_array, received


class _GradMode(threading.local):
    """Whether ops record, one flag per thread: every thread starts out recording."""

    enabled = True


_grad_mode = _GradMode()


def grad_enabled() -> bool:
    """Whether ops are being recorded on the tape right now, in this thread."""
    return _grad_mode.enabled


@contextmanager
def no_grad() -> Iterator[None]:
    """Inside this block no op is recorded (in this thread): results do not require gradients."""
    previous = _grad_mode.enabled
    _grad_mode.enabled = False
    try:
        yield
    finally:
        _grad_mode.enabled = previous


_creation = attrgetter("_seq")  # the sequence number an op stamps on the tensor it records
sequence = count()  # creation order of recorded op results


class _Released:
    """Marks a node whose tape entry a backward pass has freed."""

    name = "released"

    def __repr__(self) -> str:
        return "<released>"


RELEASED: Any = _Released()
_RELEASED_NODE = (RELEASED, (), None, None)  # what a released tensor's tape entry becomes


class Tensor:
    """A float64 array that can record the ops applied to it and receive gradients."""

    __slots__ = (
        "__weakref__",
        "_node",
        "_retains_grad",
        "_seq",
        "grad",
        "name",
        "requires_grad",
        "value",
    )
    __array_priority__ = 1000  # ndarray ⊕ Tensor defers to Tensor's reflected operator

    def __init__(self, data: Any, requires_grad: bool = False, name: str | None = None) -> None:
        if isinstance(data, Tensor):
            data = data.value
        if name is not None and not isinstance(name, str):
            raise ArgumentError(f"A tensor's name must be a string or None; got {received(name)}.")
        self.value = as_float_array(data, "Tensor data")  # a copy, float64
        self.grad: np.ndarray | None = None
        self.requires_grad = as_flag(requires_grad, "requires_grad")
        self.name = name
        self._node: tuple[Any, tuple[Tensor, ...], dict[str, Any] | None, Any] | None = None
        self._retains_grad = False

    @classmethod
    def _constant(cls, data: Any) -> Tensor:
        """A tensor around ``data`` without copying (the engine's fast internal constructor)."""
        t = cls.__new__(Tensor)
        t.value = (
            data
            if type(data) is np.ndarray and data.dtype == np.float64
            else (np.asarray(data, dtype=np.float64))
        )
        t.grad = None
        t.requires_grad = False
        t.name = None
        t._node = None
        t._retains_grad = False
        return t

    # --- what a tensor is ------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim

    @property
    def size(self) -> int:
        return self.value.size

    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op produced (inputs, parameters, constants)."""
        return self._node is None

    @property
    def is_released(self) -> bool:
        """True once a backward pass without retain_graph has freed this tensor's tape entry."""
        return self._node is _RELEASED_NODE

    @property
    def op_name(self) -> str | None:
        """The name of the op that produced this tensor, or None for a leaf."""
        return None if self._node is None else self._node[0].name

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """The tensors this one was computed from (empty for a leaf or a released node)."""
        return () if self._node is None else self._node[1]

    def __repr__(self) -> str:
        body = np.array2string(self.value, separator=", ", prefix="Tensor(")
        extras = ""
        if self.requires_grad:
            extras += ", requires_grad=True"
        if self.name is not None:
            extras += f", name={self.name!r}"
        return f"Tensor({body}{extras})"

    def __len__(self) -> int:
        if self.value.ndim == 0:
            raise RankError("len() needs a tensor with at least one axis; got a rank-0 tensor.")
        return len(self.value)

    def __iter__(self) -> Iterator[Tensor]:
        """The rows along the first axis, each recorded as ``self[i]``."""
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        raise ArgumentError(
            f"A tensor has no truth value; got a tensor of shape {self.shape} in a condition. "
            "Compare its values instead, e.g. bool((t.value > 0).all())."
        )

    def item(self) -> float:
        """The single value of a one-element tensor, as a Python float."""
        if self.value.size != 1:
            raise ShapeError(
                f"item() needs a one-element tensor; got shape {self.shape} ({self.size} "
                "entries). Reduce first (t.sum().item()) or index one entry."
            )
        return float(self.value.item())

    def numpy(self) -> np.ndarray:
        """A copy of the value as a numpy array."""
        return self.value.copy()

    def detach(self) -> Tensor:
        """The same value, cut from the tape (shares memory, records nothing)."""
        return Tensor._constant(self.value)

    def zero_grad(self) -> None:
        """Forget the accumulated gradient."""
        self.grad = None

    def retain_grad(self) -> Tensor:
        """Keep this intermediate's gradient in ``.grad`` when a backward passes through it."""
        self._retains_grad = True
        return self

    # --- reverse mode ----------------------------------------------------------------------

    def backward(self, seed: Any = None, retain_graph: bool = False) -> None:
        """Accumulate d(seed·self)/d(leaf) into every leaf's ``.grad``; seed defaults to 1."""
        if retain_graph is not False and retain_graph is not True:
            retain_graph = as_flag(retain_graph, "backward(retain_graph=...)")
        if not self.requires_grad:
            raise NoGradientError(
                "backward() needs a tensor that depends on something with requires_grad=True; "
                "this one records no graph. Create the inputs with requires_grad=True, and do "
                "not compute it inside no_grad()."
            )
        value = self.value
        if type(seed) is np.ndarray and seed.dtype is value.dtype and seed.shape == value.shape:
            grad = seed  # the common case, checked inline: read-only from here on
        else:
            grad = _seed_gradient(self, seed)
        if self._node is None:  # a leaf is its own gradient's destination
            self.grad = grad.copy() if self.grad is None else self.grad + grad
            return
        grads: dict[Tensor, np.ndarray] = {self: grad}
        pop, get = grads.pop, grads.get
        pending = _reverse_topological_order(self)  # recorded op results, root last
        while pending:  # popping lets each node go as soon as the pass is done with it
            node = pending.pop()
            g = pop(node, None)
            op, inputs, params, saved = node._node  # what the op recorded
            if g is not None and node._retains_grad:
                node.grad = g.copy() if node.grad is None else node.grad + g
            out = node.value if op.reads_out else None
            if not retain_graph:
                node._node = _RELEASED_NODE
            node = None  # unless held elsewhere, an output its VJP does not read is freed here
            if g is None:
                continue
            if params is None and not op.saves and len(inputs) == 2:  # add, mul, matmul, …
                a, b = inputs
                if op.wants_needs:
                    needs = (a.requires_grad, b.requires_grad)
                    share_a, share_b = op.backward(g, out, a.value, b.value, needs=needs)
                else:
                    share_a, share_b = op.backward(g, out, a.value, b.value)
                # _send, written out for the two inputs: the call would cost about a fifth of
                # the engine's whole per-op overhead on small tensors.
                if share_a is not None and a.requires_grad:
                    if share_a.shape != a.value.shape:
                        share_a = unbroadcast(share_a, a.value.shape)
                    if a._node is None:  # a leaf: its gradient is final, accumulate now
                        a.grad = share_a.copy() if a.grad is None else a.grad + share_a
                    else:
                        previous = get(a)
                        grads[a] = share_a if previous is None else previous + share_a
                if share_b is not None and b.requires_grad:
                    if share_b.shape != b.value.shape:
                        share_b = unbroadcast(share_b, b.value.shape)
                    if b._node is None:
                        b.grad = share_b.copy() if b.grad is None else b.grad + share_b
                    else:
                        previous = get(b)
                        grads[b] = share_b if previous is None else previous + share_b
            else:
                if params is None and not op.saves and len(inputs) == 1 and not op.wants_needs:
                    shares = (op.backward(g, out, inputs[0].value),)  # exp, tanh, …
                else:
                    keywords = params or {}
                    if op.wants_needs:
                        keywords = {**keywords, "needs": tuple([t.requires_grad for t in inputs])}
                    if op.saves:
                        keywords = {**keywords, "saved": saved}
                    shares = op.backward(g, out, *[t.value for t in inputs], **keywords)
                    if type(shares) is not tuple and type(shares) is not list:
                        shares = (shares,)
                for tensor, share in zip(inputs, shares, strict=False):
                    if share is not None and tensor.requires_grad:
                        _send(tensor, share, grads)
            # Let go of this op's arrays before the next one runs (its inputs may be freeable).
            inputs = shares = share = tensor = a = b = share_a = share_b = out = g = None

    # --- operators -------------------------------------------------------------------------

    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.div(other, self)

    def __neg__(self) -> Tensor:
        return _ops.neg(self)

    def __pow__(self, exponent: float) -> Tensor:
        return _ops.power(self, exponent=exponent)

    def __rpow__(self, base: Any) -> Tensor:
        raise ArgumentError(
            f"The engine's power takes a tensor base and a constant exponent; got base "
            f"{received(base)} ** a tensor. Write (x * math.log(base)).exp() for base ** x."
        )

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index=index)

    def _no_order(self, other: Any) -> Any:
        raise ArgumentError(
            f"Tensors have no order: comparing a tensor of shape {self.shape} with "
            f"{received(other)} is not an op. Compare the values: t.value < 0 gives a Boolean "
            "array (a mask for masked_fill)."
        )

    __lt__ = __le__ = __gt__ = __ge__ = _no_order

    # --- named methods (PyTorch-familiar) -----------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        """The same values in a new shape (one axis may be -1)."""
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return _ops.reshape(self, shape=shape)

    def permute(self, *axes: Any) -> Tensor:
        """Reorder the axes: result axis i is input axis ``axes[i]``."""
        if len(axes) == 1 and isinstance(axes[0], tuple | list):
            axes = tuple(axes[0])
        return _ops.permute(self, axes=axes)

    def transpose(self, axis_a: int = -2, axis_b: int = -1) -> Tensor:
        """Swap two axes (the last two by default)."""
        a = as_axis(axis_a, self.ndim, "transpose axis_a")
        b = as_axis(axis_b, self.ndim, "transpose axis_b")
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.permute(*axes)

    @property
    def T(self) -> Tensor:
        """All axes reversed."""
        return self.permute(*reversed(range(self.ndim)))

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        return _ops.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        """sum / count over the reduced axes."""
        return _ops.mean(self, axis=axis, keepdims=keepdims)

    def exp(self) -> Tensor:
        return _ops.exp(self)

    def log(self) -> Tensor:
        return _ops.log(self)

    def sqrt(self) -> Tensor:
        return _ops.sqrt(self)

    def tanh(self) -> Tensor:
        return _ops.tanh(self)

    def sigmoid(self) -> Tensor:
        return _ops.sigmoid(self)

    def silu(self) -> Tensor:
        return _ops.silu(self)

    def relu(self) -> Tensor:
        return _ops.relu(self)

    def gelu(self) -> Tensor:
        return _ops.gelu(self)

    def softmax(self, axis: int = -1) -> Tensor:
        return _ops.softmax(self, axis=axis)

    def log_softmax(self, axis: int = -1) -> Tensor:
        return _ops.log_softmax(self, axis=axis)

    def masked_fill(self, mask: Any, value: float) -> Tensor:
        """Replace entries where ``mask`` is True by ``value`` (their gradient is zero)."""
        return _ops.masked_fill(self, mask=mask, value=value)


def _seed_gradient(root: Tensor, seed: Any) -> np.ndarray:
    if seed is None:
        if root.value.size != 1:
            raise SeedShapeError(
                f"backward() without a seed needs a one-element output; got shape {root.shape}. "
                "Pass seed=<array of that shape> (the upstream gradient)."
            )
        return np.ones_like(root.value)
    value = seed.value if isinstance(seed, Tensor) else as_float_array(seed, "backward() seed")
    if value.shape != root.shape:
        if value.size == 1 and root.value.size == 1:
            return value.reshape(root.shape).astype(np.float64)
        raise SeedShapeError(
            f"backward() seed must have the output's shape {root.shape}; got {value.shape}."
        )
    return value  # read-only from here on: leaves store copies, never this array


def _reverse_topological_order(root: Tensor) -> list[Tensor]:
    """Every recorded op result ``root`` depends on, root last: read from the end, each node
    comes after all its consumers.

    An op's output is always created after its inputs, so the creation sequence numbers that
    ops stamp on their results are a topological order: read by descending number, every
    node comes after all of its consumers. Leaves are not listed: backward accumulates into
    them as soon as a share arrives.
    """
    nodes = [root]
    seen = {root}
    for node in nodes:  # the list grows as parents are found: each is appended once
        if node._node is _RELEASED_NODE:
            raise GraphReleasedError(
                "This backward reaches a graph that an earlier backward() already released "
                f"(at a tensor made by an op, shape {node.shape}). Call backward(..., "
                "retain_graph=True) the first time to go through the same graph twice, or "
                "recompute the forward pass."
            )
        for parent in node._node[1]:
            if parent._node is not None and parent not in seen and parent.requires_grad:
                seen.add(parent)
                nodes.append(parent)
    if len(nodes) > 1:
        nodes.sort(key=_creation)
    return nodes


def _send(tensor: Tensor, share: np.ndarray, grads: dict[Tensor, np.ndarray]) -> None:
    """Deliver one gradient share: summed to the tensor's shape, into a leaf or the pending sum."""
    if share.shape != tensor.value.shape:
        share = unbroadcast(share, tensor.value.shape)
    if tensor._node is None:  # a leaf: its gradient is final, accumulate now
        old = tensor.grad
        tensor.grad = share.copy() if old is None else old + share
    else:
        previous = grads.get(tensor)
        grads[tensor] = share if previous is None else previous + share


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back to ``shape``: over added leading axes and stretched 1-axes.

    A share whose shape ``shape`` does not broadcast to is refused: reshaping it would hand the
    input a gradient in the wrong places (the sign of a bug in a VJP).
    """
    if type(grad) is not np.ndarray or not isinstance(shape, tuple):
        raise ArgumentError(
            f"unbroadcast takes a numpy array and a shape tuple; got {received(grad)} and "
            f"{received(shape)}."
        )
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra < 0 or any(n != 1 and n != g for n, g in zip(shape, grad.shape[extra:], strict=True)):
        raise ShapeError(
            f"A gradient share of shape {grad.shape} cannot be summed back to its input's shape "
            f"{shape}: {shape} does not broadcast to {grad.shape}. An op's VJP must return a "
            "share of its input's shape, or of a shape the input broadcasts to."
        )
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad


from . import ops as _ops  # noqa: E402  (ops build on Tensor; Tensor's operators call ops)
