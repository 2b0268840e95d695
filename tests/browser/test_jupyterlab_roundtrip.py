"""A chapter opened in JupyterLab and saved without edits stays byte-identical (.ipynb and .md).

Runs a real JupyterLab (from requirements.txt) on 127.0.0.1 over a copy of one chapter pair and
drives it with Chromium: open, wait for the kernel, check the document is not marked modified,
save, compare the bytes with the originals.
"""

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "02-linear-layers"  # any paired chapter


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("lab")
    for suffix in (".md", ".ipynb"):
        shutil.copyfile(ROOT / "book" / f"{CHAPTER}{suffix}", folder / f"{CHAPTER}{suffix}")
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
            f"--port={port}", "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=",
            "--ServerApp.password=", f"--ServerApp.root_dir={folder}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    for _ in range(120):  # wait until it listens (a readiness poll, not a timed assertion)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.5)
    yield url, folder
    server.terminate()
    server.wait(timeout=30)


def open_and_save(browser: Browser, url: str, name: str) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(60_000)
    if name.endswith(".ipynb"):
        page.goto(f"{url}lab/tree/{name}?reset", wait_until="domcontentloaded")
    else:
        # What a reader does: right click the .md file, Open With -> Notebook (jupytext).
        page.goto(f"{url}lab?reset", wait_until="domcontentloaded")
        page.locator(".jp-DirListing-item", has_text=name).click(button="right")
        page.locator(".lm-Menu-item", has_text="Open With").hover()
        submenu = page.locator(".lm-Menu").last
        submenu.locator(".lm-Menu-itemLabel").get_by_text("Notebook", exact=True).click()
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    return page


# Known open defect (issue 19, item 6), still under investigation: with the kernel name and the
# .md's canonical form fixed (tests/test_jupyterlab_forms.py passes), a JupyterLab on IPython 9
# opens and saves the .ipynb cleanly, while the IPython 8.12 this machine image ships marks it
# modified on open, and the .md (through jupytext) is marked modified on open in both. Not strict
# while the outcome depends on the installed IPython: the report shows XPASS when a case passes.
OPEN_DEFECT = pytest.mark.xfail(
    strict=False, reason="JupyterLab marks the chapter modified on open (issue 19, item 6)"
)


@OPEN_DEFECT
@pytest.mark.parametrize("name", [f"{CHAPTER}.ipynb", f"{CHAPTER}.md"])
def test_open_and_save_leaves_the_file_byte_identical(
    browser: Browser, lab: tuple[str, Path], name: str
) -> None:
    url, folder = lab
    before = (folder / name).read_bytes()
    page = open_and_save(browser, url, name)
    tab = page.locator(".lm-TabBar-tab.jp-mod-current")
    modified = "jp-mod-dirty" in (tab.get_attribute("class") or "")
    page.screenshot(path=folder / f"{name}.png")
    page.locator(".jp-Notebook .jp-Cell").first.click(force=True)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    page.wait_for_function(  # a save takes well under a second; still dirty after 15 s = failed
        "() => !document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')",
        timeout=15_000,
    )
    page.close()
    after = (folder / name).read_bytes()
    (folder / name).write_bytes(before)
    problems = []
    if modified:
        problems.append(f"JupyterLab marked {name} modified on open, before any edit")
    if after != before:
        problems.append(f"saving {name} without edits changed {diff_lines(before, after)}")
    assert not problems, "\n".join(problems)


def diff_lines(before: bytes, after: bytes) -> str:
    old, new = before.decode().splitlines(), after.decode().splitlines()
    pairs = enumerate(zip(old, new, strict=False))
    changed = [f"{i + 1}: {a!r} -> {b!r}" for i, (a, b) in pairs if a != b][:5]
    return f"{len(changed)}+ lines, e.g. " + "; ".join(changed) + f" ({len(old)} -> {len(new)})"
