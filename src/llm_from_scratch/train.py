"""``python -m llm_from_scratch.train``: train a small decoder from a JSON config and/or flags.

    python -m llm_from_scratch.train --config book/runs/induction/config.json
    python -m llm_from_scratch.train --task book --steps 200 --output /tmp/try
    python -m llm_from_scratch.train --config ... --resume     # continue from checkpoint.npz

Every setting of :class:`~llm_from_scratch.training.config.TrainConfig` is a flag
(``--model-width 64``); flags override the config file. Ctrl-C saves a checkpoint and exits
with status 130. Run as a command, it limits BLAS to one thread unless the environment already
says otherwise (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``): this model's
matrices are small, and a threaded BLAS on a busy 2-core machine ran a step about 3× slower.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from .errors import FromScratchError

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads() -> None:
    """One BLAS thread unless already set; effective only before numpy is first imported."""
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


def parser() -> argparse.ArgumentParser:
    """The command's flags: --config, --resume, --no-progress, and one per config setting."""
    from .training.config import TrainConfig  # numpy loads here, after limit_blas_threads

    p = argparse.ArgumentParser(
        prog="python -m llm_from_scratch.train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", help="JSON file of settings (flags override it)")
    p.add_argument("--resume", action="store_true", help="continue from <output>/checkpoint.npz")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    kinds = {"int": int, "float": float, "str": str}
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        p.add_argument(flag, dest=f.name, type=kinds[str(f.type)], default=None)
    return p


def main(argv: list[str] | None = None) -> int:
    """Parse flags, train, print where the run went; 0 when done, 130 after Ctrl-C."""
    args = parser().parse_args(argv)
    from .training.config import TrainConfig
    from .training.loop import train

    try:
        config = TrainConfig.from_json(args.config) if args.config else TrainConfig()
        changes = {
            f.name: getattr(args, f.name)
            for f in dataclasses.fields(TrainConfig)
            if getattr(args, f.name) is not None
        }
        result = train(
            config.replace(**changes), resume=args.resume, progress=not args.no_progress
        )
    except FromScratchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # e.g. while the data loads, before the loop
        print("interrupted outside the training loop; nothing new was saved.", file=sys.stderr)
        return 130
    final = result.evals[-1] if result.evals else {}
    summary = ", ".join(f"{k} {v:.4f}" for k, v in final.items() if k != "step")
    summary = f"last evaluation (step {final['step']}): {summary}" if final else "no evaluation"
    print(
        f"{'interrupted' if result.interrupted else 'finished'} at step {result.steps_done}: "
        f"{summary}; {result.seconds:.1f} s, {result.tokens_per_second:,.0f} tokens/s; "
        f"wrote {result.output}/"
    )
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    limit_blas_threads()
    sys.exit(main())
