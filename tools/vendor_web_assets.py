"""Copy pinned browser libraries from node_modules/ into web/static/vendor/ (served by the book).

Run after `npm ci`: `python tools/vendor_web_assets.py`. The HTML book then loads MathJax from
its own `_static/vendor/`, never from a CDN (the book's widgets need no library: they render
through web/static/anywidget-lite.js), and the browser tests inject axe-core from there.
Fails with a plain message when node_modules/ is missing or holds another version than
package.json pins.
"""

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"
VENDOR = ROOT / "web" / "static" / "vendor"

# package -> [(path inside the package, destination under web/static/vendor/)]
COPIES = {
    "mathjax": [("es5", "mathjax"), ("LICENSE", "mathjax/LICENSE")],
    # Not loaded by any page: the browser tests inject it to audit each page's accessibility.
    "axe-core": [("axe.min.js", "axe-core/axe.min.js"), ("LICENSE", "axe-core/LICENSE")],
}
# Not served: source maps and READMEs.
SKIP = shutil.ignore_patterns("*.map", "*.md")


def check_versions() -> None:
    """Every copied package is installed at exactly the version package.json pins."""
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]
    for package in COPIES:
        manifest = NODE_MODULES / package / "package.json"
        if not manifest.is_file():
            sys.exit(f"{manifest.relative_to(ROOT)} is missing: run `npm ci` first.")
        installed = json.loads(manifest.read_text())["version"]
        if installed != pinned[package]:
            sys.exit(
                f"node_modules has {package}@{installed}, package.json pins {pinned[package]}: "
                "run `npm ci`."
            )


def main() -> None:
    check_versions()
    if VENDOR.exists():
        shutil.rmtree(VENDOR)
    for package, copies in COPIES.items():
        for source, destination in copies:
            src, dst = NODE_MODULES / package / source, VENDOR / destination
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, ignore=SKIP)
            else:
                shutil.copy2(src, dst)
    print(f"copied {', '.join(COPIES)} into {VENDOR.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
