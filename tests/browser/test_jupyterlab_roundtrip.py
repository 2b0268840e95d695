"""A chapter opened in JupyterLab and saved without edits stays byte-identical (.ipynb and .md).

Runs a real JupyterLab (from requirements.txt, on this interpreter; one per test process,
shared with test_jupyterlab_live_prose.py) on 127.0.0.1 over a copy of a chapter pair and
drives it with Chromium: open, wait until the file is in the document model and the kernel has
reported its kernelspec and language_info (JupyterLab writes both into the notebook's
metadata), check the document is not marked modified, save, compare the bytes with the
originals.

Waiting on the page alone is not enough: before the file arrives the notebook shows a
placeholder cell and an "idle" indicator with no kernel, and its model is still marked
modified. The app is exposed in the page (`expose_app_in_browser`) so the test can wait for the
document's own promises instead.
"""

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[2]
# Chapters whose sources carry the kernel's language_info in their header (see
# tools/sync_notebooks.py); tests/test_jupyterlab_forms.py checks every chapter's metadata.
CHAPTERS = ["06-multi-head-attention"]
NAMES = [f"{chapter}{suffix}" for chapter in CHAPTERS for suffix in (".ipynb", ".md")]

# Resolves once the opened file is in the model and the kernel's kernelspec and language_info
# have been applied (the panel's own handlers were attached to the same promises first), with
# the model's dirty flag.
SETTLED = """async () => {
  const widget = window.jupyterapp.shell.currentWidget;
  await widget.context.ready;
  await widget.sessionContext.ready;
  const kernel = widget.sessionContext.session.kernel;
  await kernel.info;
  await kernel.spec;
  await new Promise((resolve) => setTimeout(resolve, 0));
  return widget.context.model.dirty;
}"""
# The outcome of the next save of the current document ("completed" or "failed").
NEXT_SAVE = """() => {
  const context = window.jupyterapp.shell.currentWidget.context;
  window.lfsSaved = new Promise((resolve) => {
    const timer = setTimeout(() => resolve("no save within 15 s"), 15000);
    context.saveState.connect((_, state) => {
      if (state !== "started") {
        clearTimeout(timer);
        resolve(state);
      }
    });
  });
}"""


@pytest.fixture(scope="module")
def lab(lab_server: tuple[str, Path]) -> tuple[str, Path]:
    """The shared JupyterLab, with this module's chapter pair copied into its folder."""
    url, folder = lab_server
    for name in NAMES:
        shutil.copyfile(ROOT / "book" / name, folder / name)
    return url, folder


def open_settled(browser: Browser, url: str, name: str) -> tuple[Page, bool]:
    """Open ``name`` as a reader does; the page and whether the model is dirty once settled."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(60_000)
    if name.endswith(".ipynb"):
        page.goto(f"{url}lab/tree/{name}?reset", wait_until="domcontentloaded")
    else:
        # Right click the .md file, Open With -> Notebook (jupytext).
        page.goto(f"{url}lab?reset", wait_until="domcontentloaded")
        page.locator(".jp-DirListing-item", has_text=name).click(button="right")
        page.locator(".lm-Menu-item", has_text="Open With").hover()
        submenu = page.locator(".lm-Menu").last
        submenu.locator(".lm-Menu-itemLabel").get_by_text("Notebook", exact=True).click()
    page.wait_for_function(
        "(name) => window.jupyterapp?.shell.currentWidget?.context?.path === name", arg=name
    )
    dirty = page.evaluate(SETTLED)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    return page, dirty


@pytest.mark.parametrize("name", NAMES)
def test_open_and_save_leaves_the_file_byte_identical(
    browser: Browser, lab: tuple[str, Path], name: str
) -> None:
    url, folder = lab
    before = (folder / name).read_bytes()
    page, dirty = open_settled(browser, url, name)
    tab = page.locator(".lm-TabBar-tab.jp-mod-current")
    marked = "jp-mod-dirty" in (tab.get_attribute("class") or "")
    page.screenshot(path=folder / f"{name}.png")
    page.locator(".jp-Notebook .jp-Cell").first.click(force=True)
    page.keyboard.press("Escape")
    page.evaluate(NEXT_SAVE)
    page.keyboard.press("Control+s")
    saved = page.evaluate("() => window.lfsSaved")
    page.close()
    after = (folder / name).read_bytes()
    (folder / name).write_bytes(before)
    problems = []
    if dirty or marked:
        problems.append(f"JupyterLab marked {name} modified on open, before any edit")
    if saved != "completed":
        problems.append(f"saving {name} did not complete: {saved}")
    elif after != before:
        problems.append(f"saving {name} without edits changed {diff_lines(before, after)}")
    assert not problems, "\n".join(problems)


def diff_lines(before: bytes, after: bytes) -> str:
    old, new = before.decode().splitlines(), after.decode().splitlines()
    pairs = enumerate(zip(old, new, strict=False))
    changed = [f"{i + 1}: {a!r} -> {b!r}" for i, (a, b) in pairs if a != b][:5]
    return f"{len(changed)}+ lines, e.g. " + "; ".join(changed) + f" ({len(old)} -> {len(new)})"
