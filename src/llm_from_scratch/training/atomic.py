"""Atomic JSON writes: a temporary file in the destination folder, then ``os.replace``.

A reader (or a run interrupted half-way) sees the old file or the new one, never a torn one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any, *, ensure_ascii: bool = True) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically (mode 0644, trailing newline)."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=ensure_ascii, indent=1)
            handle.write("\n")
        os.chmod(temporary, 0o644)  # mkstemp makes it owner-only
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
