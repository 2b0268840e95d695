"""Checkpoints: model, optimizer state, step and generator state in one ``.npz``, no pickle.

Layout: ``model/<parameter name>`` arrays, ``optimizer/<index>/<state name>`` arrays, and
``meta``, a 0-d string array holding JSON (format, step, generator state, optimizer class and
options, parameter names, any extra fields). The write is atomic: the archive goes to a hidden
temporary file ``.<name>.<random>.tmp`` in the destination folder, is flushed to disk, and only
then ``os.replace``-d onto the final name, so a crash mid-write never leaves a half file there.

Loads are all-or-nothing: every tensor (names, shapes, real and finite), the optimizer state
(finite moments, ``exp_avg_sq`` ≥ 0, whole step counts), the step, the generator state (16 hex
digits) and the metadata are checked before the model, the optimizer or the generator changes,
and the first problem is named. A save runs the same checks on what it is about to write, so
it refuses anything a load would refuse.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError, ParameterError, ShapeError
from ..nn.module import Module
from ..random import SplitMix64
from ..validate import non_negative_int
from .atomic import write_bytes_atomic
from .optim import Optimizer

FORMAT = "llm_from_scratch.checkpoint/1"
META_KEYS = ("extra", "format", "model", "optimizer", "rng_state", "step")
_HEX_STATE = re.compile(r"[0-9a-f]{16}")
_INDEX = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class CheckpointInfo:
    """What a loaded checkpoint said besides the tensors: step, generator state, extras."""

    step: int
    rng_state: int | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Checked:
    """A checkpoint after every check: what a load assigns, nothing left to fail."""

    step: int
    rng_state: int | None
    extra: dict[str, Any]
    model: dict[str, np.ndarray]
    optimizer: dict[str, Any] | None  # a state dict for Optimizer.load_state_dict


def _write_archive(handle: Any, arrays: dict[str, np.ndarray]) -> None:
    """Write the arrays as one compressed .npz into an open binary file."""
    np.savez_compressed(handle, **arrays)


def checkpoint_path(path: Any, what: str) -> Path:
    """``path`` (str or os.PathLike, no NUL byte, ending in .npz) as a Path."""
    if not isinstance(path, str | os.PathLike):
        raise ArgumentError(
            f"{what} needs a path (str or os.PathLike); got {type(path).__name__}."
        )
    text = os.fspath(path)
    if not isinstance(text, str) or "\0" in text or not text:
        raise ArgumentError(f"{what} needs a non-empty text path without NUL bytes; got {text!r}.")
    target = Path(text)
    if target.suffix != ".npz":
        raise ArgumentError(f"checkpoint paths end in .npz; got {text!r}.")
    return target


def _json_extra(extra: Any, where: str) -> dict[str, Any]:
    """``extra`` if it is a dict that survives JSON unchanged (str keys, no tuples, finite)."""
    if not isinstance(extra, dict):
        raise ParameterError(
            f"{where}: checkpoint extra must be a dict of JSON values; got "
            f"{type(extra).__name__} {extra!r:.60}."
        )
    try:
        back = json.loads(json.dumps(extra, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise ParameterError(
            f"{where}: checkpoint extra must be JSON-serialisable with finite numbers: {error}"
        ) from error
    if back != extra or not _same_json(back, extra):
        raise ParameterError(
            f"{where}: checkpoint extra must read back as written (str keys, lists not tuples, "
            f"plain numbers); got {extra!r:.80}."
        )
    return back


def _same_json(a: Any, b: Any) -> bool:
    """Equal and of the same JSON kinds all the way down (1 vs 1.0 vs True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _array(value: np.ndarray, label: str) -> np.ndarray:
    """A stored array as float64 if it is real (integer or float) and finite."""
    if value.dtype.kind not in "iuf":
        raise ParameterError(f"{label} must hold real numbers; got dtype {value.dtype}.")
    array = value.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ParameterError(f"{label} holds NaN or ±inf; a checkpoint holds finite values only.")
    return array


def _check_meta(meta: Any, where: str) -> tuple[int, int | None, dict[str, Any]]:
    """Step, generator state and extras from the metadata, after checking every key."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ArgumentError(
            f"{where} is not a {FORMAT} checkpoint; its meta says "
            f"{meta.get('format') if isinstance(meta, dict) else meta!r:.60}."
        )
    missing = sorted(set(META_KEYS) - set(meta))
    unknown = sorted(set(meta) - set(META_KEYS))
    if missing or unknown:
        raise ParameterError(
            f"{where}: checkpoint metadata needs exactly the keys {list(META_KEYS)}; missing "
            f"{missing}, unknown {unknown}."
        )
    step = meta["step"]
    if type(step) is not int or step < 0:
        raise ParameterError(
            f"{where}: checkpoint step must be a whole number ≥ 0; got {step!r}. A fractional "
            "or negative step is never read as another one."
        )
    state = meta["rng_state"]
    if state is not None and not (isinstance(state, str) and _HEX_STATE.fullmatch(state)):
        raise ParameterError(
            f"{where}: checkpoint rng_state must be null or 16 lowercase hex digits (a SplitMix64 "
            f"state in [0, 2⁶⁴)); got {state!r:.40}."
        )
    model = meta["model"]
    if not (
        isinstance(model, dict)
        and set(model) == {"class", "parameters"}
        and isinstance(model["class"], str)
        and isinstance(model["parameters"], list)
        and all(isinstance(n, str) for n in model["parameters"])
    ):
        raise ParameterError(
            f"{where}: checkpoint model metadata must be {{'class': str, 'parameters': [str]}}; "
            f"got {model!r:.80}."
        )
    saved = meta["optimizer"]
    if saved is not None:
        groups = saved.get("param_groups") if isinstance(saved, dict) else None
        if not (
            isinstance(saved, dict)
            and set(saved) == {"class", "param_groups"}
            and isinstance(saved["class"], str)
            and isinstance(groups, list)
            and all(isinstance(g, dict) and isinstance(g.get("params"), list) for g in groups)
        ):
            raise ParameterError(
                f"{where}: checkpoint optimizer metadata must be null or {{'class': str, "
                f"'param_groups': [{{'params': [int], ...}}]}}; got {saved!r:.80}."
            )
    extra = _json_extra(meta["extra"], where)
    return step, None if state is None else int(state, 16), extra


def _check_model(
    model: Module, arrays: Mapping[str, np.ndarray], listed: list[str], where: str
) -> dict[str, np.ndarray]:
    """The checkpoint's model tensors, after checking names, shapes and values in forward order."""
    stored = {k[len("model/") :]: v for k, v in arrays.items() if k.startswith("model/")}
    if sorted(listed) != sorted(stored) or len(set(listed)) != len(listed):
        raise ParameterError(
            f"{where}: the metadata lists {len(listed)} parameters but the archive holds "
            f"{len(stored)} model tensors (e.g. {sorted(set(listed) ^ set(stored))[:3]})."
        )
    checked: dict[str, np.ndarray] = {}
    for name, p in model.named_parameters():
        if name not in stored:
            raise ParameterError(
                f"checkpoint {where} does not fit {model.name!r}: first mismatch at "
                f"{name!r}, which the checkpoint lacks (it holds {len(stored)} tensors, e.g. "
                f"{sorted(stored)[:3]}). Was it saved from another model?"
            )
        if stored[name].shape != p.shape:
            raise ShapeError(
                f"checkpoint {where} does not fit {model.name!r}: first mismatch at "
                f"{name!r}, shape {p.shape} in the model but {stored[name].shape} in the "
                "checkpoint. Build the model with the sizes it was saved with."
            )
        checked[name] = _array(stored[name], f"checkpoint {where} tensor {name!r}")
    unknown = sorted(set(stored) - set(checked))
    if unknown:
        raise ParameterError(
            f"checkpoint {where} does not fit {model.name!r}: first mismatch at "
            f"{unknown[0]!r}, a tensor the model does not have."
        )
    return checked


def _check_state_values(arrays: Mapping[str, np.ndarray], where: str) -> dict[int, dict]:
    """{index: {name: value}} from the optimizer entries: finite, v ≥ 0, whole step counts."""
    state: dict[int, dict[str, Any]] = {}
    for key, value in arrays.items():
        if key == "meta" or key.startswith("model/"):
            continue
        parts = key.split("/")
        if len(parts) != 3 or parts[0] != "optimizer" or not _INDEX.fullmatch(parts[1]):
            raise ParameterError(
                f"{where}: unknown archive entry {key!r}; a checkpoint holds model/<name>, "
                "optimizer/<index>/<name> and meta."
            )
        index, name = int(parts[1]), parts[2]
        label = f"{where}: optimizer state {name!r} of parameter {index}"
        array = _array(value, label)
        if name == "step":
            if array.shape != () or array[()] < 0 or array[()] != math.floor(array[()]):
                raise ParameterError(
                    f"{label} must be one whole number ≥ 0 (updates taken); got "
                    f"{value.tolist()!r:.40}."
                )
            state.setdefault(index, {})[name] = float(array[()])
            continue
        if name == "exp_avg_sq" and np.any(array < 0):
            raise ParameterError(
                f"{label} holds a negative value ({float(array.min())}); a running mean of "
                "squared gradients is ≥ 0."
            )
        state.setdefault(index, {})[name] = array
    return state


def _check_groups(saved: dict[str, Any] | None, state: dict[int, dict], where: str) -> None:
    """Groups that index parameters 0, 1, … in order, with plain finite options."""
    if saved is None:
        if state:
            raise ParameterError(f"{where}: optimizer tensors but no optimizer metadata.")
        return
    flat = [i for g in saved["param_groups"] for i in g["params"]]
    if flat != list(range(len(flat))) or any(type(i) is not int for i in flat):
        raise ParameterError(
            f"{where}: the optimizer groups must index parameters 0, 1, … in order; got "
            f"{[g['params'] for g in saved['param_groups']]!r:.80}."
        )
    outside = sorted(i for i in state if i >= len(flat))
    if outside:
        raise ParameterError(
            f"{where}: optimizer state for parameter {outside[0]}, but the groups hold "
            f"{len(flat)} parameters."
        )
    for group in saved["param_groups"]:
        for name, value in group.items():
            values = value if isinstance(value, list) else [value]
            plain = all(
                isinstance(v, bool) or (isinstance(v, int | float) and math.isfinite(v))
                for v in values
            )
            if name != "params" and not plain:
                raise ParameterError(
                    f"{where}: optimizer option {name!r} must be a finite number, a flag or a "
                    f"list of finite numbers; got {value!r:.40}."
                )


def _check_optimizer(
    saved: dict[str, Any] | None,
    state: dict[int, dict[str, Any]],
    optimizer: Optimizer,
    where: str,
) -> dict[str, Any]:
    """A state dict that fits ``optimizer``: class, groups, indices, names and shapes."""
    if saved is None:
        raise ArgumentError(
            f"checkpoint {where} holds no optimizer state; load it without optimizer=."
        )
    if saved["class"] != type(optimizer).__name__:
        raise ParameterError(
            f"checkpoint {where} holds {saved['class']} state; got a "
            f"{type(optimizer).__name__} optimizer."
        )
    sizes = [len(g["params"]) for g in optimizer.param_groups]
    offsets = np.cumsum([0, *sizes]).tolist()
    expected = [list(range(a, b)) for a, b in itertools.pairwise(offsets)]
    theirs = [g["params"] for g in saved["param_groups"]]
    if theirs != expected:
        raise ParameterError(
            f"checkpoint {where}: its optimizer groups index parameters {theirs!r:.60}; this "
            f"optimizer's groups need {expected!r:.60} (group sizes {sizes})."
        )
    params = optimizer.parameters()
    names = set(optimizer.state_names())
    for index, entry in sorted(state.items()):
        if index >= len(params):
            raise ParameterError(
                f"checkpoint {where}: optimizer state for parameter {index}, but the optimizer "
                f"has {len(params)} parameters."
            )
        p = params[index]
        if set(entry) != names:
            raise ParameterError(
                f"checkpoint {where}: {type(optimizer).__name__} state of {p.name!r} needs "
                f"exactly {sorted(names)}; got {sorted(entry)}."
            )
        for name, value in entry.items():
            if name != "step" and value.shape != p.shape:
                raise ShapeError(
                    f"checkpoint {where}: optimizer state {name!r} of {p.name!r} has shape "
                    f"{value.shape}; the parameter has {p.shape}."
                )
    groups = []
    for group in saved["param_groups"]:
        options = dict(group)
        if isinstance(options.get("betas"), list):
            options["betas"] = tuple(options["betas"])
        groups.append(options)
    return {"state": state, "param_groups": groups}


def _check(
    meta: Any,
    arrays: Mapping[str, np.ndarray],
    model: Module,
    optimizer: Optimizer | None,
    rng: SplitMix64 | None,
    where: str,
) -> _Checked:
    """Every check a load makes, in one place; nothing is assigned."""
    step, rng_state, extra = _check_meta(meta, where)
    stored = _check_model(model, arrays, meta["model"]["parameters"], where)
    state = _check_state_values(arrays, where)
    _check_groups(meta["optimizer"], state, where)
    if rng is not None and rng_state is None:
        raise ArgumentError(f"checkpoint {where} holds no generator state; omit rng=.")
    prepared = None
    if optimizer is not None:
        prepared = _check_optimizer(meta["optimizer"], state, optimizer, where)
    return _Checked(step, rng_state, extra, stored, prepared)


def _check_arguments(model: Any, optimizer: Any, rng: Any, what: str) -> None:
    if not isinstance(model, Module):
        raise ArgumentError(f"{what} needs a Module; got {type(model).__name__}.")
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        raise ArgumentError(
            f"{what} optimizer= must be an Optimizer (AdamW, SGD) or None; got "
            f"{type(optimizer).__name__}."
        )
    if rng is not None and not isinstance(rng, SplitMix64):
        raise ArgumentError(
            f"{what} rng= must be the package's SplitMix64 or None; got {type(rng).__name__}. "
            "All randomness comes from llm_from_scratch.random.SplitMix64."
        )


def save_checkpoint(
    path: str | os.PathLike[str],
    model: Module,
    optimizer: Optimizer | None = None,
    *,
    step: int,
    rng: SplitMix64 | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Atomically write model (+ optimizer, step, generator state, JSON extras) to ``path``."""
    _check_arguments(model, optimizer, rng, "save_checkpoint")
    step = non_negative_int(step, "save_checkpoint step")
    target = checkpoint_path(path, "save_checkpoint")
    where = f"save_checkpoint({str(target)!r})"
    extra = _json_extra({} if extra is None else extra, where)
    arrays = {f"model/{name}": value for name, value in model.state_dict().items()}
    meta: dict[str, Any] = {
        "format": FORMAT,
        "step": step,
        "rng_state": None if rng is None else f"{rng.state:016x}",
        "model": {"class": type(model).__name__, "parameters": list(model.state_dict())},
        "optimizer": None,
        "extra": extra,
    }
    if optimizer is not None:
        state = optimizer.state_dict()
        for index, entries in state["state"].items():
            for name, value in entries.items():
                arrays[f"optimizer/{index}/{name}"] = np.asarray(value, dtype=np.float64)
        groups = state["param_groups"]
        meta["optimizer"] = {"class": type(optimizer).__name__, "param_groups": groups}
    try:
        text = json.dumps(meta, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ArgumentError(
            f"save_checkpoint: checkpoint extra (and optimizer options) must be "
            f"JSON-serialisable with finite numbers: {error}"
        ) from error
    _check(json.loads(text), arrays, model, optimizer, rng, where)  # what a load would refuse
    arrays["meta"] = np.array(text)
    target.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    _write_archive(buffer, arrays)
    write_bytes_atomic(target, buffer.getvalue())
    return target


def _read(path: Path) -> tuple[Any, dict[str, np.ndarray]]:
    if not path.is_file():
        raise ArgumentError(f"no checkpoint at {str(path)!r}.")
    try:
        with path.open("rb") as handle:
            archive = np.load(handle, allow_pickle=False)
            if not isinstance(archive, np.lib.npyio.NpzFile):
                raise ValueError("a single array, not an .npz archive")
            with archive:
                arrays = {name: archive[name] for name in archive.files}
        text = arrays.pop("meta")
        if text.shape != () or text.dtype.kind != "U":
            raise ValueError(f"'meta' must be one string; got {text.dtype} {text.shape}")
        meta = json.loads(str(text[()]))
    except (
        OSError,
        ValueError,
        KeyError,
        EOFError,
        zipfile.BadZipFile,
        json.JSONDecodeError,
    ) as error:
        raise ArgumentError(
            f"{str(path)!r} is not a readable checkpoint (a .npz with a 'meta' entry): {error}"
        ) from error
    return meta, arrays


def load_checkpoint(
    path: str | os.PathLike[str],
    model: Module,
    optimizer: Optimizer | None = None,
    *,
    rng: SplitMix64 | None = None,
) -> CheckpointInfo:
    """Restore model (+ optimizer, + generator); on any problem raise and change nothing."""
    _check_arguments(model, optimizer, rng, "load_checkpoint")
    source = checkpoint_path(path, "load_checkpoint")
    meta, arrays = _read(source)
    checked = _check(meta, arrays, model, optimizer, rng, repr(str(source)))
    if optimizer is not None:
        kept_state = optimizer.state
        kept_options = [
            {k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups
        ]
        optimizer.load_state_dict(checked.optimizer)  # refuses bad options, changing nothing
        try:
            model.load_state_dict(checked.model)  # every tensor checked: cannot fail
        except BaseException:  # pragma: no cover - a bug; put the optimizer back regardless
            optimizer.state = kept_state
            for group, options in zip(optimizer.param_groups, kept_options, strict=True):
                group.update(options)
            raise
    else:
        model.load_state_dict(checked.model)
    if rng is not None:
        rng.state = checked.rng_state
    return CheckpointInfo(checked.step, checked.rng_state, checked.extra)
