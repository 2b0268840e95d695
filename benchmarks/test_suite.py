"""Time the README's test command, ``pytest --nbval``, and store the run with its machine.

``python -m benchmarks test-suite`` runs the whole suite once from the repository root (every
test, nothing deselected; ``--durations=5`` only adds pytest's list of the five slowest) and
writes ``benchmarks/results/test_suite.json``: the wall time against the 240 s target, how busy
the machine's cores were while it ran (from ``/proc/stat``: the suite's own work, and any other
load), the share of time the hypervisor took away (steal), the load average before, the five
slowest tests and pytest's summary line. The suite runs in the caller's environment, without the
one-thread BLAS settings the other benchmarks use. A run with a failing test is printed, not
stored. Run it on a machine doing nothing else: the target is for a quiet 2-core machine, and
the busy and steal shares say how quiet this one was.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from . import caller_environment
from .machine import machine_line, run_fields
from .timing import store

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ["pytest", "--nbval"]  # the README's test command
# pytest from this interpreter's environment (another `pytest` on PATH may be another one's)
PYTEST = Path(sys.executable).with_name("pytest")
TARGET_S = 240.0
SLOWEST = 5
TIMEOUT_S = 3600.0  # a hung suite stops the benchmark instead of hanging it
# /proc/stat's first line: cpu user nice system idle iowait irq softirq steal (in clock ticks)
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(call|setup|teardown)\s+(\S.*?)\s*$")
SUMMARY = re.compile(r"^=+ (.*\b(?:passed|failed|error|errors)\b.*) =+$")


def cpu_ticks(stat: str) -> dict[str, int]:
    """The machine-wide tick counters of /proc/stat's ``cpu`` line, by name."""
    for line in stat.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            return dict(zip(CPU_FIELDS, map(int, fields[1:]), strict=False))
    raise ValueError("no 'cpu' line in /proc/stat")


def cpu_shares(before: dict[str, int], after: dict[str, int]) -> dict[str, float]:
    """Share of all core time between two readings: busy (working), idle (and iowait), steal."""
    delta = {name: after.get(name, 0) - before.get(name, 0) for name in CPU_FIELDS}
    total = sum(delta.values())
    if total <= 0:
        raise ValueError("the /proc/stat counters did not advance")
    idle = delta["idle"] + delta["iowait"]
    return {
        "busy": (total - idle - delta["steal"]) / total,
        "idle": idle / total,
        "steal": delta["steal"] / total,
    }


def slowest(output: str, count: int = SLOWEST) -> list[dict[str, object]]:
    """pytest's ``--durations`` lines: seconds, phase and test id, slowest first."""
    rows = []
    for line in output.splitlines():
        match = DURATION.match(line)
        if match:
            seconds, phase, test = match.groups()
            rows.append({"seconds": float(seconds), "phase": phase, "test": test})
    return sorted(rows, key=lambda row: -float(row["seconds"]))[:count]


def summary(output: str) -> str:
    """pytest's closing line, e.g. ``4425 passed in 237.62s (0:03:57)``; '' if there is none."""
    found = [m.group(1) for m in map(SUMMARY.match, output.splitlines()) if m]
    return found[-1] if found else ""


def read_stat() -> dict[str, int] | None:
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return cpu_ticks(stat.read())
    except OSError:
        return None  # not Linux: the shares are not recorded


def suite_environment() -> dict[str, str]:
    """This environment as a reader's shell has it: without the one-thread BLAS settings this
    package set for its own timings, and with pytest's output uncoloured (it is parsed)."""
    env = caller_environment()
    env["PY_COLORS"] = "0"
    return env


def measure() -> tuple[dict, str]:
    """Run the suite once: the report and pytest's output."""
    load_before = os.getloadavg()
    ticks_before = read_stat()
    start = time.perf_counter()
    executable = str(PYTEST) if PYTEST.is_file() else COMMAND[0]
    env = suite_environment()
    completed = subprocess.run(
        [executable, *COMMAND[1:], f"--durations={SLOWEST}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    wall = time.perf_counter() - start
    ticks_after = read_stat()
    output = completed.stdout + completed.stderr
    fields = run_fields()  # the BLAS thread setting recorded is the suite's, not this process's
    fields["machine_info"]["blas_threads"] = env.get("OPENBLAS_NUM_THREADS", "default")
    report = {
        **fields,
        "command": " ".join(COMMAND),
        "exit_status": completed.returncode,
        "summary": summary(output),
        "wall_s": wall,
        "target_s": TARGET_S,
        "cpu_shares": (
            cpu_shares(ticks_before, ticks_after) if ticks_before and ticks_after else None
        ),
        "load_average_before": [round(v, 2) for v in load_before],
        "slowest": slowest(output),
    }
    return report, output


def render(report: dict) -> str:
    if report["exit_status"] != 0:
        verdict = f"failed (exit status {report['exit_status']})"
    else:
        verdict = "ok" if report["wall_s"] <= report["target_s"] else "missed"
    lines = [
        f"`{report['command']}` ({report['date']}, Python {report['python']}, "
        f"numpy {report['numpy']})",
        machine_line(report),
        f"wall {report['wall_s']:.1f} s (target ≤ {report['target_s']:.0f} s) {verdict}; "
        f"pytest: {report['summary'] or 'no summary line'}",
    ]
    shares = report["cpu_shares"]
    if shares:
        lines.append(
            f"cores while it ran: {100 * shares['busy']:.1f}% busy, {100 * shares['idle']:.1f}% "
            f"idle, {100 * shares['steal']:.1f}% stolen by the hypervisor"
        )
    lines.append(
        f"load average (1, 5, 15 min) before: {report['load_average_before']} on "
        f"{report['machine_info']['cores']} cores"
    )
    lines.append(f"the {len(report['slowest'])} slowest tests:")
    lines += [
        f"  {row['seconds']:7.2f} s  {row['phase']:<8} {row['test']}" for row in report["slowest"]
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(
        prog="python -m benchmarks test-suite",
        description=f"Run `{' '.join(COMMAND)}` once from the repository root and store its "
        "wall time, the machine's CPU shares and the five slowest tests in "
        "benchmarks/results/test_suite.json.",
    )
    cli.parse_args(sys.argv[1:] if argv is None else argv)  # --help, or an unknown flag stops
    report, output = measure()
    unread = not report["summary"] or len(report["slowest"]) < SLOWEST
    if report["exit_status"] != 0 or unread:  # a failed or unread run is not the suite's time
        why = "pytest's summary or durations could not be read" if unread else "a test failed"
        print(output[-4000:], render(report), f"Nothing was stored: {why}.", sep="\n")
        sys.exit(report["exit_status"] or 1)
    store(report, render(report), "test_suite.json")


if __name__ == "__main__":
    main()
