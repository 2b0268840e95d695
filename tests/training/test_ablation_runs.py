"""Chapter 12's stored ablation runs: G = H, 2, 1 on one corpus, seed and budget, each ≤ 10 min."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_from_scratch.training import load_run
from llm_from_scratch.training.tasks import BookTask

RUNS = Path(__file__).resolve().parents[2] / "book" / "runs"
NAMES = {"ablation-g4": 4, "ablation-g2": 2, "ablation-g1": 1}


@pytest.fixture(scope="module")
def runs():
    return {name: load_run(RUNS / name) for name in NAMES}


def test_the_runs_differ_only_in_the_key_value_heads(runs) -> None:
    configs = [r.config.to_dict() for r in runs.values()]
    for c in configs:
        c.pop("kv_heads", None)
        c.pop("output")
    assert all(c == configs[0] for c in configs)
    hashes = {r.log["task"]["corpus_sha256"] for r in runs.values()}
    assert len(hashes) == 1
    for name, r in runs.items():
        assert (r.config.kv_heads or r.config.num_heads) == NAMES[name]
        assert all(block.attention.num_kv_heads == NAMES[name] for block in r.model.blocks)
        assert r.corpus is not None and r.corpus.sha256 == r.log["task"]["corpus_sha256"]


def test_each_run_finished_within_ten_minutes_and_files_are_small(runs) -> None:
    for name, r in runs.items():
        assert r.log["final"]["step"] == r.config.steps
        assert [s["step"] for s in r.log["steps"]] == list(range(r.config.steps))
        assert sum(s["seconds"] for s in r.log["segments"]) <= 600, name
        for file in ("config.json", "log.json", "model.npz", "corpus.json"):
            assert (RUNS / name / file).stat().st_size < 2 * 1024 * 1024


def test_each_stored_model_scores_what_its_log_says(runs) -> None:
    for r in runs.values():
        measured = BookTask(r.config, r.corpus).evaluate(r.model)["validation_bits_per_char"]
        assert measured == pytest.approx(r.log["final"]["validation_bits_per_char"], rel=1e-9)
