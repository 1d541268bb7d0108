#!/usr/bin/env bash
# Build the standalone folder bundle dist/autograd-viz/ with PyInstaller.
#
#   scripts/build_bundle.sh            # CPU-only torch (the default; ~1 GB bundle)
#   TORCH="torch==2.13.0" PIP_TORCH_ARGS="--index-url https://download.pytorch.org/whl/cu126" \
#       scripts/build_bundle.sh        # a CUDA build instead (several GB)
#
# The bundle runs `dist/autograd-viz/autograd-viz [FILE.py]`; its kernel is the same
# executable started with --kernel, so the target machine needs no Python at all.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${BUNDLE_VENV:-.bundle-venv}
TORCH=${TORCH:-torch==2.13.0}
PIP_TORCH_ARGS=${PIP_TORCH_ARGS:-}

test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# shellcheck disable=SC2086
"$VENV/bin/python" -m pip install --quiet $PIP_TORCH_ARGS "$TORCH"
"$VENV/bin/python" -m pip install --quiet . "pyinstaller>=6.10"
"$VENV/bin/pyinstaller" --noconfirm --clean --distpath dist --workpath build/pyinstaller \
    packaging/autograd-viz.spec
echo "bundle: dist/autograd-viz ($(du -sh dist/autograd-viz | cut -f1))"
QT_QPA_PLATFORM=offscreen dist/autograd-viz/autograd-viz --version
