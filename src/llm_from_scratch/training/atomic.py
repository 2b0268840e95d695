"""Atomic writes: a hidden temporary file in the destination folder, then ``os.replace``.

A reader (or a run interrupted half-way) sees the old file or the new one, never a torn one. The
temporary file is ``.<name>.<8 random characters>.tmp`` (checkpoints use the same form); only a
hard kill between its creation and the rename can leave one behind, and
:func:`leftover_temporaries` finds those for the training command to remove.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import ArgumentError

TEMPORARY_SUFFIX = ".tmp"
# mkstemp's 8 random characters; ".tmp" is absent on files an earlier version left
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}(\.tmp)?")


def _target(path: Any, what: str) -> Path:
    if not isinstance(path, str | os.PathLike):
        raise ArgumentError(
            f"{what} needs a path (str or os.PathLike); got {type(path).__name__}."
        )
    text = os.fspath(path)
    if not isinstance(text, str) or not text or "\0" in text:
        raise ArgumentError(f"{what} needs a non-empty text path without NUL bytes; got {text!r}.")
    return Path(text)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: temporary file, flush, fsync, chmod 0644, rename."""
    target = _target(path, "write_bytes_atomic")
    if not isinstance(data, bytes):
        raise ArgumentError(f"write_bytes_atomic writes bytes; got {type(data).__name__}.")
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=TEMPORARY_SUFFIX, dir=target.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes it owner-only
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def write_json_atomic(
    path: str | os.PathLike[str], data: Any, *, ensure_ascii: bool = True
) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically (mode 0644, trailing newline).

    The text is made first, so data JSON cannot hold is refused before any file is created.
    """
    target = _target(path, "write_json_atomic")
    if not isinstance(ensure_ascii, bool):
        raise ArgumentError(f"ensure_ascii must be True or False; got {ensure_ascii!r}.")
    try:
        text = json.dumps(data, ensure_ascii=ensure_ascii, indent=1) + "\n"
    except (TypeError, ValueError, RecursionError) as error:
        raise ArgumentError(
            f"write_json_atomic({str(target)!r}): not JSON data: {error}"
        ) from error
    write_bytes_atomic(target, text.encode("utf-8"))


def leftover_temporaries(folder: str | os.PathLike[str], names: Iterable[str]) -> list[Path]:
    """The hidden temporary files that interrupted atomic writes of ``names`` left in folder."""
    root = _target(folder, "leftover_temporaries")
    wanted = list(names) if not isinstance(names, str) and isinstance(names, Iterable) else None
    if wanted is None or not all(isinstance(n, str) for n in wanted):
        raise ArgumentError(f"leftover_temporaries needs a list of file names; got {names!r:.60}.")
    if not root.is_dir():
        return []
    found = []
    for entry in sorted(root.iterdir()):
        match = _TEMPORARY.fullmatch(entry.name)
        if match and match.group("name") in wanted and entry.is_file():
            found.append(entry)
    return found
