"""Reading safetensors one tensor at a time (sharded or not), and writing them.

A checkpoint folder holds ``model.safetensors`` or shards listed by
``model.safetensors.index.json`` ({"weight_map": {tensor name: shard file}}). Only headers are
read up front (names, dtypes, shapes); each tensor's bytes are read when it is converted to
float64. numpy has no bfloat16, so BF16 tensors (most published Llama, Qwen3 and Mistral
checkpoints) are widened bit by bit: a bfloat16 is the top 16 bits of a float32.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ArgumentError, ShapeError

#: safetensors dtype names numpy reads directly, and BF16, widened by hand.
DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": None}
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"


@dataclass(frozen=True)
class TensorInfo:
    """Where one stored tensor lives and what it is, from its file's header alone."""

    name: str
    path: Path
    dtype: str
    shape: tuple[int, ...]
    start: int  # absolute byte offsets in the file
    end: int


def _header(path: Path) -> dict[str, TensorInfo]:
    """{name: TensorInfo} from a safetensors header: 8-byte length, then JSON."""
    try:
        with path.open("rb") as f:
            size = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(size))
    except (OSError, ValueError) as error:
        raise ArgumentError(f"{path} is not a readable safetensors file ({error}).") from None
    infos = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        infos[name] = TensorInfo(
            name, path, meta["dtype"], tuple(meta["shape"]), 8 + size + start, 8 + size + end
        )
    return infos


def tensor_index(folder: Any) -> dict[str, TensorInfo]:
    """Every stored tensor of a model folder (single file or sharded), headers only."""
    folder = Path(folder)
    index = folder / INDEX
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ArgumentError(f"{index} must hold a JSON weight_map ({error}).") from None
        infos: dict[str, TensorInfo] = {}
        for shard in sorted(set(weight_map.values())):
            path = folder / shard
            if not path.is_file():
                raise ArgumentError(f"{index} lists the shard {shard}, which {folder} lacks.")
            infos.update(_header(path))
        missing = sorted(set(weight_map) - set(infos))
        if missing:
            raise ArgumentError(f"{index} maps {missing[0]!r} to a shard that does not hold it.")
        return infos
    single = folder / SINGLE
    if not single.is_file():
        raise ArgumentError(
            f"A model folder holds its weights in {SINGLE} or shards listed by {INDEX}; {folder} "
            "has neither (pytorch_model.bin is not read: convert it to safetensors)."
        )
    return _header(single)


def read_float64(info: TensorInfo) -> np.ndarray:
    """One stored tensor as a new float64 array (BF16 widened to float32 exactly, then f64)."""
    if info.dtype not in DTYPES:
        raise ArgumentError(
            f"Tensor {info.name!r} is stored as {info.dtype}; the book reads {list(DTYPES)}."
        )
    count = int(np.prod(info.shape, dtype=np.int64))
    width = 2 if info.dtype in ("F16", "BF16") else np.dtype(DTYPES[info.dtype]).itemsize
    if info.end - info.start != count * width:
        raise ShapeError(
            f"Tensor {info.name!r}: shape {info.shape} in {info.dtype} needs {count * width} "
            f"bytes; the header gives {info.end - info.start}."
        )
    with info.path.open("rb") as f:
        f.seek(info.start)
        raw = f.read(info.end - info.start)
    if info.dtype == "BF16":
        bits = np.frombuffer(raw, dtype="<u2").astype("<u4") << 16  # bf16 = top half of f32
        values = bits.view("<f4")
    else:
        values = np.frombuffer(raw, dtype=np.dtype(DTYPES[info.dtype]).newbyteorder("<"))
    return values.astype(np.float64).reshape(info.shape)


def write_safetensors(tensors: dict[str, np.ndarray], path: Path) -> None:
    """Write float64 arrays with safetensors' numpy API (metadata format: pt, as torch writes)."""
    from safetensors.numpy import save_file

    save_file(tensors, str(path), metadata={"format": "pt"})
