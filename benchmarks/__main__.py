"""Run every benchmark, print one table, write benchmarks/results/latest.json.

``python -m benchmarks`` (add ``--quick`` for fewer repeats while developing; ``--help`` lists the
flags, and an unknown one stops the run before anything is timed or stored).
``python -m benchmarks generation`` runs the generation case instead (KV cache against none,
``benchmarks/generation.py``), writing ``benchmarks/results/generation.json``;
``python -m benchmarks test-suite`` times the README's test command (``benchmarks/test_suite.py``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from . import block, caller_environment, engine
from .machine import machine_line, run_fields
from .timing import fmt_time, store


def collect(repeats: int) -> dict:
    load_before = os.getloadavg()
    rows = engine.run()["rows"]
    table = [
        {
            "case": r["case"],
            "engine_s": r["engine_s"],
            "handwritten_s": r["handwritten_s"],
            "autograd_s": None,
            "torch_s": r["torch_s"],
            "target": r["target"],
        }
        for r in rows
    ]
    blocks = [block.measure(size, repeats) for size in (block.SMALL, block.MEDIUM)]
    for b, target in zip(blocks, (2.0, 1.15), strict=True):
        table.append(
            {
                "case": f"pre-norm block {b['size']} fwd+bwd",
                "engine_s": b["engine_s"],
                "handwritten_s": b["handwritten_s"],
                "autograd_s": b["autograd_s"],
                "torch_s": b["torch_s"],
                "target": target,
            }
        )
    for b, target in zip(blocks, (1.5, 1.15), strict=True):  # the same block, fused=True
        table.append(
            {
                "case": f"block {b['size']}, fused=True",
                "engine_s": b["engine_fused_s"],
                "handwritten_s": b["handwritten_s"],
                "autograd_s": None,
                "torch_s": None,
                "target": target,
            }
        )
    medium = blocks[1]
    if "engine_kept_s" in medium:
        table.append(
            {
                "case": "medium, freed memory kept by malloc",
                "engine_s": medium["engine_kept_s"],
                "handwritten_s": medium["handwritten_kept_s"],
                "autograd_s": None,
                "torch_s": None,
                "target": None,  # a diagnostic: the page faults taken out, arithmetic left
            }
        )
    return {
        **run_fields(),
        "repeats": repeats,
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "rows": table,
        "blocks": blocks,
        "memory": {
            "engine_peak_MiB": medium["engine_peak_bytes"] / 2**20,
            "engine_fused_peak_MiB": medium["engine_fused_peak_bytes"] / 2**20,
            "handwritten_peak_MiB": medium["handwritten_peak_bytes"] / 2**20,
            "target_ratio": 1.1,
        },
    }


def render(report: dict) -> str:
    lines = [
        f"Benchmarks ({report['date']}, Python {report['python']}, numpy {report['numpy']}, "
        f"median of {report['repeats']})",
        machine_line(report),
        f"{'case':36} {'engine':>11} {'handwritten':>12} {'autograd':>11} {'torch':>11} "
        f"{'ratio':>7} {'target':>7}",
    ]
    for r in report["rows"]:
        ratio = r["engine_s"] / r["handwritten_s"]
        auto = "—" if r["autograd_s"] is None else fmt_time(r["autograd_s"])
        torch = "—" if r.get("torch_s") is None else fmt_time(r["torch_s"])
        if r["target"] is None:
            target, verdict = "—", ""
        else:
            target = f"{r['target']:.2f}×"
            verdict = "ok" if ratio <= r["target"] else "missed"
        lines.append(
            f"{r['case']:36} {fmt_time(r['engine_s']):>11} {fmt_time(r['handwritten_s']):>12} "
            f"{auto:>11} {torch:>11} {ratio:>6.2f}× {target:>7} {verdict}".rstrip()
        )
    lines.append("ratio = engine / handwritten numpy; — = not measured; blocks: CPU time")
    lines.append("autograd = HIPS autograd; torch = PyTorch eager, float64, 1 thread")
    m = report["memory"]
    lines.append(
        f"peak memory, medium block: engine {m['engine_peak_MiB']:.1f} MiB, handwritten "
        f"{m['handwritten_peak_MiB']:.1f} MiB "
        f"({m['engine_peak_MiB'] / m['handwritten_peak_MiB']:.2f}×, target ≤ {m['target_ratio']}×)"
    )
    if "engine_fused_peak_MiB" in m:
        lines.append(
            f"peak memory, medium block, fused=True: {m['engine_fused_peak_MiB']:.1f} MiB "
            f"({m['engine_fused_peak_MiB'] / m['handwritten_peak_MiB']:.2f}×)"
        )
    for b in report["blocks"]:
        if "tape_entries" in b and b["size"] == "small":  # where bookkeeping sets the ratio
            lines.append(
                f"{b['size']} block tape: {b['tape_entries']} entries per forward pass (each "
                f"visited once backward); (engine − handwritten) / entries = "
                f"{fmt_time(b['overhead_per_entry_s'])} per entry; paired engine / handwritten "
                f"ratio over alternating rounds {b['paired_ratio_median']:.2f}×"
            )
            if "tape_entries_fused" in b:
                lines.append(
                    f"{b['size']} block tape, fused=True: {b['tape_entries_fused']} "
                    f"entries; {fmt_time(b['overhead_per_entry_fused_s'])} per entry; paired "
                    f"ratio {b['paired_ratio_fused_median']:.2f}×"
                )
    for b in report["blocks"]:
        line = (
            f"{b['size']} block gradients: max |engine − handwritten| = "
            f"{b['max_gradient_difference']:.1e}"
        )
        if "fused_max_gradient_difference" in b:
            line += f", max |fused − handwritten| = {b['fused_max_gradient_difference']:.1e}"
        if "torch_max_gradient_difference" in b:
            line += f", max |torch − handwritten| = {b['torch_max_gradient_difference']:.1e}"
        lines.append(line)
    if "load_average_before" in report:
        lines.append(
            f"load average (1, 5, 15 min): before {report['load_average_before']}, after "
            f"{report['load_average_after']} on {report['machine_info']['cores']} cores"
        )
    return "\n".join(lines)


SEPARATE_CASES = {
    "generation": "benchmarks.generation",
    "train-step": "benchmarks.train_step",
    "hub": "benchmarks.hub",
    "test-suite": "benchmarks.test_suite",
}


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m benchmarks``."""
    cli = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time the engine against handwritten numpy (and PyTorch where installed) and "
        "store the table in benchmarks/results/. With a CASE, run that case alone.",
    )
    cli.add_argument(
        "case",
        nargs="?",
        choices=sorted(SEPARATE_CASES),
        help="a case with a module of its own; its flags follow it "
        "(python -m benchmarks CASE --help lists them)",
    )
    cli.add_argument("--quick", action="store_true", help="fewer repeats, for development")
    return cli


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    named = [a for a in args if a in SEPARATE_CASES]
    if named:
        # a case with a module of its own runs alone, in its own process (one BLAS thread, set
        # before numpy loads); that module reads, and checks, every other flag
        rest = list(args)
        rest.remove(named[0])
        command = [sys.executable, "-m", SEPARATE_CASES[named[0]], *rest]
        # the caller's environment: the case's own import sets what it needs (the test suite
        # must not inherit this process's one-thread BLAS settings)
        sys.exit(subprocess.run(command, env=caller_environment()).returncode)
    options = parser().parse_args(args)  # an unknown flag stops here, before any timing
    report = collect(3 if options.quick else 7)
    text = render(report)
    store(report, text, "latest.json")
    quick = ["--quick"] if options.quick else []  # then the training step, on its own
    subprocess.run([sys.executable, "-m", "benchmarks.train_step", *quick], check=True)


if __name__ == "__main__":
    main()
