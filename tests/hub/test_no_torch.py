"""The package's own modules never import torch or transformers (they are the reference)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "llm_from_scratch"
IMPORT = re.compile(r"^\s*(import|from)\s+(torch|transformers)\b", re.MULTILINE)


def test_no_module_imports_torch_or_transformers() -> None:
    offenders = [
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if IMPORT.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_regex_catches_an_import() -> None:
    assert IMPORT.search("x = 1\n    import torch.nn as nn\n")
    assert IMPORT.search("from transformers import AutoModel\n")
    assert not IMPORT.search("import torchvision\n# import torch in a comment\n")


def test_hub_and_generate_load_without_torch() -> None:
    """Importing the hub and the command in a fresh interpreter pulls in neither library."""
    code = (
        "import sys, llm_from_scratch.hub, llm_from_scratch.generate; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
