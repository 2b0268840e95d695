"""``python -m benchmarks`` refuses what it does not know before it times or stores anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks
from benchmarks import generation, hub, test_suite, train_step
from benchmarks.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MAINS = {"": main, "train-step": train_step.main, "generation": generation.main, "hub": hub.main}


def stored() -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in RESULTS.glob("*.json")}


@pytest.mark.parametrize(
    ("case", "args", "message"),
    [
        ("", ["--bogus"], "unrecognized arguments: --bogus"),
        ("", ["nonsense"], "invalid choice: 'nonsense'"),
        ("train-step", ["--case", "tiny"], "invalid choice: 'tiny'"),
        ("train-step", ["--profile"], "expected one argument"),
        ("generation", ["--repeats", "3"], "unrecognized arguments: --repeats 3"),
        ("hub", ["--steps"], "unrecognized arguments: --steps"),
        ("test-suite", ["--quick"], "unrecognized arguments: --quick"),
    ],
)
def test_an_unknown_flag_stops_the_run_and_stores_nothing(
    case, args, message, capsys, monkeypatch
):
    monkeypatch.setattr(test_suite, "measure", never_run)  # a nested pytest would be wrong
    before = stored()
    with pytest.raises(SystemExit) as stop:
        (test_suite.main if case == "test-suite" else MAINS[case])(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert f"usage: python -m benchmarks{' ' + case if case else ''} " in err
    assert stored() == before


@pytest.mark.parametrize("case", list(MAINS))
def test_help_prints_the_flags_and_times_nothing(case, capsys):
    before = stored()
    with pytest.raises(SystemExit) as stop:
        MAINS[case](["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "--quick" in out
    assert f"usage: python -m benchmarks{' ' + case if case else ''} " in out
    assert stored() == before


def test_a_case_gets_the_flags_that_follow_it_on_the_real_command_line():
    before = stored()
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "train-step", "--bogus"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "python -m benchmarks train-step: error: unrecognized arguments: --bogus" in (
        result.stderr
    )
    assert stored() == before


def never_run() -> None:
    raise AssertionError("the whole test suite was started from a unit test")


def test_the_test_suite_case_prints_its_help_and_runs_nothing(capsys, monkeypatch):
    monkeypatch.setattr(test_suite, "measure", never_run)
    before = stored()
    with pytest.raises(SystemExit) as stop:
        test_suite.main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "usage: python -m benchmarks test-suite " in out
    assert "pytest --nbval" in out
    assert stored() == before


# What pytest printed at the end of a real run (shortened), and two /proc/stat readings.
PYTEST_TAIL = """\
============================= slowest 5 durations ==============================
30.99s call     tests/browser/test_jupyterlab_live_prose.py::test_prose@tests/browser/x
7.59s setup    tests/bugs/test_bug_zoo.py::test_the_clean_package_passes_every_check
12.44s call     tests/book/test_fixture_edits.py::test_fixture_edit_follows_everywhere[a:b c]
0.01s teardown tests/test_random.py::test_one
8.06s call     book/appendix-bug-zoo.ipynb::Cell 9@book/appendix-bug-zoo.ipynb
======================= 4425 passed in 237.62s (0:03:57) =======================
"""
# fields: user nice system idle iowait irq softirq steal guest guest_nice (guest is in user)
STAT_BEFORE = "cpu  100 10 50 800 50 5 5 0 40 0\ncpu0 50 5 25 400 25 2 2 0 20 0\n"
STAT_AFTER = "cpu  400 30 150 1000 80 15 25 100 90 0\ncpu0 200 15 75 500 40 7 12 50 45 0\n"


def test_the_slowest_tests_are_read_from_pytests_durations_slowest_first():
    rows = test_suite.slowest(PYTEST_TAIL, count=3)
    assert [row["seconds"] for row in rows] == [30.99, 12.44, 8.06]
    assert rows[1]["test"].endswith("[a:b c]")  # a parameter with a space stays whole
    assert rows[2]["phase"] == "call"
    every = test_suite.slowest(PYTEST_TAIL)
    assert [(row["seconds"], row["phase"]) for row in every[3:]] == [
        (7.59, "setup"),
        (0.01, "teardown"),
    ]


def test_the_summary_is_pytests_closing_line():
    assert test_suite.summary(PYTEST_TAIL) == "4425 passed in 237.62s (0:03:57)"
    assert test_suite.summary("no closing line\n") == ""


def test_cpu_shares_split_the_ticks_between_two_readings():
    # changes: user 300, nice 20, system 100, idle 200, iowait 30, irq 10, softirq 20, steal 100
    # (guest's 50 is already in user): 780 ticks, 450 busy, 230 idle or waiting, 100 stolen
    shares = test_suite.cpu_shares(
        test_suite.cpu_ticks(STAT_BEFORE), test_suite.cpu_ticks(STAT_AFTER)
    )
    assert shares == pytest.approx({"busy": 450 / 780, "idle": 230 / 780, "steal": 100 / 780})
    with pytest.raises(ValueError, match="did not advance"):
        test_suite.cpu_shares(test_suite.cpu_ticks(STAT_BEFORE), test_suite.cpu_ticks(STAT_BEFORE))
    with pytest.raises(ValueError, match="no 'cpu' line"):
        test_suite.cpu_ticks("cpu0 1 2 3\n")


def test_the_suite_runs_in_the_callers_environment_not_the_benchmarks(monkeypatch):
    for name in benchmarks.SET_HERE:  # what importing benchmarks set, the suite must not get
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("PY_COLORS", "1")
    monkeypatch.setenv("LFS_PROBE", "kept")
    env = test_suite.suite_environment()
    assert not set(benchmarks.SET_HERE) & set(env)
    assert env["PY_COLORS"] == "0"  # the output is parsed
    assert env["LFS_PROBE"] == "kept"


def test_a_case_started_from_python_m_benchmarks_gets_the_callers_blas_settings():
    # `python -m benchmarks CASE` imports the package (one BLAS thread) before it starts CASE:
    # what it passes on must be the caller's environment, as the case's own process sees it
    probe = (
        "import os, benchmarks; "
        "print(os.environ['OPENBLAS_NUM_THREADS'], "
        "benchmarks.caller_environment().get('OPENBLAS_NUM_THREADS', 'unset'))"
    )
    env = {k: v for k, v in os.environ.items() if k not in benchmarks.SET_HERE}
    env.pop("OPENBLAS_NUM_THREADS", None)
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    ).stdout.split()
    assert out == ["1", "unset"]
    env["OPENBLAS_NUM_THREADS"] = "2"  # a caller's own setting is kept, and passed on
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    ).stdout.split()
    assert out == ["2", "2"]


def test_a_store_that_fails_mid_write_leaves_the_stored_run(tmp_path, monkeypatch):
    from benchmarks import timing

    monkeypatch.setattr(timing, "RESULTS", tmp_path)
    timing.store({"run": 1}, "first", "case.json")
    kept = (tmp_path / "case.json").read_text()

    def half_then_crash(self, data, *args, **kwargs):
        Path.write_bytes(self, data[: len(data) // 2].encode())
        raise OSError("disk full")

    monkeypatch.setattr(Path, "write_text", half_then_crash)
    with pytest.raises(OSError, match="disk full"):
        timing.store({"run": 2}, "second", "case.json")
    monkeypatch.undo()
    assert (tmp_path / "case.json").read_text() == kept
