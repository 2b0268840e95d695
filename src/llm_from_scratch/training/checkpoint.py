"""Checkpoints: model, optimizer state, step and generator state in one ``.npz``, no pickle.

Layout: ``model/<parameter name>`` arrays, ``optimizer/<index>/<state name>`` arrays, and
``meta``, a 0-d string array holding JSON (format, step, generator state, optimizer class and
options, parameter names, any extra fields). The write is atomic: the archive goes to a
temporary file in the destination folder, is flushed to disk, and only then ``os.replace``-d
onto the final name, so a crash mid-write never leaves a half file there. Loading checks every
tensor against the model and optimizer before changing either, and names the first mismatch.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError, ParameterError, ShapeError
from ..nn.module import Module
from ..random import SplitMix64
from ..validate import non_negative_int
from .optim import Optimizer

FORMAT = "llm_from_scratch.checkpoint/1"


@dataclass(frozen=True)
class CheckpointInfo:
    """What a loaded checkpoint said besides the tensors: step, generator state, extras."""

    step: int
    rng_state: int | None
    extra: dict[str, Any] = field(default_factory=dict)


def _write_archive(handle: Any, arrays: dict[str, np.ndarray]) -> None:
    """Write the arrays as one compressed .npz into an open binary file."""
    np.savez_compressed(handle, **arrays)


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
    if not isinstance(model, Module):
        raise ArgumentError(f"save_checkpoint needs a Module; got {type(model).__name__}.")
    step = non_negative_int(step, "save_checkpoint step")
    target = Path(path)
    if target.suffix != ".npz":
        raise ArgumentError(f"checkpoint paths end in .npz; got {str(target)!r}.")
    arrays = {f"model/{name}": value for name, value in model.state_dict().items()}
    meta: dict[str, Any] = {
        "format": FORMAT,
        "step": step,
        "rng_state": None if rng is None else f"{rng.state:016x}",
        "model": {"class": type(model).__name__, "parameters": list(model.state_dict())},
        "optimizer": None,
        "extra": extra or {},
    }
    if optimizer is not None:
        state = optimizer.state_dict()
        for index, entries in state["state"].items():
            for name, value in entries.items():
                arrays[f"optimizer/{index}/{name}"] = np.asarray(value, dtype=np.float64)
        groups = state["param_groups"]
        meta["optimizer"] = {"class": type(optimizer).__name__, "param_groups": groups}
    try:
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    except TypeError as error:
        raise ArgumentError(f"checkpoint extra must be JSON-serialisable: {error}") from error
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            _write_archive(handle, arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes it owner-only; a checkpoint is shared
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def _read(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    if not path.is_file():
        raise ArgumentError(f"no checkpoint at {str(path)!r}.")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        meta = json.loads(str(arrays.pop("meta")[()]))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as error:
        raise ArgumentError(
            f"{str(path)!r} is not a readable checkpoint (a .npz with a 'meta' entry): {error}"
        ) from error
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ArgumentError(
            f"{str(path)!r} is not a {FORMAT} checkpoint; its meta says "
            f"{meta.get('format') if isinstance(meta, dict) else meta!r}."
        )
    return meta, arrays


def _check_model(model: Module, arrays: dict[str, np.ndarray], path: Path) -> dict[str, Any]:
    """The checkpoint's model tensors, after checking names and shapes in forward order."""
    stored = {k[len("model/") :]: v for k, v in arrays.items() if k.startswith("model/")}
    for name, p in model.named_parameters():
        if name not in stored:
            raise ParameterError(
                f"checkpoint {str(path)!r} does not fit {model.name!r}: first mismatch at "
                f"{name!r}, which the checkpoint lacks (it holds {len(stored)} tensors, e.g. "
                f"{sorted(stored)[:3]}). Was it saved from another model?"
            )
        if stored[name].shape != p.shape:
            raise ShapeError(
                f"checkpoint {str(path)!r} does not fit {model.name!r}: first mismatch at "
                f"{name!r}, shape {p.shape} in the model but {stored[name].shape} in the "
                "checkpoint. Build the model with the sizes it was saved with."
            )
    unknown = sorted(set(stored) - {n for n, _ in model.named_parameters()})
    if unknown:
        raise ParameterError(
            f"checkpoint {str(path)!r} does not fit {model.name!r}: first mismatch at "
            f"{unknown[0]!r}, a tensor the model does not have."
        )
    return stored


def _optimizer_state(
    meta: dict[str, Any], arrays: dict[str, np.ndarray], optimizer: Optimizer, path: Path
) -> dict[str, Any]:
    saved = meta.get("optimizer")
    if saved is None:
        raise ArgumentError(
            f"checkpoint {str(path)!r} holds no optimizer state; load it without optimizer=."
        )
    if saved["class"] != type(optimizer).__name__:
        raise ParameterError(
            f"checkpoint {str(path)!r} holds {saved['class']} state; got a "
            f"{type(optimizer).__name__} optimizer."
        )
    state: dict[int, dict[str, Any]] = {}
    for key, value in arrays.items():
        if key.startswith("optimizer/"):
            _, index, name = key.split("/", 2)
            entry = state.setdefault(int(index), {})
            entry[name] = float(value) if name == "step" else value
    groups = [
        {**g, "betas": tuple(g["betas"])} if "betas" in g else dict(g)
        for g in saved["param_groups"]
    ]
    return {"state": state, "param_groups": groups}


def load_checkpoint(
    path: str | os.PathLike[str],
    model: Module,
    optimizer: Optimizer | None = None,
    *,
    rng: SplitMix64 | None = None,
) -> CheckpointInfo:
    """Restore model (+ optimizer, + generator); on any mismatch raise and change nothing."""
    source = Path(path)
    meta, arrays = _read(source)
    stored = _check_model(model, arrays, source)
    rng_state = None if meta.get("rng_state") is None else int(meta["rng_state"], 16)
    if rng is not None and rng_state is None:
        raise ArgumentError(f"checkpoint {str(source)!r} holds no generator state; omit rng=.")
    if optimizer is not None:
        optimizer.load_state_dict(_optimizer_state(meta, arrays, optimizer, source))
    model.load_state_dict(stored)  # checked above, so it cannot fail after the optimizer loaded
    if rng is not None:
        rng.state = rng_state
    return CheckpointInfo(int(meta["step"]), rng_state, dict(meta.get("extra") or {}))
