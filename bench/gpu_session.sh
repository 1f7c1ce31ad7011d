#!/usr/bin/env bash
# One GPU benchmark session on any CUDA machine with torch and transformers (Snakemake and polars are
# not needed; jsonschema is):  bash bench/gpu_session.sh
#   1. bench/gpu_scratch.sh: ms/step per training mode at paper size and the projected Appendix B grid time;
#   2. bench/gpu_pretrain.py: pretrains the candidate embedded model of configs/pretrain_gpu.yaml.
# Writes to $OUT (./gpu_out when unset): scratch.txt, model/ and summary.json. Each part has its own
# time limit (SCRATCH_LIMIT, PRETRAIN_LIMIT seconds), so the first one's numbers come back even if the
# second runs out. A check of the script itself on a CPU:
#   SCRATCH_ARGS='--size tiny --steps 3' PRETRAIN_ARGS='--steps 2 --corpus-chars 200000' bash bench/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu_out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error PYTHON
for package in torch transformers jsonschema yaml; do
  "$PYTHON" -c "import $package" 2>/dev/null || { echo "gpu_session: Python package '$package' is missing (pip install it)"; exit 2; }
done
STEPS="${STEPS:-100}" timeout "${SCRATCH_LIMIT:-330}" bash bench/gpu_scratch.sh ${SCRATCH_ARGS:-} 2>&1 | tee "$OUT/scratch.txt"
timeout "${PRETRAIN_LIMIT:-220}" "$PYTHON" bench/gpu_pretrain.py configs/pretrain_gpu.yaml "$OUT" ${PRETRAIN_ARGS:-}
echo "pretrain exit: $?"
ls -R "$OUT"
