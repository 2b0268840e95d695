"""Sphinx extension: each chapter page also offers its executed notebook for download.

The paired ``book/NN-slug.ipynb`` (excluded from the build: the ``.md`` beside it is the source)
is copied next to the page's downloadable ``.md`` in ``_sources/``, and the page names it in a
``<meta name="lfs:notebook">`` tag, from which web/static/theme-fixes.js adds ``.ipynb`` to the
theme's download menu.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

META = "lfs:notebook"


def _notebook(app: Sphinx, docname: str) -> Path | None:
    path = Path(app.srcdir) / f"{docname}.ipynb"
    return path if path.is_file() and docname.startswith("book/") else None


def add_meta(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    if _notebook(app, pagename) is None:
        return
    href = context["pathto"](f"_sources/{pagename}.ipynb", 1)
    context["metatags"] = context.get("metatags", "") + f'<meta name="{META}" content="{href}">'


def copy_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for docname in app.env.found_docs:
        notebook = _notebook(app, docname)
        if notebook is not None:
            target = Path(app.outdir) / "_sources" / f"{docname}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebook, target)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", add_meta)
    app.connect("build-finished", copy_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
