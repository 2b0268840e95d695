"""``python -m llm_from_scratch.train``: train a small decoder from a JSON config and/or flags.

    python -m llm_from_scratch.train --config book/runs/induction/config.json
    python -m llm_from_scratch.train --task book --steps 200 --output /tmp/try
    python -m llm_from_scratch.train --config ... --resume     # continue from checkpoint.npz
    python -m llm_from_scratch.train --config ... --overwrite  # replace the run in --output

Every setting of :class:`~llm_from_scratch.training.config.TrainConfig` is a flag
(``--model-width 64``; switches such as ``--qk-norm`` take no value); flags override the
config file. ``--kv-heads G`` (dividing ``--num-heads``), ``--window w`` and ``--qk-norm``
choose grouped-query, sliding-window and QK-normed attention. Before it writes anything the command
checks the whole configuration: the flags and the file, the sizes against memory, the output
folder (writable, not under a file, names not too long), and with ``--resume`` the log, the
corpus and the checkpoint it would continue from. A folder that already holds a run is refused
unless ``--resume`` continues it or ``--overwrite`` replaces it (naming the files it removes).
A hidden temporary file left by a hard kill mid-write is removed, and the command says so.
Every refusal is one line on stderr and exit status 2; Ctrl-C saves a checkpoint and exits with
status 130. Run as a command, it limits BLAS to one thread unless the environment already says
otherwise (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``): this model's
matrices are small, and a threaded BLAS on a busy 2-core machine ran a step about 3× slower.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from .errors import ArgumentError, FromScratchError

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
RUN_FILES = ("config.json", "log.json", "checkpoint.npz", "model.npz", "corpus.json")
USAGE = 2  # exit status of a refusal (argparse's, too)
INTERRUPTED = 130


def limit_blas_threads() -> None:
    """One BLAS thread unless already set; effective only before numpy is first imported."""
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


class _UsageError(Exception):
    """A flag argparse refused (its message, one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def parser() -> argparse.ArgumentParser:
    """The command's flags: --config, --resume, --overwrite, --no-progress, one per setting."""
    from .training.config import TrainConfig  # numpy loads here, after limit_blas_threads

    p = _Parser(
        prog="python -m llm_from_scratch.train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("--config", help="JSON file of settings (flags override it)")
    p.add_argument("--resume", action="store_true", help="continue from <output>/checkpoint.npz")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace a run already in <output> (removes its {', '.join(RUN_FILES)})",
    )
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    kinds = {"int": int, "float": float, "str": str}
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if str(f.type) == "bool":  # a switch: --qk-norm turns it on
            p.add_argument(flag, dest=f.name, action="store_const", const=True, default=None)
        else:
            p.add_argument(flag, dest=f.name, type=kinds[str(f.type)], default=None)
    return p


def _line(error: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(error).split()) or type(error).__name__


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def physical_memory() -> int | None:
    """This machine's memory in bytes, or None where the system does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


# --- checks that write nothing -------------------------------------------------------------------


def _configuration(args: argparse.Namespace) -> Any:
    """The TrainConfig of the config file and the flags, every setting checked."""
    from .training.config import TrainConfig, read_settings

    settings = read_settings(args.config) if args.config is not None else {}
    flags = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)}
    settings.update({k: v for k, v in flags.items() if v is not None})
    given = any(v is not None for v in flags.values())
    source = "the flags" if args.config is None else f"config {args.config!r}"
    source += " with the flags" if given and args.config is not None else ""
    try:
        return TrainConfig().replace(**settings)
    except FromScratchError as error:
        raise ArgumentError(f"{source}: {_line(error)}") from error


def _check_output(output: Path) -> list[str]:
    """Refuse an output path that cannot become a writable folder; the run files it holds."""
    text = str(output)
    try:
        name_max = os.pathconf(_nearest_existing(output), "PC_NAME_MAX")
        path_max = os.pathconf(_nearest_existing(output), "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    long = [part for part in output.parts if len(os.fsencode(part)) > name_max]
    if long:
        raise ArgumentError(
            f"output folder {text[:60]!r}… has a name of {len(os.fsencode(long[0]))} bytes; "
            f"this file system allows {name_max}. Choose a shorter --output."
        )
    if len(os.fsencode(str(output.absolute()))) >= path_max:
        raise ArgumentError(
            f"output path is {len(os.fsencode(str(output.absolute())))} bytes long; this file "
            f"system allows {path_max - 1}. Choose a shorter --output."
        )
    ancestor = _nearest_existing(output)
    if ancestor == output and not output.is_dir():
        raise ArgumentError(
            f"output {text!r} exists and is not a folder. Choose another --output."
        )
    if not ancestor.is_dir():
        raise ArgumentError(
            f"output {text!r} lies under {str(ancestor)!r}, which is not a folder. Choose "
            "another --output."
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ArgumentError(f"output {text!r}: cannot write into {str(ancestor)!r} (permission).")
    if ancestor != output:
        return []
    return [name for name in RUN_FILES if os.path.lexists(output / name)]


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (a broken link counts as existing)."""
    current = path
    while not os.path.lexists(current) and current != current.parent:
        current = current.parent
    return current


def _check_task(config: Any, output: Path, resume: bool) -> tuple[Any, Any, Any]:
    """Build the task, model and optimizer in memory, as the run will, checking the sizes."""
    from .random import SplitMix64
    from .training.corpus import load_corpus
    from .training.loop import build_model, build_optimizer
    from .training.tasks import CORPUS_FILE, make_task

    memory = physical_memory()
    config.check_size(config.vocab_size if config.task == "induction" else 1, memory)
    stored = output / CORPUS_FILE
    split = load_corpus(stored) if resume and stored.is_file() else None
    task = make_task(config, split)
    config.check_size(task.vocab_size, memory)
    if config.task == "book":
        if task.train_ids.size < config.context + 1:
            raise ArgumentError(
                f"task 'book' has {task.train_ids.size} training characters; a window of "
                f"context {config.context} needs at least {config.context + 1}."
            )
        if task.validation_ids.size < 2:
            raise ArgumentError(
                "task 'book' has fewer than 2 validation characters; raise "
                "validation_fraction or add chapters."
            )
    model = build_model(config, task.vocab_size, SplitMix64(config.seed))
    return task, model, build_optimizer(config, model)


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        raise ArgumentError(
            f"--resume: cannot read {what} {str(path)!r}: {_line(error)}"
        ) from error
    if not isinstance(data, dict):
        raise ArgumentError(f"--resume: {what} {str(path)!r} must hold a JSON object.")
    return data


def _check_resume(config: Any, output: Path, task: Any, model: Any, optimizer: Any) -> None:
    """What ``train(resume=True)`` reads: log, config, corpus and checkpoint, all checked."""
    from .random import SplitMix64
    from .training.checkpoint import load_checkpoint
    from .training.loop import LOG_FORMAT

    checkpoint, log_path = output / "checkpoint.npz", output / "log.json"
    missing = [p.name for p in (checkpoint, log_path) if not p.is_file()]
    if missing:
        raise ArgumentError(
            f"--resume needs {' and '.join(missing)} in {str(output)!r}; not found. Start a "
            "fresh run without --resume."
        )
    log = _read_json(log_path, "the log")
    if log.get("format") != LOG_FORMAT:
        raise ArgumentError(f"--resume: {str(log_path)!r} is not a {LOG_FORMAT} file.")
    ours = config.to_dict()
    theirs = log.get("config")
    if theirs != ours:
        if isinstance(theirs, dict):
            changed = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
            shown = ", ".join(f"{k} {theirs.get(k)!r} → {ours.get(k)!r}" for k in changed[:3])
        else:
            shown = "no config recorded"
        raise ArgumentError(
            f"--resume: {str(log_path)!r} was written by another config ({shown}); resume with "
            "the same settings."
        )
    stored_config = output / "config.json"
    if stored_config.is_file() and _read_json(stored_config, "the config") != ours:
        raise ArgumentError(
            f"--resume: {str(stored_config)!r} differs from the log's config; the folder was "
            "edited. Start a fresh run with --overwrite."
        )
    for key in ("steps", "evals", "segments"):
        records = log.get(key)
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise ArgumentError(f"--resume: {str(log_path)!r} needs a list of records {key!r}.")
        if key != "segments" and not all(type(r.get("step")) is int for r in records):
            raise ArgumentError(f"--resume: every {key!r} record in the log needs an int step.")
    then = log.get("task")
    if not isinstance(then, dict) or not isinstance(then.get("baseline"), dict):
        raise ArgumentError(f"--resume: {str(log_path)!r} records no task.")
    if task.describe().get("corpus_sha256") != then.get("corpus_sha256"):
        raise ArgumentError(
            f"--resume: the corpus differs from the one {str(log_path)!r} records; without "
            "corpus.json in the folder the chapters are read as they are now. Start a fresh run."
        )
    info = load_checkpoint(checkpoint, model, optimizer, rng=SplitMix64(config.seed))
    config.check_attention_record(info.extra, f"--resume: {str(checkpoint)!r}")
    if info.step > config.steps:
        raise ArgumentError(
            f"--resume: {str(checkpoint)!r} is at step {info.step}, past steps = {config.steps}."
        )


# --- the writes --------------------------------------------------------------------------------


def _make_folder(output: Path) -> list[Path]:
    """Create ``output`` (and missing parents) and prove a file can be written there."""
    created = []
    current = output
    while not os.path.lexists(current) and current != current.parent:
        created.append(current)
        current = current.parent
    try:
        output.mkdir(parents=True, exist_ok=True)
        descriptor, probe = tempfile.mkstemp(prefix=".write-check.", suffix=".tmp", dir=output)
        os.close(descriptor)
        os.unlink(probe)
    except OSError as error:
        _remove_empty(created)
        raise ArgumentError(f"cannot write into output {str(output)!r}: {_line(error)}") from error
    return created


def _remove_empty(created: list[Path]) -> None:
    """Remove the folders this command created, deepest first, if they are still empty."""
    for folder in created:
        try:
            folder.rmdir()
        except OSError:
            return


def _fingerprint(output: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of each run file in ``output``: what changed since."""
    found = {}
    for name in RUN_FILES:
        try:
            stat = (output / name).stat()
        except OSError:
            continue
        found[name] = (stat.st_size, stat.st_mtime_ns)
    return found


def _run(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    from .training.atomic import leftover_temporaries
    from .training.loop import train

    if args.resume and args.overwrite:
        raise ArgumentError(
            "--resume continues the run in --output and --overwrite replaces it; pass one."
        )
    config = _configuration(args)
    output = Path(config.output)
    present = _check_output(output)
    if present and not (args.resume or args.overwrite):
        raise ArgumentError(
            f"output {str(output)!r} already holds a run ({', '.join(present)}); pass --resume "
            "to continue it or --overwrite to replace it."
        )
    task, model, optimizer = _check_task(config, output, args.resume)
    if args.resume:
        _check_resume(config, output, task, model, optimizer)
    del task, model, optimizer
    # every check passed: from here on the command writes
    created = _make_folder(output)
    for leftover in leftover_temporaries(output, RUN_FILES):
        leftover.unlink(missing_ok=True)
        _say(f"removed {str(leftover)!r}, a temporary file a hard kill left mid-write.")
    if args.overwrite and present:
        _say(f"--overwrite: replacing the run in {str(output)!r}; removed {', '.join(present)}.")
        for name in present:
            (output / name).unlink(missing_ok=True)
    before = _fingerprint(output)
    try:
        result = train(config, resume=args.resume, progress=not args.no_progress)
    except KeyboardInterrupt:
        if _fingerprint(output) == before:
            _remove_empty(created)
            _say("interrupted before the training loop; nothing new was saved.")
        else:
            _say(
                f"interrupted before the run finished; every file in {str(output)!r} is whole "
                "(no write was left half-done). Continue with --resume if checkpoint.npz is "
                "there, else start again with --overwrite."
            )
        return INTERRUPTED
    except BaseException:
        if _fingerprint(output) == before:
            _remove_empty(created)
        raise
    final = result.evals[-1] if result.evals else {}
    summary = ", ".join(f"{k} {v:.4f}" for k, v in final.items() if k != "step")
    summary = f"last evaluation (step {final['step']}): {summary}" if final else "no evaluation"
    print(
        f"{'interrupted' if result.interrupted else 'finished'} at step {result.steps_done}: "
        f"{summary}; {result.seconds:.1f} s, {result.tokens_per_second:,.0f} tokens/s; "
        f"wrote {result.output}/"
    )
    return INTERRUPTED if result.interrupted else 0


def main(argv: list[str] | None = None) -> int:
    """Check everything, train, print where the run went; 0 done, 2 refused, 130 Ctrl-C.

    Whatever goes wrong is one line on stderr: a refusal (a package error, a bad flag) exits
    with 2, anything unexpected (a full disk, memory) with 1; never a traceback.
    """
    try:
        return _run(argv)
    except _UsageError as error:
        _say(f"error: {_line(error)} (--help lists the flags)")
        return USAGE
    except FromScratchError as error:
        _say(f"error: {_line(error)}")
        return USAGE
    except KeyboardInterrupt:  # e.g. during the checks, before anything was written
        _say("interrupted before the training loop; nothing new was saved.")
        return INTERRUPTED
    except SystemExit as exit_:  # --help
        return exit_.code if isinstance(exit_.code, int) else USAGE
    except MemoryError:
        _say("error: out of memory; use a smaller context, batch_size or width.")
        return 1
    except Exception as error:  # the command never shows a traceback
        _say(f"error: {type(error).__name__}: {_line(error)}")
        return 1


if __name__ == "__main__":
    limit_blas_threads()
    sys.exit(main())
