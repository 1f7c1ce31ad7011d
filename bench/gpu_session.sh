#!/usr/bin/env bash
# Issue 17 points 2 and 3 in one device run (about 8 minutes on one H200; torch + transformers there,
# no Snakemake, no polars, no jsonschema):
#   1. here, once:  make device-wheels        (the jsonschema wheels, into the git-ignored .device/)
#   2. device tool: run  command "bash bench/gpu_session.sh"  carry [".device"]  timeout_s 600
# Writes to $OUT (./gpu_out when unset), 7 files: scratch.txt (bench/gpu_scratch.py: ms/step per
# mode and the projected Appendix B grid time), model/ and summary.json (bench/gpu_pretrain.py: the
# candidate embedded model of configs/pretrain_gpu.yaml). Each part has its own time limit, so
# the first one's numbers come back even if the second runs out. A check of the script itself on a
# CPU: SCRATCH_ARGS='--size tiny --steps 3' PRETRAIN_ARGS='--steps 2 --corpus-chars 200000'.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu_out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error PYTHON
if ! "$PYTHON" -c "import jsonschema" 2>/dev/null; then
  if ! ls .device/wheels/*.whl >/dev/null 2>&1; then
    echo "jsonschema is missing here and no wheels were carried: run 'make device-wheels' first and carry .device"
    exit 2
  fi
  "$PYTHON" -m pip install -q --no-index --find-links .device/wheels jsonschema || exit 2
fi
STEPS="${STEPS:-100}" timeout 330 bash bench/gpu_scratch.sh ${SCRATCH_ARGS:-} 2>&1 | tee "$OUT/scratch.txt"
timeout 220 "$PYTHON" bench/gpu_pretrain.py configs/pretrain_gpu.yaml "$OUT" ${PRETRAIN_ARGS:-}
echo "pretrain exit: $?"
ls -R "$OUT"
