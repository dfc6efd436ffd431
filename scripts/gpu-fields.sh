#!/usr/bin/env bash
# Issue 54's GPU check (what codes hold: float64/int64, arrays with ghost cells read in place on the
# GPU, grids with coordinates, 3-D plugins), on a GPU host with the bundle of scripts/gpu-bundle.sh:
#   PART=1: the new layouts and grids on CUDA (C++, C, Python with CuPy and PyTorch), the unit [gpu]
#           tests and the layouts benchmarks (C++ and CuPy);  PART=2: every [gpu] end-to-end test (integration, viewer).
# Logs and one result line per suite in $OUT (or /tmp/cuview-gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(date -u +%Y-%m-%dT%H:%MZ)" |
  tee -a "$out/summary.txt"
export CUVIEW_SHARING=${CUVIEW_SHARING:-legacy}
if [ "${PART:-1}" = 1 ]; then
  log_run layouts cuview-integration-tests "[layouts]" --durations yes
  log_run publisher-c-cuda cuview-test-publisher-c cuda /tmp/rt/bin/cuview-ctl
  CUVIEW_TEST_BACKEND=cuda PYTHONPATH=python log_run python-publisher-cuda python3 tests/python/test_publisher.py -v
  CUVIEW_TEST_BACKEND=cuda PYTHONPATH=python log_run python-client-cuda python3 tests/python/test_client.py -v
  log_run unit-gpu cuview-unit-tests "[gpu]"
  log_run plugins cuview-integration-tests "[plugin]" --durations yes
  cuview-bench --sections layouts --backends cuda,host --out "$out/layouts.md" >"$out/layouts.log" 2>&1
  echo "layouts-bench: rc=$?" | tee -a "$out/summary.txt"
  cat "$out/layouts.md" >>"$out/summary.txt"
  PYTHONPATH=python python3 bench/python_layouts.py --size 512 --frames 100 --bin "$CUVIEW_BIN_DIR" \
    >"$out/python-layouts.md" 2>"$out/python-layouts.log"
  echo "python-layouts-bench: rc=$?" | tee -a "$out/summary.txt"
  cat "$out/python-layouts.md" >>"$out/summary.txt"
else
  log_run integration-gpu cuview-integration-tests "[gpu]" --durations yes
  log_run gui-gpu cuview-gui-tests "[gpu]" --durations yes
  CUVIEW_SHARING=vmm log_run layouts-vmm cuview-integration-tests "[layouts][gpu]"
  CUVIEW_SHARING=pool log_run layouts-pool cuview-integration-tests "[layouts][gpu]"
fi
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)" | tee -a "$out/summary.txt"
