"""No page asks another host for a script or style; each page embeds its widget code once.

That every page loads offline in Chromium, with its math typeset and its images loaded, is
checked in test_screens.py, on the same visit as the page's other browser checks.
"""

import json
import re

import pytest

from .conftest import HTML, built_pages

REMOTE_ASSET = re.compile(r'<(script|link)[^>]+(src|href)="https?://[^"]*"')


def test_no_page_loads_a_script_or_style_from_another_host(site: str) -> None:
    remote = [
        f"{path.relative_to(HTML)}: {match.group()}"
        for path in HTML.rglob("*.html")
        for match in REMOTE_ASSET.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not remote, "\n".join(remote)


WIDGET_STATE = re.compile(
    r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', re.DOTALL
)


@pytest.mark.parametrize("path", [p for p in built_pages() if p.startswith("book/")])
def test_each_widget_module_and_stylesheet_is_embedded_once(path: str) -> None:
    text = (HTML / path).read_text(encoding="utf-8")
    found = WIDGET_STATE.search(text)
    if found is None:
        return  # a page without widgets
    document = json.loads(found.group(1))
    shared = document.get("lfs_shared", {})
    for model_id, model in document["state"].items():
        for name in ("_esm", "_css"):
            value = model["state"].get(name)
            if value is None:
                continue  # a model without a view of its own (a layout)
            assert value in shared, f"{path}: {model_id}'s {name} is not a shared name"
    modules = [value for value in shared.values() if "export default" in value]
    assert len(modules) == len(set(modules)) <= 2, f"{path}: {len(modules)} view modules"
    # One predict module, one slider module: each text appears once in the whole page.
    assert text.count("export default { render };") == len(modules), path
