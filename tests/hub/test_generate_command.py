"""python -m llm_from_scratch.generate on the tiny saved models, with a tokenizer trained here."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llm_from_scratch.generate import main
from llm_from_scratch.generation import generate
from llm_from_scratch.hub import load_pretrained

TEXT = ["the cat sat on the mat", "a dog ran to the cat", "once upon a time there was a cat"]


def train_tokenizer(path: Path, vocab_size: int = 64) -> None:
    """A byte-level BPE of at most vocab_size tokens, trained offline on three sentences."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["[UNK]", "<s>", "</s>"], initial_alphabet=[]
    )
    tokenizer.train_from_iterator(TEXT * 5, trainer)
    assert tokenizer.get_vocab_size() <= vocab_size
    tokenizer.save(str(path))


@pytest.fixture(scope="module")
def folders(reference_folders, tmp_path_factory) -> dict[str, Path]:
    """Copies of the saved reference folders, each with the trained tokenizer.json."""
    root = tmp_path_factory.mktemp("command")
    train_tokenizer(root / "tokenizer.json")
    copies = {}
    for family, folder in reference_folders.items():
        copy = shutil.copytree(folder, root / family)
        shutil.copy(root / "tokenizer.json", copy / "tokenizer.json")
        copies[family] = copy
    return copies


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_greedy_text_is_the_decoders(folders, family: str) -> None:
    """The streamed text is the prompt plus the decoded greedy tokens of the book's generate."""
    from tokenizers import Tokenizer

    folder = folders[family]
    status, out, err = _run(
        "--model",
        str(folder),
        "--prompt",
        "the cat",
        "--greedy",
        "--max-new-tokens",
        "8",
        "--ignore-eos",
    )
    assert status == 0, err
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    prompt = tokenizer.encode("the cat").ids
    book = generate(load_pretrained(folder), [prompt], max_new_tokens=8, do_sample=False)
    assert out == "the cat" + tokenizer.decode(book.new_tokens[0].tolist()) + "\n"
    assert "memory estimate (float64)" in err.splitlines()[0]
    assert "8 tokens in" in err and "tokens/s" in err


def test_sampling_repeats_with_a_seed(folders) -> None:
    args = ("--model", str(folders["llama"]), "--prompt", "a dog", "--max-new-tokens", "6")
    first = _run(*args, "--seed", "3", "--temperature", "0.8", "--top-k", "10")
    again = _run(*args, "--seed", "3", "--temperature", "0.8", "--top-k", "10")
    assert first[0] == 0 and first[1] == again[1]


def test_refuses_a_run_that_does_not_fit(folders) -> None:
    status, out, err = _run(
        "--model", str(folders["gpt2"]), "--prompt", "the cat", "--max-memory", "1e-6"
    )
    assert status == 2 and out == ""
    assert "memory estimate" in err and "--max-memory" in err.splitlines()[-1]


def test_missing_tokenizer_and_unsupported_family(folders, tmp_path) -> None:
    bare = shutil.copytree(folders["qwen3"], tmp_path / "bare")
    (bare / "tokenizer.json").unlink()
    status, _, err = _run("--model", str(bare), "--prompt", "the")
    assert status == 2 and "tokenizer.json" in err
    config = json.loads((bare / "config.json").read_text())
    config["model_type"] = "falcon"
    (bare / "config.json").write_text(json.dumps(config))
    status, _, err = _run("--model", str(bare), "--prompt", "the")
    assert status == 2 and "'model_type'" in err and "'falcon'" in err
    status, _, err = _run("--model", str(tmp_path / "nowhere"), "--prompt", "the")
    assert status == 2 and "config.json" in err


def test_flags_refused_in_one_line(folders) -> None:
    for flags in (["--top-p", "1.5"], ["--temperature", "0"], ["--max-new-tokens", "0"]):
        status, _, err = _run("--model", str(folders["llama"]), "--prompt", "the", *flags)
        assert status == 2 and err.count("\n") <= 2, flags  # the estimate line may precede


def test_as_a_module_without_torch(folders) -> None:
    code = (
        "import runpy, sys; sys.argv = ['generate', '--model', sys.argv[1], '--prompt', 'the', "
        "'--greedy', '--max-new-tokens', '3']; "
        "import llm_from_scratch.generate as g; status = g.main(); "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules; "
        "sys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(folders["mistral"])], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("the")
    assert np.isfinite(float(done.stderr.split(":")[-1].split()[0]))
