"""Files JupyterLab will not rewrite: what it writes on save is what the repository stores.

JupyterLab replaces a notebook's kernel display name by the installed kernel's own (and so marks
the notebook modified on open), and jupytext writes a chapter opened as a notebook back in its
canonical MyST form. tests/browser/test_jupyterlab_roundtrip.py checks the same in a real
JupyterLab; these checks are the fast, browser-free half.
"""

import difflib

import jupytext
import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from tools.sync_notebooks import SYNC_COMMAND, chapter_sources, paired_path

SOURCES = chapter_sources()


def installed_kernel_name() -> str:
    return KernelSpecManager().get_kernel_spec("python3").display_name


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
