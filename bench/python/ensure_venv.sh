#!/usr/bin/env bash
# Creates (or reuses) a virtualenv with tensorflow-cpu==VERSION and any extra packages.
#
#   bash bench/python/ensure_venv.sh VENV_DIR VERSION [EXTRA_PACKAGE...]
#
# Reused as is when its python already imports tensorflow VERSION and the extras; else (re)built
# from PyPI with python3 (3.9-3.12). Shared by bench/run.sh and the tests' Python interop step.
set -euo pipefail
export TF_CPP_MIN_LOG_LEVEL=3  # the import check need not print TensorFlow's start-up log
VENV="$1"; VERSION="$2"; shift 2
EXTRAS=("$@")
IMPORTS="import tensorflow as tf, sys; sys.exit(0 if tf.__version__ == '$VERSION' else 1)"
for pkg in "${EXTRAS[@]}"; do IMPORTS="import $pkg; $IMPORTS"; done
# One builder at a time: builds running side by side (two checkouts' tests) would otherwise each
# find the environment half made and rebuild it under the other's running Python.
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
if command -v flock > /dev/null; then flock 9; fi
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$IMPORTS" >/dev/null 2>&1; then
  exit 0
fi
echo "creating $VENV with tensorflow-cpu==$VERSION ${EXTRAS[*]} (first run only; a few minutes)" >&2
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip >&2
"$VENV/bin/pip" install -q "tensorflow-cpu==$VERSION" "${EXTRAS[@]}" >&2
"$VENV/bin/python" -c "$IMPORTS"
