"""Tensor, the tape it records, and reverse-mode ``backward``.

A tensor produced by an op remembers the op, its input tensors and the op's parameters: that is
the tape. ``backward`` walks it once in reverse topological order (iteratively, so a chain of any
length works), calls each op's vector-Jacobian product, sums gradients that meet at a shared
tensor, and accumulates the results into leaves that require gradients.

The tape holds values, not references to the caller's arrays. ``Tensor(data)`` copies ``data``,
and an op copies any input that is not a tensor (``x * c`` with a numpy array ``c``) and any
array parameter its VJP will read (a mask, an index, RoPE's cos and sin tables). So after
``y = (x * c).sum()``, editing ``c[:] = 0`` changes nothing: ``y.backward()`` gives the gradient
of the function that was computed, with the original ``c``.

A tensor's own ``.value`` is guarded instead, as PyTorch's version counter guards a tensor:
``backward`` refuses (TapeError) to run a VJP on a value that was assigned anew
(``w.value = ...``) or edited in place (``w.value[...] = 0``) after its op recorded it, rather
than return the gradient of a function nobody computed. Change values after ``backward`` (an
optimizer's step), or recompute the forward pass. The engine learns that an array may have been
edited when it hands the array out (``.value``, ``detach``, ``Tensor.wrap``), and compares its
bytes at ``backward`` with what the op saw. A recorded op's result is handed out read-only (no
code writes into an op's result), as is any result that views another tensor's memory.
``.grad`` holds None or a float64 array of the value's shape, nothing else.

A large value no VJP reads (a VJP spells such an input ``_x``, as it spells an unread output
``_out``) is let go during the forward pass once only the tape holds it (:func:`_let_go`): a
projection before its bias add, the heads before their rotation. The tape keeps what the
backward pass needs and little more, as a hand-written backward does.

Recording is switched off per thread: :func:`no_grad` in one thread does not stop another
thread's ops from recording.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count
from operator import attrgetter
from sys import getrefcount
from typing import Any

import numpy as np

from ..errors import (
    ArgumentError,
    GraphReleasedError,
    NoGradientError,
    RankError,
    ShapeError,
    TapeError,
)
from ..validate import as_axis, as_flag, as_float_array, received, tensor_value


class _GradMode(threading.local):
    """Whether ops record, one flag per thread: every thread starts out recording."""

    enabled = True


grad_mode = _GradMode()


def grad_enabled() -> bool:
    """Whether ops are being recorded on the tape right now, in this thread."""
    return grad_mode.enabled


@contextmanager
def no_grad() -> Iterator[None]:
    """Inside this block no op is recorded (in this thread): results do not require gradients."""
    previous = grad_mode.enabled
    grad_mode.enabled = False
    try:
        yield
    finally:
        grad_mode.enabled = previous


_F64 = np.dtype(np.float64)


def _as_f64(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)


@dataclass(slots=True)
class TapeEntry:
    """What an op records on the tensor it produces: all its VJP will need."""

    op: Any  # the Op (registry.py); its .vjp turns the output's gradient into input shares
    inputs: tuple[Tensor, ...]
    keywords: dict[str, Any]  # for the VJP: the op's parameters as its check normalised them,
    # with needs= and saved= added for a VJP that takes them
    needs: list[bool]  # which inputs wanted a gradient when the op ran
    seq: int  # creation number: larger than the number of any entry among the inputs
    seen: tuple | None = None  # (tensor, bytes of its value) for inputs the caller could edit;
    # a str in place of the bytes refuses every backward through the entry with that message


class _Released:
    """The op of an entry a backward pass has freed."""

    name = "released"
    reads_out = False
    unread = ()

    def __repr__(self) -> str:
        return "<released>"


RELEASED = TapeEntry(_Released(), (), {}, [], -1)  # what a used-up entry is replaced by
creation_numbers = count()  # stamps each new tape entry: 0, 1, 2, … (TapeEntry.seq)
_creation_number = attrgetter("_entry.seq")


class _Marks:
    """The creation number of the latest guard set on a recorded tensor (-1: none yet)."""

    latest = -1


marks = _Marks()


class Tensor:
    """A float64 array that can record the ops applied to it and receive gradients."""

    __slots__ = (
        "__weakref__",
        "_entry",
        "_exposed",  # True: handed out, code outside the engine may write it; None: read-only
        "_grad",
        "_guard",  # (bytes or None, creation number): the value when handed out or replaced
        "_retains_grad",
        "_taped",  # some op recorded this tensor (as an input, or an output its VJP reads)
        "_value",
        "name",
        "requires_grad",
    )
    __array_priority__ = 1000  # ndarray ⊕ Tensor defers to Tensor's reflected operator

    def __init__(self, data: Any, requires_grad: bool = False, name: str | None = None) -> None:
        if isinstance(data, Tensor):
            data = data._value
        if name is not None and not isinstance(name, str):
            raise ArgumentError(f"A tensor's name must be a string or None; got {received(name)}.")
        self._value = as_float_array(data, "Tensor data")  # a copy, float64: nobody else has it
        self._grad: np.ndarray | None = None
        self.requires_grad = as_flag(requires_grad, "requires_grad")
        self.name = name
        self._entry: TapeEntry | None = None  # None for a leaf
        self._retains_grad = self._exposed = self._taped = False
        self._guard: tuple[bytes | None, int] | None = None

    @classmethod
    def wrap(cls, data: Any) -> Tensor:
        """A constant tensor around ``data`` without copying (the tape guards it as handed out)."""
        t = cls.__new__(Tensor)
        t._value = (
            data
            if type(data) is np.ndarray and data.dtype == np.float64
            else (np.asarray(data, dtype=np.float64))
        )
        t._grad = t.name = t._guard = t._entry = None
        t.requires_grad = t._retains_grad = t._taped = False
        t._exposed = True  # the caller holds the array
        return t

    @classmethod
    def from_op(cls, value: Any, entry: TapeEntry | None, arrays: Any = ()) -> Tensor:
        """An op's output: its value and, when the op was recorded, its tape entry.

        An output that views the memory of one of the input ``arrays`` is read-only: the memory
        can still be written through the input's array, which the entry guards when the op is
        recorded; a view made off the tape counts as handed out instead.
        """
        t = cls.__new__(Tensor)
        t._value = value if type(value) is np.ndarray and value.dtype is _F64 else _as_f64(value)
        t._grad = t.name = t._guard = None
        t.requires_grad = entry is not None
        t._entry = entry
        t._retains_grad = t._exposed = False
        t._taped = entry is not None and entry.op.reads_out  # its VJP reads this value
        base = t._value.base
        if base is not None and _views(base, arrays):
            t._value.flags.writeable = False  # written only through the array it views
            t._exposed = entry is None  # recorded: the viewed input's guard covers it
        return t

    # --- the value and its gradient --------------------------------------------------------

    @property
    def value(self) -> np.ndarray:
        """The float64 array (not a copy): edit it only when no pending backward reads it."""
        if self._exposed is False:
            self._expose()
        return self._value

    @value.setter
    def value(self, data: Any) -> None:
        array = (
            data
            if type(data) is np.ndarray and data.dtype is _F64
            else as_float_array(data, "Tensor value")
        )
        self._value, self._exposed = array, True
        if self._taped:  # an entry recorded the old value: a backward through it is refused
            self._guard = (None, _mark())

    def _expose(self) -> None:
        """Hand the array out: an op's recorded result read-only, else its bytes remembered."""
        if self._value.base is _NAN:
            raise TapeError(
                f"This tensor's value (shape {self.shape}) was let go during the forward pass: "
                "only the tape still held it and no gradient reads it. Keep a variable that "
                "refers to the tensor to read its value."
            )
        if self._entry is not None:  # nobody could write it before: now nobody can
            self._value.flags.writeable = False
            self._exposed = None  # handed out, but unwritable: nothing to guard
            return
        self._exposed = True
        if self._taped:
            self._guard = (self._value.tobytes(), _mark())

    @property
    def grad(self) -> np.ndarray | None:
        """The accumulated gradient d(root)/d(self), of the value's shape (None before any)."""
        return self._grad

    @grad.setter
    def grad(self, grad: Any) -> None:
        if grad is not None:
            if tensor_value(grad) is not None or not isinstance(grad, np.ndarray | list | tuple):
                raise TapeError(
                    f"A tensor's .grad must be None or a numpy array of its shape "
                    f"{self._value.shape}; got {received(grad)}."
                )
            grad = (
                grad
                if grad.__class__ is np.ndarray and grad.dtype is _F64
                else (as_float_array(grad, "A tensor's .grad", error=TapeError))
            )
            if grad.shape != self._value.shape:
                raise TapeError(
                    f"A tensor's .grad must have the value's shape {self._value.shape}; got "
                    f"shape {grad.shape}. A gradient is never broadcast: set one of shape "
                    f"{self._value.shape}, or None."
                )
        self._grad = grad

    # --- what a tensor is ------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def size(self) -> int:
        return self._value.size

    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op produced (inputs, parameters, constants)."""
        return self._entry is None

    @property
    def is_released(self) -> bool:
        """True once a backward pass without retain_graph has freed this tensor's tape entry."""
        return self._entry is RELEASED

    @property
    def op_name(self) -> str | None:
        """The name of the op that produced this tensor, or None for a leaf."""
        return None if self._entry is None else self._entry.op.name

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """The tensors this one was computed from (empty for a leaf or a released node)."""
        return () if self._entry is None else self._entry.inputs

    def __repr__(self) -> str:
        body = np.array2string(self._value, separator=", ", prefix="Tensor(")
        extras = ""
        if self.requires_grad:
            extras += ", requires_grad=True"
        if self.name is not None:
            extras += f", name={self.name!r}"
        return f"Tensor({body}{extras})"

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise RankError("len() needs a tensor with at least one axis; got a rank-0 tensor.")
        return len(self._value)

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
        if self._value.size != 1:
            raise ShapeError(
                f"item() needs a one-element tensor; got shape {self.shape} ({self.size} "
                "entries). Reduce first (t.sum().item()) or index one entry."
            )
        return float(self._value.item())

    def numpy(self) -> np.ndarray:
        """A copy of the value as a numpy array."""
        return self._value.copy()

    def detach(self) -> Tensor:
        """The same value, cut from the tape (shares memory, records nothing)."""
        return Tensor.wrap(self.value)

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
        grads = {self: _seed_gradient(self, seed)}  # tensor → the sum of shares it has received
        if self._entry is None:  # a leaf is its own gradient's destination
            self._grad = _accumulate(self._grad, grads.pop(self))
            return
        pending = creation_order(self)  # every recorded result self depends on, self last
        check_unchanged(pending)  # no VJP may read a value edited since its op ran
        while pending:
            node = pending.pop()  # newest first: every consumer of node has already sent its share
            grad = grads.pop(node, None)
            entry = node._entry
            if not retain_graph:
                node._entry = RELEASED
            if grad is None:  # no path from the root reaches this node's output
                continue
            if node._retains_grad:
                node._grad = _accumulate(node._grad, grad)
            out = node._value if entry.op.reads_out else None
            node = None  # so an output the VJP does not read can be freed now
            shares = entry.op.vjp_shares(grad, out, entry)
            for tensor, share, wanted in zip(entry.inputs, shares, entry.needs, strict=False):
                if wanted and share is not None:
                    _send(tensor, share, grads)
            entry = shares = share = tensor = out = grad = None  # let go before the next op

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
    # Ops registered with method=True add their own: exp, log, sqrt, tanh, sigmoid, silu, relu,
    # gelu, softmax(axis=-1) and log_softmax(axis=-1). Those below shape their arguments first.

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

    def masked_fill(self, mask: Any, value: float) -> Tensor:
        """Replace entries where ``mask`` is True by ``value`` (their gradient is zero)."""
        return _ops.masked_fill(self, mask=mask, value=value)


def _seed_gradient(root: Tensor, seed: Any) -> np.ndarray:
    """The root's gradient: ones for a one-element root, else the seed (read, never written)."""
    if type(seed) is np.ndarray and seed.dtype == np.float64 and seed.shape == root.shape:
        return seed  # the common case: leaves store copies, so this array is never modified
    if seed is None:
        if root._value.size != 1:
            raise ShapeError(
                f"backward() without a seed needs a one-element output; got shape {root.shape}. "
                "Pass seed=<array of that shape> (the upstream gradient)."
            )
        return np.ones_like(root._value)
    value = seed._value if isinstance(seed, Tensor) else as_float_array(seed, "backward() seed")
    if value.shape != root.shape:
        raise ShapeError(
            f"backward() seed must have the output's shape {root.shape}; got {value.shape}."
        )
    return value  # read-only from here on: leaves store copies, never this array


def creation_order(root: Tensor) -> list[Tensor]:
    """Every recorded op result ``root`` depends on, in creation order (root last).

    Why this is a valid order for the backward pass: an op can only run once its inputs exist,
    so every input's entry has a smaller creation number than its consumer's. Read from the end,
    the list therefore reaches each node only after all of the nodes that consumed it. Leaves
    are not listed: backward accumulates into them as soon as a share arrives.
    """
    nodes, seen = [root], {root}
    for node in nodes:  # the list grows as inputs are found: each is appended once
        if node._entry is RELEASED:
            raise GraphReleasedError(
                "This backward reaches a graph that an earlier backward() already released "
                f"(at a tensor made by an op, shape {node.shape}). Call backward(..., "
                "retain_graph=True) the first time to go through the same graph twice, or "
                "recompute the forward pass."
            )
        for parent in node._entry.inputs:
            if parent._entry is not None and parent.requires_grad and parent not in seen:
                seen.add(parent)
                nodes.append(parent)
    return sorted(nodes, key=_creation_number) if len(nodes) > 1 else nodes


def _accumulate(total: np.ndarray | None, share: np.ndarray) -> np.ndarray:
    """total + share, where the first share is copied (the caller may still hold it)."""
    if total is None:
        return share.copy()
    if total.shape != share.shape:  # a .grad set before its value was given a new shape
        raise TapeError(
            f"A tensor's .grad of shape {total.shape} cannot take a gradient of shape "
            f"{share.shape}: its value changed shape after .grad was set. Set .grad = None "
            "before the backward pass."
        )
    return total + share


def _send(tensor: Tensor, share: np.ndarray, grads: dict[Tensor, np.ndarray]) -> None:
    """Deliver one gradient share: summed to the tensor's shape, into a leaf or the pending sum."""
    if share.shape != tensor._value.shape:
        share = unbroadcast(share, tensor._value.shape)
    if tensor._entry is None:  # a leaf: its gradient is final, accumulate now (first: a copy)
        tensor._grad = _accumulate(tensor._grad, share)
    else:  # gradients meeting at a shared tensor add up
        previous = grads.get(tensor)
        if previous is None:
            grads[tensor] = share
        elif (  # a sum only this dict holds: no one else can see it change, add in place
            previous.base is None
            and getrefcount(previous) <= _ONLY_PENDING
            and previous.flags.writeable
            and previous.dtype == share.dtype
        ):
            np.add(previous, share, out=previous)
        else:
            grads[tensor] = previous + share


def _views(base: np.ndarray, arrays: Any) -> bool:
    """Whether the memory ``base`` owns is one of ``arrays``' (the output views an input)."""
    for a in arrays:  # noqa: SIM110  (a loop: any() over a generator costs twice as much here)
        if base is a or base is a.base:
            return True
    return False


_ONLY_THE_ENGINE = 3  # references to an input's array inside guard_inputs when nobody else has one
_ONE_HOLDER = 3  # references to a tensor inside _let_go when one tape entry alone holds it
_ONLY_PENDING = 3  # references to a pending sum inside _send when only grads holds it
LET_GO_BYTES = 1 << 16  # a value no VJP reads is let go from this size (64 KiB) up
_NAN = np.full(1, np.nan)  # every entry of a let-go value reads as this one NaN (no memory)
_NAN.flags.writeable = False


def _mark() -> int:
    """A new creation number, remembered as the latest guard (see check_unchanged)."""
    marks.latest = number = next(creation_numbers)
    return number


def guard_inputs(inputs: tuple[Tensor, ...]) -> tuple | None:
    """Mark inputs as recorded; keep the bytes of those whose arrays were handed out.

    An array handed out earlier that nobody refers to any more (CPython's reference count: the
    tensor, the op's list of arrays and this call's argument, no variable and no numpy view)
    cannot be written by anyone: it counts as not handed out, and no bytes are kept.
    """
    seen = None
    for t in inputs:
        t._taped = True
        if t._entry is not None and t._entry.op.unread:
            _let_go(t._entry)
        if t._exposed:
            if t._value.base is None and getrefcount(t._value) <= _ONLY_THE_ENGINE:
                t._exposed = False
            else:
                seen = (*(seen or ()), (t, t._value.tobytes()))
    return seen


def _let_go(entry: TapeEntry) -> None:
    """Free the large input values of ``entry`` that its VJP does not read and nothing can reach.

    Called when the entry's own result becomes another op's input, so the expression that made
    it is over. An input qualifies when its VJP promised to read only its shape (``_x``), its
    own op's VJP does not read it either (``_out``), it was never handed out for writing, and
    this entry is the only reference to it left (CPython's reference count: no variable, no
    other entry, no container holds it), so no code can ever read it or pass it to an op again.
    Its value becomes a read-only array of the same shape whose every entry is one NaN; reading
    it through the tape (``.inputs``) raises a TapeError. This keeps the forward pass's memory
    near what a hand-written backward keeps: values such as a projection before its bias add.
    """
    inputs = entry.inputs
    for i in entry.op.unread:
        if i >= len(inputs):
            continue
        u = inputs[i]
        value = u._value
        if (
            value.nbytes >= LET_GO_BYTES
            and value.base is not _NAN
            and u._entry is not None
            and not u._entry.op.reads_out
            and not u._exposed
            and u._guard is None
            and not u._retains_grad
            and getrefcount(u) <= _ONE_HOLDER  # the entry's tuple, u, getrefcount's argument
        ):
            released = np.ndarray(value.shape, np.float64, _NAN, 0, (0,) * value.ndim)
            released.flags.writeable = False
            u._value, u._exposed = released, False  # _expose() refuses to hand it out
        u = value = None


def check_unchanged(nodes: list[Tensor]) -> None:
    """Refuse (TapeError) a backward whose VJPs would read a value changed since its op ran.

    Checked before any gradient is written. A recorded tensor whose array was handed out
    before the op ran has its bytes in the entry (``seen``); one handed out or assigned anew
    afterwards carries a guard stamped later than the entry, looked for only in entries older
    than the latest guard (usually none or a few).
    """
    latest = marks.latest
    for node in nodes:
        entry = node._entry
        if entry.seen is not None:
            for tensor, seen in entry.seen:
                if tensor._value.tobytes() != seen:  # (seen may be a refusal: a str)
                    if type(seen) is str:
                        raise TapeError(seen)
                    raise _changed(tensor, entry, "edited in place (or assigned anew)")
        if entry.seq > latest:  # no guard is newer than this entry
            continue
        readers = (*entry.inputs, node) if entry.op.reads_out else entry.inputs
        for tensor in readers:
            guard = tensor._guard
            if guard is not None and guard[1] > entry.seq:
                if guard[0] is None:
                    raise _changed(tensor, entry, "assigned anew (.value = ...)")
                if tensor._value.tobytes() != guard[0]:
                    raise _changed(tensor, entry, "edited in place")


def _changed(tensor: Tensor, entry: TapeEntry, how: str) -> TapeError:
    name = "" if tensor.name is None else f" {tensor.name!r}"
    return TapeError(
        f"backward() would read the value of tensor{name} (shape {tensor.shape}) that op "
        f"{entry.op.name!r} recorded, but the value was {how} after the op ran: the gradient "
        "would belong to a function nobody computed. Change values only after backward() (as "
        "an optimizer step does), or run the forward pass again."
    )


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
