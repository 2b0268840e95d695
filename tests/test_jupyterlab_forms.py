"""Files JupyterLab will not rewrite: what it writes on save is what the repository stores.

When JupyterLab opens a notebook it writes the running kernel's `kernelspec` (display name
included) and `language_info` (its kernel_info reply) into the notebook's metadata; any
difference marks the notebook modified on open. A notebook without `language_info`, which is
what jupytext makes of a `.md` whose header lacks it, is modified as soon as it loads. Jupytext
writes a chapter opened as a notebook back in its canonical MyST form.
tests/browser/test_jupyterlab_roundtrip.py checks the same in a real JupyterLab; these checks
are the fast, browser-free half.
"""

import difflib
import json
from collections.abc import Iterator

import jupytext
import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel

from tools.sync_notebooks import (
    SYNC_COMMAND,
    chapter_sources,
    paired_path,
    whole_floats_as_ints,
)

SOURCES = chapter_sources()


def installed_kernel_name() -> str:
    return KernelSpecManager().get_kernel_spec("python3").display_name


@pytest.fixture(scope="module")
def kernel_language_info() -> Iterator[dict]:
    """The `language_info` the installed `python3` kernel reports, as JupyterLab receives it.

    ipykernel fills it with fixed values and the kernel's Python version (not IPython's), so it
    changes only with the Python that runs the kernel.
    """
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        yield client.kernel_info(reply=True, timeout=60)["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@pytest.mark.parametrize("md", SOURCES, ids=[md.name for md in SOURCES])
def test_stored_kernel_name_is_the_installed_one(md) -> None:
    expected = installed_kernel_name()
    stored = nbformat.read(paired_path(md), as_version=4).metadata.kernelspec.display_name
    header = jupytext.read(md).metadata["kernelspec"]["display_name"]
    assert stored == header == expected, (
        f"{md.name} names kernel {header!r} and its notebook {stored!r}; JupyterLab writes "
        f"{expected!r}: set it in the chapter header and sync_notebooks.KERNEL, then run "
        f"`{SYNC_COMMAND}`"
    )


@pytest.mark.parametrize("md", SOURCES, ids=[md.name for md in SOURCES])
def test_chapter_is_in_jupytext_canonical_form(md) -> None:
    text = md.read_text(encoding="utf-8")
    canonical = jupytext.writes(jupytext.read(md), fmt="md:myst")
    changed = [
        line
        for line in difflib.unified_diff(text.splitlines(), canonical.splitlines(), n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert not changed, (
        f"saving {md.name} from JupyterLab would rewrite {len(changed)} lines, e.g.\n"
        + "\n".join(changed[:6])
    )


@pytest.mark.parametrize("md", SOURCES, ids=[md.name for md in SOURCES])
def test_stored_language_info_is_the_kernels(md, kernel_language_info: dict) -> None:
    stored = nbformat.read(paired_path(md), as_version=4).metadata.get("language_info")
    header = jupytext.read(md).metadata.get("language_info")
    assert stored == header == kernel_language_info, (
        f"{md.name} stores language_info {header!r} and its notebook {stored!r}; the installed "
        f"kernel reports {kernel_language_info!r}, which JupyterLab writes on open (and so "
        f"marks the chapter modified): run `{SYNC_COMMAND} book/{md.name}`"
    )


def whole_floats(node: object, path: str = "") -> list[str]:
    """Where ``node`` holds a whole-number float, which a JupyterLab save writes as an int."""
    if isinstance(node, float) and node.is_integer() and abs(node) < 1e21:
        return [f"{path}: {node!r}"]
    if isinstance(node, dict):
        return [hit for key, value in node.items() for hit in whole_floats(value, f"{path}/{key}")]
    if isinstance(node, list):
        return [hit for i, value in enumerate(node) for hit in whole_floats(value, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("md", SOURCES, ids=[md.name for md in SOURCES])
def test_stored_numbers_are_as_a_browser_writes_them(md) -> None:
    found = whole_floats(json.loads(paired_path(md).read_text(encoding="utf-8")))
    assert not found, (
        f"{paired_path(md).name} stores {len(found)} whole-number floats, which saving it in "
        f"JupyterLab rewrites as ints, e.g. {found[:2]}: run `{SYNC_COMMAND} book/{md.name}`"
    )


def test_whole_floats_are_found_and_stored_as_ints() -> None:
    node = {"a": [1.5, 12.0, -0.0, 1e21, 7], "b": {"c": 256.0}}
    assert whole_floats(node) == ["/a[1]: 12.0", "/a[2]: -0.0", "/b/c: 256.0"]
    whole_floats_as_ints(node)
    assert node == {"a": [1.5, 12, 0, 1e21, 7], "b": {"c": 256}}
    assert whole_floats(node) == [] and isinstance(node["b"]["c"], int)
