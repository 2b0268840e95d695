"""One Playwright and one Debian Chromium per test process, shared by every module that drives it.

The browser is Debian's ``chromium-headless-shell``, the build Playwright itself runs for
headless tests: the same Blink and V8 as the ``chromium`` package (the same version), without the
desktop browser's machinery around them. The browser tests took 16% less CPU with it (189 s
against 225 s, two runs each, `-n 0`, on a 2-core AMD EPYC) and pass unchanged; the pages it
renders have the same sizes. Where only the full ``chromium`` package is installed, it is used.

Playwright's sync API runs one instance per thread, so the modules cannot each start their own
while another is alive; starting one per module cost about a second each. Imported under this
absolute name only (`tests.browser.session`): pytest imports tests/browser/conftest.py as
`browser.conftest` while other modules import it as `tests.browser.conftest`, and a state held
there would exist twice.
"""

from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")  # Debian package chromium-headless-shell
FULL_CHROMIUM = Path("/usr/bin/chromium")  # Debian package chromium
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@dataclass
class Shared:
    """The process's Playwright driver and Chromium, once started."""

    playwright: Playwright | None = None
    browser: Browser | None = None


SHARED = Shared()


def shared_browser(config: pytest.Config) -> Browser:
    """The process's Chromium: started on first use, closed when pytest ends (config cleanup)."""
    chromium = next((path for path in (HEADLESS_SHELL, FULL_CHROMIUM) if path.is_file()), None)
    if chromium is None:
        pytest.fail(
            f"Neither {HEADLESS_SHELL} nor {FULL_CHROMIUM} exists: install Debian's headless "
            "Chromium with `apt-get update && apt-get install -y chromium-headless-shell` "
            "(Playwright cannot download one here)."
        )
    if SHARED.playwright is None:
        SHARED.playwright = sync_playwright().start()
        config.add_cleanup(stop)
    if SHARED.browser is None or not SHARED.browser.is_connected():  # first use, or it crashed
        SHARED.browser = SHARED.playwright.chromium.launch(
            executable_path=str(chromium), args=CHROMIUM_FLAGS
        )
    return SHARED.browser


def close_contexts(browser: Browser) -> None:
    """Close every context a module left open, so the next module starts as on a fresh browser."""
    for context in list(browser.contexts):
        context.close()


def stop() -> None:
    """Close Chromium and stop the Playwright driver."""
    if SHARED.browser is not None and SHARED.browser.is_connected():
        SHARED.browser.close()
    if SHARED.playwright is not None:
        SHARED.playwright.stop()
    SHARED.browser = SHARED.playwright = None
