"""``python -m llm_from_scratch.generate --model FOLDER --prompt TEXT``: text from a checkpoint.

    python -m llm_from_scratch.generate --model ~/models/SmolLM2-135M --prompt "Once upon"
    python -m llm_from_scratch.generate --model gpt2/ --prompt "Hello" --greedy --max-new-tokens 20

FOLDER is a Hugging Face model folder (GPT-2, Llama 2/3, Mistral, Qwen3 or Mixtral): config.json,
model.safetensors (or shards), and tokenizer.json. The command prints the memory a float64 load
and generation need before loading anything, and refuses (exit status 2) when that estimate is
above ``--max-memory`` (default: the memory available now). It streams the text as it is
generated and ends with the number of tokens and tokens per second on stderr. Sampling:
``--greedy``, or ``--temperature``, ``--top-k``, ``--top-p`` with ``--seed`` (same seed, same
text). Every refusal is one line on stderr. It limits BLAS to one thread unless the environment
says otherwise. It never imports torch or transformers, and downloads nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn, TextIO

from .errors import ArgumentError, FromScratchError

USAGE = 2
GIB = 1024**3


class _UsageError(Exception):
    """A flag argparse refused (its message, one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def available_memory() -> int:
    """Bytes the system can hand out now: MemAvailable from /proc/meminfo, else physical RAM."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def parser() -> argparse.ArgumentParser:
    """The command's flags."""
    p = _Parser(
        prog="python -m llm_from_scratch.generate",
        description="Generate text from a Hugging Face model folder with the book's Decoder.",
    )
    p.add_argument(
        "--model", required=True, help="folder with config.json, safetensors and tokenizer.json"
    )
    p.add_argument("--prompt", required=True, help="the text to continue")
    p.add_argument("--max-new-tokens", type=int, default=50)
    p.add_argument("--greedy", action="store_true", help="argmax at every step (no sampling)")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--top-p", type=float, default=None)
    p.add_argument("--seed", type=int, default=0, help="SplitMix64 seed for sampling")
    p.add_argument(
        "--max-memory",
        type=float,
        default=None,
        help="GiB the run may use (default: the memory available now)",
    )
    p.add_argument("--ignore-eos", action="store_true", help="do not stop at the end token")
    return p


def _tokenizer(folder: Path) -> Any:
    """tokenizer.json from the folder, or a refusal saying what is missing."""
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise ArgumentError(
            f"The command turns text into token IDs with the folder's tokenizer.json; {path} "
            "does not exist. Download it with the model (the same repository holds it)."
        )
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises its own exception type
        raise ArgumentError(f"{path} is not a tokenizers file ({error}).") from None


def _end_id(config: dict, ignore: bool, vocab_size: int) -> int | None:
    """The config's eos_token_id (the first, if a list) unless --ignore-eos."""
    end = None if ignore else config.get("eos_token_id")
    if isinstance(end, list):
        end = end[0] if end else None
    return end if isinstance(end, int) and 0 <= end < vocab_size else None


def describe_memory(estimate: Any) -> str:
    """One line: total and parts in GiB."""
    return (
        f"memory estimate (float64): {estimate.total / GIB:.2f} GiB = weights "
        f"{estimate.weights / GIB:.2f} + loading copy {estimate.loading / GIB:.2f} + KV cache "
        f"{estimate.cache / GIB:.3f} + logits {estimate.logits / GIB:.3f}"
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Check, estimate, load, then stream the generated text."""
    from .generation import KVCache, decode_step, prefill
    from .generation.sampling import check_temperature, check_top_k, check_top_p, next_tokens
    from .hub import load_pretrained, read_config, spec_from_config
    from .hub.spec import memory_estimate
    from .random import SplitMix64

    folder = Path(args.model)
    config = read_config(folder)
    spec = spec_from_config(config)  # an unsupported family or field is refused here
    tokenizer = _tokenizer(folder)
    if args.max_new_tokens < 1:
        raise ArgumentError(f"--max-new-tokens must be at least 1; got {args.max_new_tokens}.")
    temperature = check_temperature(args.temperature)
    top_k = None if args.top_k is None else check_top_k(args.top_k)
    top_p = None if args.top_p is None else check_top_p(args.top_p)
    prompt = tokenizer.encode(args.prompt).ids
    if not prompt:
        raise ArgumentError("--prompt must encode to at least one token; got an empty prompt.")
    if max(prompt) >= spec.vocab_size:
        raise ArgumentError(
            f"The tokenizer gives token {max(prompt)}, outside the model's vocabulary of "
            f"{spec.vocab_size}: the tokenizer.json is not this model's."
        )
    total = len(prompt) + args.max_new_tokens
    if spec.max_positions is not None and total > spec.max_positions:
        raise ArgumentError(
            f"{spec.family} holds {spec.max_positions} learned positions; the prompt's "
            f"{len(prompt)} tokens + --max-new-tokens {args.max_new_tokens} = {total}. Ask "
            "for fewer tokens."
        )
    estimate = memory_estimate(spec, total)
    limit = available_memory() if args.max_memory is None else int(args.max_memory * GIB)
    print(describe_memory(estimate), file=err)
    if estimate.total > limit:
        raise ArgumentError(
            f"The run needs about {estimate.total / GIB:.2f} GiB in float64 but may use "
            f"{limit / GIB:.2f} GiB (--max-memory, default: available memory). Free memory, "
            "raise --max-memory, or choose a smaller model."
        )
    started = time.perf_counter()
    model = load_pretrained(folder)
    print(f"loaded {spec.family} in {time.perf_counter() - started:.2f} s", file=err)
    end_id = _end_id(config, args.ignore_eos, spec.vocab_size)
    rng = None if args.greedy else SplitMix64(args.seed)
    cache = KVCache(model, 1, total)
    import numpy as np

    from .autodiff import no_grad

    out.write(args.prompt)
    out.flush()
    new: list[int] = []
    shown = ""
    started = time.perf_counter()
    with no_grad():
        logits = prefill(model, cache, np.array([prompt])).value[:, -1]  # (1, V)
        for step in range(args.max_new_tokens):
            token = int(
                next_tokens(
                    logits,
                    rng,
                    do_sample=not args.greedy,
                    temperature=temperature,
                    top_k=top_k,
                    top_p=top_p,
                )[0]
            )
            new.append(token)
            text = tokenizer.decode(new)
            out.write(text[len(shown) :] if text.startswith(shown) else text)
            out.flush()
            shown = text
            if token == end_id or step + 1 == args.max_new_tokens:
                break
            position = len(prompt) + len(new) - 1
            logits = decode_step(model, cache, [token], [position]).value  # (1, V)
    seconds = time.perf_counter() - started
    out.write("\n")
    print(f"{len(new)} tokens in {seconds:.2f} s: {len(new) / seconds:.2f} tokens/s", file=err)
    return 0


def main(
    argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Parse, run, and turn every refusal into one line on stderr with status 2."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        args = parser().parse_args(argv)
        return run(args, out, err)
    except (_UsageError, FromScratchError) as error:
        print(f"error: {error}", file=err)
        return USAGE


if __name__ == "__main__":
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    sys.exit(main())
