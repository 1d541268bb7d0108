#!/usr/bin/env bash
# On a machine with a GPU: run the capture fidelity suite on cuda (each case traced on cpu
# and on cuda must agree in structure and values) and time capture and the descent surface
# on cuda next to cpu. Prints one table; exits non-zero if a check fails.
#
#   scripts/gpu_check.sh            # uses .venv (make test creates it)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

"$PY" - <<'PY'
import torch
if not torch.cuda.is_available():
    raise SystemExit("gpu_check: torch sees no CUDA device (torch %s)" % torch.__version__)
print("GPU:", torch.cuda.get_device_name(0), "· torch", torch.__version__)
PY
QT_QPA_PLATFORM=offscreen AUTOGRAD_VIZ_THREADS=1 "$PY" -m pytest -q -p no:cacheprovider \
    tests/core/test_fidelity.py tests/core/test_saved_memory.py -k cuda
AUTOGRAD_VIZ_THREADS=1 "$PY" -m benchmarks.bench_devices
