#!/usr/bin/env bash
# Builds the guide (docs/*.md) into a browsable site in site/ with MkDocs: a venv under
# ~/.cache/polyfn/ is made the first time (MkDocs from PyPI) and reused. `--serve` serves it
# on http://127.0.0.1:8000 instead. The links and snippets are checked by the Maven build
# (tests/.../DocsTest), with no network; this script is not part of the build.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${POLYFN_DOCS_VENV:-$HOME/.cache/polyfn/venv-mkdocs-1.6.1}"
if [ ! -x "$venv/bin/mkdocs" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'mkdocs==1.6.1'
fi
if [ "${1:-}" = --serve ]; then
  exec "$venv/bin/mkdocs" serve
fi
"$venv/bin/mkdocs" build --strict
echo "site built: $(pwd)/site/index.html"
