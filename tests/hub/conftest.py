"""Session fixtures: each tiny reference family built once and saved to a temporary folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from .reference import FAMILIES, build_reference, float64_islands, save_reference


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """torch on one thread from the first of these tests on, restored when the session ends.

    The tiny models gain nothing from a second thread, and while the other pytest-xdist worker
    keeps the second core busy, torch's OpenMP threads wait on each other: 32 greedy tokens of
    the Mixtral reference took 7.9 s instead of 0.1 s.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def reference_models() -> dict[str, Any]:
    """{family: seeded float64 transformers model in eval mode, float64 throughout}."""
    return {family: float64_islands(build_reference(family)) for family in FAMILIES}


@pytest.fixture(scope="session")
def reference_folders(tmp_path_factory: pytest.TempPathFactory, reference_models) -> dict:
    """{family: folder written by save_pretrained}."""
    root = tmp_path_factory.mktemp("hub")
    return {f: save_reference(m, root / f) for f, m in reference_models.items()}


@pytest.fixture(params=FAMILIES)
def family(request: pytest.FixtureRequest) -> str:
    return request.param


def folder_of(reference_folders: dict, family: str) -> Path:
    return reference_folders[family]
