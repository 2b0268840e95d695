"""A book run stores the exact text it trained on (corpus.json), and load_run gives it back.

The stored text is what makes a book run measurable after the chapters change: its SHA-256 is the
log's ``corpus_sha256``, the bigram baseline recomputed from it is the log's baseline, and a
resumed run trains on it rather than on the chapters as they are by then.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from llm_from_scratch.errors import ArgumentError
from llm_from_scratch.training import (
    CharTokenizer,
    TextSplit,
    TrainConfig,
    bigram_bits_per_char,
    book_prose_split,
    load_corpus,
    load_run,
    save_corpus,
    train,
)

CHAPTERS = {
    "a.md": "# The cat\n\nThe cat sat on the mat, and the mat was flat. " * 4,
    "b.md": "A dog, a log, a fog: `code` stays as text. " * 5,
}


def _chapters(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, body in CHAPTERS.items():
        (folder / name).write_text(body + "\n", encoding="utf-8")
    return folder


def _config(tmp_path: Path, **changes) -> TrainConfig:
    settings = {
        "task": "book",
        "book_dir": str(_chapters(tmp_path / "chapters")),
        "context": 8,
        "batch_size": 3,
        "model_width": 8,
        "num_heads": 2,
        "hidden_width": 16,
        "num_layers": 1,
        "steps": 6,
        "warmup_steps": 1,
        "eval_every": 3,
        "checkpoint_every": 2,
        "validation_fraction": 0.25,
        "output": str(tmp_path / "run"),
    }
    return TrainConfig(**{**settings, **changes})


def test_a_book_run_stores_its_text_and_load_run_returns_it(tmp_path) -> None:
    config = _config(tmp_path)
    expected = book_prose_split(
        sorted(Path(config.book_dir).glob("*.md")), config.validation_fraction
    )
    train(config, progress=False)
    for chapter in Path(config.book_dir).glob("*.md"):  # the chapters move on after the run
        chapter.write_text("Rewritten entirely, with new characters: ½ ✓.\n", encoding="utf-8")
    run = load_run(config.output)
    assert run.corpus == expected
    task_log = run.log["task"]
    assert run.corpus.sha256 == task_log["corpus_sha256"]
    assert (len(run.corpus.train), len(run.corpus.validation)) == (
        task_log["train_chars"],
        task_log["validation_chars"],
    )
    tokenizer = CharTokenizer.from_text(run.corpus.train + run.corpus.validation)
    assert tokenizer.characters == run.tokenizer.characters
    bigram = bigram_bits_per_char(
        tokenizer.encode(run.corpus.train),
        tokenizer.encode(run.corpus.validation),
        tokenizer.vocab_size,
    )
    assert bigram == task_log["baseline"]["value"] == run.log["final"]["baseline"]


def test_the_corpus_file_is_plain_json_with_its_fingerprint(tmp_path) -> None:
    config = _config(tmp_path, steps=1, warmup_steps=0)
    train(config, progress=False)
    data = json.loads((Path(config.output) / "corpus.json").read_text(encoding="utf-8"))
    assert sorted(data) == ["format", "sha256", "sources", "train", "validation"]
    assert data["sources"] == sorted(CHAPTERS)
    assert data["sha256"] == TextSplit(data["train"], data["validation"], ()).sha256


def test_an_induction_run_stores_no_corpus(tmp_path) -> None:
    config = TrainConfig(
        vocab_size=8,
        context=12,
        min_half_length=3,
        max_half_length=6,
        model_width=8,
        num_heads=2,
        hidden_width=16,
        num_layers=1,
        steps=1,
        warmup_steps=0,
        eval_batches=1,
        output=str(tmp_path / "run"),
    )
    (tmp_path / "run").mkdir()
    save_corpus(tmp_path / "run" / "corpus.json", TextSplit("an earlier", " book run", ()))
    train(config, progress=False)
    assert not (tmp_path / "run" / "corpus.json").exists()
    assert load_run(tmp_path / "run").corpus is None


def test_a_resumed_run_trains_on_the_stored_text_not_the_changed_chapters(tmp_path) -> None:
    whole = train(_config(tmp_path / "whole"), progress=False)
    config = _config(tmp_path / "cut")
    train(config, progress=False, stop_at=2)
    (Path(config.book_dir) / "a.md").write_text("Something else.\n", encoding="utf-8")
    resumed = train(config, resume=True, progress=False)
    np.testing.assert_array_equal(resumed.losses, whole.losses)
    assert resumed.evals == whole.evals


def test_resume_refuses_a_corpus_that_is_not_the_logged_one(tmp_path) -> None:
    config = _config(tmp_path)
    train(config, progress=False, stop_at=2)
    (Path(config.book_dir) / "a.md").write_text("Something else.\n", encoding="utf-8")
    (Path(config.output) / "corpus.json").unlink()  # an older run: the chapters are re-read
    with pytest.raises(ArgumentError, match="corpus differs"):
        train(config, resume=True, progress=False)


def test_a_corpus_that_does_not_match_its_fingerprint_or_the_log_is_refused(tmp_path) -> None:
    config = _config(tmp_path, steps=1, warmup_steps=0)
    train(config, progress=False)
    path = Path(config.output) / "corpus.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, "train": data["train"][:-1]}), encoding="utf-8")
    with pytest.raises(ArgumentError, match="edited or cut short"):
        load_corpus(path)
    other = TextSplit("another text", "entirely", ("x.md",))
    save_corpus(path, other)
    assert load_corpus(path) == other
    with pytest.raises(ArgumentError, match="not the one this run used"):
        load_run(config.output)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ArgumentError, match="is not a"):
        load_corpus(path)
