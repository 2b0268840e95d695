"""The stored runs in book/runs/: targets met, files small, and the log reproducible from the seed.

The book run also stores its corpus (corpus.json), so its baseline can be recomputed from the text
the run saw, whatever the chapters say now.

Re-running the first steps compares losses to a relative tolerance of 1e-6, not bit for bit:
another CPU or BLAS kernel changes the last bits of a matmul, training amplifies them step by step,
and after five steps they are still some six orders of magnitude below this tolerance, while any
change to the data, the initialisation, the loss or the optimizer moves the losses far more.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from llm_from_scratch.training import (
    CharTokenizer,
    TrainConfig,
    bigram_bits_per_char,
    load_run,
    train,
)
from llm_from_scratch.training.tasks import InductionTask

RUNS = Path(__file__).resolve().parents[2] / "book" / "runs"
REPRODUCE_STEPS = 5
RELATIVE_TOLERANCE = 1e-6


def _log(name: str) -> dict:
    return json.loads((RUNS / name / "log.json").read_text(encoding="utf-8"))


def _committed(folder: Path) -> list[Path]:
    """The run's files that git keeps: all but those book/runs/.gitignore names."""
    ignored = [
        line.strip()
        for line in (RUNS / ".gitignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return sorted(
        p for p in folder.iterdir() if p.is_file() and not any(p.match(g) for g in ignored)
    )


@pytest.mark.parametrize("name", ["induction", "book-prose"])
def test_stored_files_are_small_and_the_run_took_at_most_ten_minutes(name: str) -> None:
    folder = RUNS / name
    committed = _committed(folder)
    expected = {"config.json", "log.json", "model.npz"}
    if name == "book-prose":
        expected.add("corpus.json")  # the exact train and validation text
    assert expected <= {p.name for p in committed}, f"{folder} lacks {expected}"
    assert "checkpoint.npz" not in {p.name for p in committed}  # stays local, gitignored
    for path in committed:
        assert path.stat().st_size < 2 * 1024 * 1024, f"{path} is not under 2 MB"
    log = _log(name)
    config = TrainConfig.from_json(folder / "config.json")
    assert log["config"] == config.to_dict()
    assert [r["step"] for r in log["steps"]] == list(range(config.steps))
    assert sum(s["seconds"] for s in log["segments"]) <= 600


def test_induction_run_beats_its_target() -> None:
    log = _log("induction")
    final = log["final"]
    assert final["step"] == log["config"]["steps"]
    assert final["repeated_half_loss"] < 0.1
    assert final["baseline"] == pytest.approx(math.log(log["config"]["vocab_size"]), rel=1e-15)


def test_book_run_beats_the_bigram_by_a_fifth() -> None:
    log = _log("book-prose")
    final = log["final"]
    assert final["step"] == log["config"]["steps"]
    assert final["validation_bits_per_char"] < 0.8 * final["baseline"]


def test_the_book_run_stores_the_text_its_logged_numbers_were_measured_on() -> None:
    run = load_run(RUNS / "book-prose")
    task_log = run.log["task"]
    assert run.corpus is not None and run.corpus.sha256 == task_log["corpus_sha256"]
    assert list(run.corpus.sources) == task_log["sources"]
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
    assert bigram == pytest.approx(task_log["baseline"]["value"], rel=1e-12)


def test_rerunning_the_first_steps_reproduces_the_stored_log(tmp_path) -> None:
    stored = _log("induction")
    config = TrainConfig.from_json(RUNS / "induction" / "config.json")
    result = train(config.replace(output=str(tmp_path)), progress=False, stop_at=REPRODUCE_STEPS)
    expected = [r["loss"] for r in stored["steps"][:REPRODUCE_STEPS]]
    np.testing.assert_allclose(result.losses, expected, rtol=RELATIVE_TOLERANCE, atol=0)
    initial = stored["evals"][0]
    assert initial["step"] == 0
    np.testing.assert_allclose(
        result.evals[0]["repeated_half_loss"], initial["repeated_half_loss"], rtol=1e-9
    )


def test_the_stored_model_is_the_one_the_log_describes() -> None:
    run = load_run(RUNS / "induction")
    assert run.step == run.config.steps and run.tokenizer is None
    measured = InductionTask(run.config).evaluate(run.model)["repeated_half_loss"]
    assert measured == pytest.approx(
        run.log["final"]["repeated_half_loss"], rel=RELATIVE_TOLERANCE
    )
    book = load_run(RUNS / "book-prose")
    text = "The attention head"
    assert book.tokenizer.decode(book.tokenizer.encode(text)) == text
    assert book.model.vocab_size == book.tokenizer.vocab_size == book.log["task"]["vocab_size"]
