"""Loading refusals (each naming the tensor or field), and saving a model the book built itself."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from llm_from_scratch.autodiff import no_grad
from llm_from_scratch.errors import ArgumentError, ParameterError, ShapeError
from llm_from_scratch.generation import generate
from llm_from_scratch.hub import load_pretrained, save_pretrained
from llm_from_scratch.nn import Decoder
from llm_from_scratch.random import SplitMix64

from .reference import load_reference

torch = pytest.importorskip("torch")


def _edited(folder, tmp_path, edit) -> object:
    """A copy of a folder whose tensors went through ``edit(dict)``."""
    copy = shutil.copytree(folder, tmp_path / "edited")
    tensors = load_file(str(copy / "model.safetensors"))
    edit(tensors)
    save_file(tensors, str(copy / "model.safetensors"))
    return copy


def test_shape_mismatch_names_the_tensor(reference_folders, tmp_path) -> None:
    name = "model.layers.1.self_attn.k_proj.weight"

    def edit(t: dict) -> None:
        t[name] = np.zeros((8, 32))

    with pytest.raises(ShapeError, match=f"'{name}'.*\\(16, 32\\).*\\(8, 32\\)"):
        load_pretrained(_edited(reference_folders["llama"], tmp_path, edit))


def test_missing_and_unmapped_tensors(reference_folders, tmp_path) -> None:
    name = "transformer.h.0.mlp.c_fc.bias"
    folder = _edited(reference_folders["gpt2"], tmp_path, lambda t: t.pop(name))
    with pytest.raises(ParameterError, match=f"'{name}'.*missing"):
        load_pretrained(folder)
    extra = "model.layers.0.self_attn.q_proj.bias"  # a bias the config says is absent
    folder = _edited(
        reference_folders["mistral"], tmp_path / "b", lambda t: t.update({extra: np.zeros(32)})
    )
    with pytest.raises(ParameterError, match=f"'{extra}'"):
        load_pretrained(folder)


def test_non_finite_weight_refused(reference_folders, tmp_path) -> None:
    def edit(t: dict) -> None:
        t["model.norm.weight"] = np.full(32, np.nan)

    with pytest.raises(ParameterError, match=r"'model\.norm\.weight'"):
        load_pretrained(_edited(reference_folders["qwen3"], tmp_path, edit))


def test_config_refusal_before_any_weight(reference_folders, tmp_path) -> None:
    copy = shutil.copytree(reference_folders["mixtral"], tmp_path / "cfg")
    config = json.loads((copy / "config.json").read_text())
    config["hidden_act"] = "gelu"
    (copy / "config.json").write_text(json.dumps(config))
    (copy / "model.safetensors").write_bytes(b"")  # never read: the config is refused first
    with pytest.raises(ArgumentError, match="'hidden_act' = 'gelu'"):
        load_pretrained(copy)


def _book_llama() -> Decoder:
    """The Chapter 10 decoder's parts in the Llama configuration, interleaved RoPE pairing."""
    return Decoder(
        64,
        32,
        2,
        4,
        48,
        tie_embeddings=False,
        positions="rope",
        norm="rms",
        ffn="swiglu",
        num_kv_heads=2,
        norm_eps=1e-6,
        rng=SplitMix64(10),
    )


def test_book_model_saved_as_llama_generates_alike(tmp_path) -> None:
    """transformers loads a book-built model and generates the book's greedy tokens."""
    model = _book_llama()
    assert model.blocks[0].attention.positions.pairing == "interleaved"
    folder = save_pretrained(model, tmp_path / "book-llama", "llama")
    reference = load_reference(folder, "llama")
    prompt = [3, 14, 15, 9, 26, 5]
    with torch.no_grad():
        out = reference.generate(
            torch.tensor([prompt]),
            do_sample=False,
            max_new_tokens=16,
            pad_token_id=0,
            eos_token_id=None,
        )
    book = generate(model, [prompt], max_new_tokens=16, do_sample=False)
    np.testing.assert_array_equal(book.new_tokens[0], out[0, len(prompt) :].numpy())
    ids = np.array([prompt])
    with no_grad():
        ours = model(ids).value
    with torch.no_grad():
        theirs = reference(torch.tensor(ids)).logits.numpy()
    assert np.max(np.abs(ours - theirs)) < 1e-10 * np.max(np.abs(theirs))


def test_save_refuses_parts_of_another_family(tmp_path) -> None:
    with pytest.raises(ArgumentError, match=r"gpt2.*norm 'layer'"):
        save_pretrained(_book_llama(), tmp_path / "x", "gpt2")
    with pytest.raises(ArgumentError, match="qk_norm=True"):
        save_pretrained(_book_llama(), tmp_path / "x", "qwen3")
    with pytest.raises(ArgumentError, match="family"):
        save_pretrained(_book_llama(), tmp_path / "x", "bert")
    assert not (tmp_path / "x").exists()  # nothing written by a refused call
