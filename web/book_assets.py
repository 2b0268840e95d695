"""Sphinx extension: each chapter page offers its executed notebook; its widgets share modules.

The paired ``book/NN-slug.ipynb`` (excluded from the build: the ``.md`` beside it is the source)
is copied next to the page's downloadable ``.md`` in ``_sources/``, and the page names it in a
``<meta name="lfs:notebook">`` tag, from which web/static/theme-fixes.js adds ``.ipynb`` to the
theme's download menu.

Every anywidget carries its view module and stylesheet (``_esm``, ``_css``) in its own state, so a
page with twenty questions embedded the same 10 KB module twenty times. The page's widget state
keeps each distinct text once, in ``lfs_shared``, and each model names it (``"lfs-shared:0"``);
web/static/anywidget-lite.js resolves the names. The notebooks themselves are unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

META = "lfs:notebook"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
SHARED_FIELDS = ("_esm", "_css")
SHARED_KEY = "lfs_shared"
SHARED_PREFIX = "lfs-shared:"


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


def share_widget_assets(document: dict[str, Any]) -> dict[str, Any]:
    """The widget-state document with each distinct ``_esm``/``_css`` text stored once."""
    shared: dict[str, str] = {}
    names: dict[str, str] = {}
    models = {}
    for model_id, model in document.get("state", {}).items():
        state = dict(model.get("state", {}))
        for name in SHARED_FIELDS:
            text = state.get(name)
            if isinstance(text, str) and text:
                if text not in names:
                    names[text] = f"{SHARED_PREFIX}{len(names)}"
                    shared[names[text]] = text
                state[name] = names[text]
        models[model_id] = {**model, "state": state}
    return {**document, "state": models, SHARED_KEY: shared}


def _script_body(text: str) -> str:
    """JSON safe inside a <script> element (as myst-nb writes it)."""
    return text.replace("</script>", r"<\/script>")


def share_page_widget_assets(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Store the widget texts of this page once (myst-nb added its state as a script)."""
    scripts = context.get("script_files", [])
    for i, script in enumerate(scripts):
        attributes = getattr(script, "attributes", {})
        if attributes.get("type") != WIDGET_STATE or "body" not in attributes:
            continue
        document = share_widget_assets(json.loads(attributes["body"]))
        body = _script_body(json.dumps(document))
        scripts[i] = type(script)(
            script.filename, priority=script.priority, **{**attributes, "body": body}
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", add_meta)
    # After myst-nb's own handler (priority 500), which adds the page's widget state.
    app.connect("html-page-context", share_page_widget_assets, priority=900)
    app.connect("build-finished", copy_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
