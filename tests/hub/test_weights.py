"""The lazy safetensors reader against safetensors' own loader and torch's bfloat16."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from llm_from_scratch.errors import ArgumentError, ShapeError
from llm_from_scratch.hub.weights import read_float64, tensor_index


def test_each_dtype_matches_safetensors(tmp_path) -> None:
    rng = np.random.default_rng(0)
    arrays = {
        "f64": rng.normal(size=(3, 4)),
        "f32": rng.normal(size=(5,)).astype(np.float32),
        "f16": rng.normal(size=(2, 2, 2)).astype(np.float16),
    }
    save_file(arrays, str(tmp_path / "model.safetensors"))
    index = tensor_index(tmp_path)
    truth = load_file(str(tmp_path / "model.safetensors"))
    for name, info in index.items():
        got = read_float64(info)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, truth[name].astype(np.float64))


def test_bfloat16_widened_exactly(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file as save_torch

    values = torch.tensor([[1.0, -2.5, 3.140625], [1e-3, 65504.0, -0.0]]).bfloat16()
    save_torch({"w": values}, str(tmp_path / "model.safetensors"))
    got = read_float64(tensor_index(tmp_path)["w"])
    np.testing.assert_array_equal(got, values.double().numpy())


def test_sharded_index(tmp_path) -> None:
    save_file({"a": np.ones((2, 2))}, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file({"b": np.zeros(3)}, str(tmp_path / "model-00002-of-00002.safetensors"))
    weight_map = {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    index = tensor_index(tmp_path)
    assert sorted(index) == ["a", "b"]
    np.testing.assert_array_equal(read_float64(index["a"]), np.ones((2, 2)))
    weight_map["c"] = "model-00002-of-00002.safetensors"  # listed but not stored
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(ArgumentError, match="'c'"):
        tensor_index(tmp_path)


def test_missing_weights_and_bad_header(tmp_path) -> None:
    with pytest.raises(ArgumentError, match=r"model\.safetensors"):
        tensor_index(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00nope!")
    with pytest.raises(ArgumentError, match="not a readable safetensors"):
        tensor_index(tmp_path)


def test_truncated_tensor_named(tmp_path) -> None:
    save_file({"w": np.ones((4, 4))}, str(tmp_path / "model.safetensors"))
    info = tensor_index(tmp_path)["w"]
    from dataclasses import replace

    with pytest.raises(ShapeError, match="'w'"):
        read_float64(replace(info, shape=(4, 5)))
