"""Serve the built book on 127.0.0.1 and drive Debian's Chromium through Playwright."""

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
# BOOK_HTML points the tests at another build (e.g. `jupyter-book build . --path-output DIR`
# puts it in DIR/_build/html); screenshots go beside that html folder, in screenshots/.
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()
SCREENSHOTS = HTML.parent / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
BUILD_COMMAND = "bash tools/install_and_build.sh"
MATH = "span.math, div.math"
REDIRECT = re.compile(r'<meta http-equiv="refresh"', re.IGNORECASE)
WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def built_pages() -> list[str]:
    """Every HTML page of the built book, relative to _build/html (theme templates excluded)."""
    pages = [
        path.relative_to(HTML).as_posix()
        for path in HTML.rglob("*.html")
        if path.relative_to(HTML).parts[0] not in {"_static", "_sources", "_images"}
    ]
    # Without a build, one placeholder keeps the tests (and their clear failure) from vanishing.
    return sorted(pages) or ["book-not-built"]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL of _build/html served by a thread on a free port of 127.0.0.1."""
    if not (HTML / "index.html").is_file():
        pytest.fail(
            f"{HTML}/index.html is missing: build the book first with "
            f"`{BUILD_COMMAND}` (see README), then run `pytest --nbval` again."
        )
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join()


# Module scope: Playwright's sync API refuses to start while another instance runs, and other
# test modules (tests/widgets/) start their own.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's Chromium with "
            "`apt-get update && apt-get install -y chromium` (Playwright cannot download one)."
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@dataclass
class Visit:
    """What one page did while it loaded: every problem as a readable line."""

    page: Page
    site: str
    problems: list[str] = field(default_factory=list)

    def watch(self) -> None:
        host = urlsplit(self.site).netloc
        self.page.on("request", lambda request: self._request(request.url, host))
        self.page.on(
            "requestfailed",
            lambda request: self.problems.append(
                f"request failed: {request.url} ({request.failure})"
            ),
        )
        self.page.on(
            "response",
            lambda response: (
                response.status >= 400
                and self.problems.append(f"HTTP {response.status}: {response.url}")
            ),
        )
        self.page.on(
            "console",
            lambda message: (
                message.type == "error"
                and self.problems.append(f"console error: {message.text} at {message.location}")
            ),
        )
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))

    def _request(self, url: str, host: str) -> None:
        parts = urlsplit(url)
        if parts.scheme in {"data", "blob", "about"}:
            return
        if parts.netloc != host:
            self.problems.append(f"request to another host: {url}")


@pytest.fixture
def visit(browser: Browser, site: str) -> Iterator[Visit]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    page = context.new_page()
    page.set_default_timeout(20_000)
    tracker = Visit(page, site)
    tracker.watch()
    yield tracker
    context.close()


def settle(visit: Visit, path: str) -> None:
    """Open the page and wait until its math, widgets and images have finished."""
    page = visit.page
    page.goto(visit.site + path, wait_until="networkidle")
    if REDIRECT.search((HTML / path).read_text(encoding="utf-8")):
        # A redirect stub (index.html): settle on the page it sends the reader to.
        page.wait_for_url(lambda url: not url.endswith("/" + path))
        page.wait_for_load_state("networkidle")
    if page.locator(MATH).count():
        page.wait_for_function(
            f"() => [...document.querySelectorAll('{MATH}')]"
            ".every((math) => math.querySelector('mjx-container'))"
        )
    views = page.locator(WIDGET_VIEW).count()
    if views:
        # anywidget-lite.js renders each view into a .widget-subarea placed before its script.
        page.wait_for_function(
            "(views) => document.querySelectorAll('.widget-subarea > *').length >= views",
            arg=views,
        )
    page.wait_for_function("() => [...document.images].every((image) => image.complete)")
    page.wait_for_load_state("networkidle")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def jupyterlab(folder: Path) -> Iterator[str]:
    """A real JupyterLab serving ``folder`` on loopback (no token, no news): yields its URL."""
    port = free_port()
    # `-m jupyterlab`, not `-m jupyter lab`: `jupyter` runs whichever `jupyter-lab` comes first
    # on PATH, which may belong to another environment (and start that one's kernel).
    server = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
            f"--port={port}", "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=",
            "--ServerApp.password=", f"--ServerApp.root_dir={folder}",
            "--LabApp.news_url=None", "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(120):  # wait until it listens (a readiness poll, not a timed assertion)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=30)
