#!/usr/bin/env bash
# Install everything the book needs and build it into _build/html/index.html.
# Sphinx warnings are errors. Run from anywhere: `bash tools/install_and_build.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Python: pinned packages and this package itself (editable).
python -m pip install --quiet --disable-pip-version-check -r requirements.txt
# Build matplotlib's font cache now: on a fresh machine its one-time notice would otherwise land
# in the first figure cell's stderr, which the build treats as an error.
python -c "import matplotlib.font_manager"

# Browser libraries the HTML book serves itself (MathJax) and the browser tests inject
# (axe-core): exact versions from package-lock.json, copied into web/static/vendor/.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
python tools/vendor_web_assets.py

# Headless Chromium for the browser tests (Debian's chromium-headless-shell, the build Playwright
# runs headless; Playwright cannot download its own here). See tests/browser/session.py.
if [[ ! -x /usr/bin/chromium-headless-shell ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq chromium-headless-shell >/dev/null
  else
    echo "note: the browser tests run on Debian's headless Chromium (with only the full chromium," \
      "more slowly): sudo apt-get update && sudo apt-get install -y chromium-headless-shell" >&2
  fi
fi

# Bytecode for this repository's Python, compiled once here. Where PYTHONDONTWRITEBYTECODE is
# set (as on the CI machines), nothing caches it, and every kernel of the build and both
# pytest-xdist workers would compile the package and rewrite the ~300 test modules' asserts
# again (about 3 CPU-s per worker). A collect-only run writes pytest's rewritten modules;
# Python checks each cached file against its source's mtime and size, so an edit is picked up.
# Only a cache: a test module that does not import yet leaves the build alone (the test command
# reports it).
env -u PYTHONDONTWRITEBYTECODE python -m compileall -q src tools benchmarks conftest.py
if ! env -u PYTHONDONTWRITEBYTECODE python -m pytest --collect-only -q -n 0 \
  -p no:cacheprovider tests >/dev/null 2>&1; then
  echo "note: collecting the tests failed; \`pytest --nbval\` will say why" >&2
fi

# A clean build: every chapter re-executed (execute_notebooks: force), warnings are errors.
rm -rf _build/html _build/.doctrees _build/jupyter_execute
jupyter-book build . --warningiserror --keep-going
test -f _build/html/index.html
echo "built _build/html/index.html"
