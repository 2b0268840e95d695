"""Read the widgets' JavaScript and CSS shipped beside this module, bundled for anywidget.

Every widget carries its module and styles in its state, so a page with ten widgets embeds them
ten times: indentation and comment lines are dropped to keep that small. The sources have no
multi-line strings, so this is safe; tests run the compacted bundle in node and in Chromium.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

_CHECKER_IMPORT = re.compile(r'^import \{[^}]*\} from "\./checker\.js";\n', re.MULTILINE)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


def read_asset(name: str) -> str:
    """The text of a file shipped in this package (``predict.js``, ``predict.css``, ...)."""
    return (files(__package__) / name).read_text(encoding="utf-8")


def compact_js(source: str) -> str:
    """Drop indentation, blank lines and whole-line ``//`` comments."""
    lines = (line.strip() for line in source.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//")) + "\n"


def compact_css(source: str) -> str:
    """Drop comments, indentation and blank lines."""
    lines = (line.strip() for line in _CSS_COMMENT.sub("", source).splitlines())
    return "\n".join(line for line in lines if line) + "\n"


@cache
def predict_esm() -> str:
    """predict.js with checker.js inlined: anywidget loads one module and cannot import files."""
    view = read_asset("predict.js")
    bundled, count = _CHECKER_IMPORT.subn(lambda _: read_asset("checker.js") + "\n", view)
    assert count == 1, "predict.js must import the checker exactly once"
    return compact_js(bundled)


@cache
def slider_esm() -> str:
    """The precomputed slider's ES module."""
    return compact_js(read_asset("slider.js"))


@cache
def widget_css() -> str:
    """Styles shared by the predict-then-check and slider views."""
    return compact_css(read_asset("predict.css"))
