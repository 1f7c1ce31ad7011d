#!/usr/bin/env bash
# One GPU check, a few minutes on one GPU (torch + transformers, and jsonschema: bench/gpu_session.sh
# installs its carried wheels on the GPU machine, which lacks it):
#   bash bench/gpu_scratch.sh            # prints ms/step per mode and the projected App. B grid time
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
"${PYTHON:-python3}" - <<'PY'
import importlib.util, sys
missing = [m for m in ("polars", "snakemake") if importlib.util.find_spec(m)]
print("python", sys.version.split()[0], "| optional packages present:", missing or "none")
PY
timeout 480 "${PYTHON:-python3}" bench/gpu_scratch.py --steps "${STEPS:-200}" --runs "${RUNS:-4}" "$@"
