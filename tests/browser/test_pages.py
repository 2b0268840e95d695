"""Every page of the built book loads offline in Chromium, with typeset math and its images."""

import json
import re

import pytest

from .conftest import HTML, MATH, SCREENSHOTS, Visit, built_pages, settle

REMOTE_ASSET = re.compile(r'<(script|link)[^>]+(src|href)="https?://[^"]*"')
VENDOR_HINT = "(`npm ci && python tools/vendor_web_assets.py` fills web/static/vendor/)"


def test_no_page_loads_a_script_or_style_from_another_host(site: str) -> None:
    remote = [
        f"{path.relative_to(HTML)}: {match.group()}"
        for path in HTML.rglob("*.html")
        for match in REMOTE_ASSET.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not remote, "\n".join(remote)


@pytest.mark.parametrize("path", built_pages())
def test_page_loads_offline_and_renders(visit: Visit, path: str) -> None:
    settle(visit, path)
    page = visit.page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{path.replace('/', '__')}.png", full_page=True)

    unloaded = page.evaluate(
        "() => [...document.images].filter((image) => !(image.naturalWidth > 0))"
        ".map((image) => image.getAttribute('src'))"
    )
    visit.problems += [f"image did not load: {src}" for src in unloaded]
    untypeset = page.evaluate(
        f"() => [...document.querySelectorAll('{MATH}')]"
        ".filter((math) => !math.querySelector('mjx-container')).length"
    )
    if untypeset:
        visit.problems.append(f"{untypeset} math elements were not typeset by MathJax")
    if any("/_static/vendor/" in problem for problem in visit.problems):
        visit.problems.append(VENDOR_HINT)
    assert not visit.problems, f"{path}:\n" + "\n".join(visit.problems)


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
