#!/usr/bin/env bash
# The cost budget, "only what is read is copied", frames written in the step and first pixels on a
# GPU host (issue 38), in one invocation: the tests that cover them on CUDA (the frames the
# simulations write in their step against the separate pass, bit for bit; plugins of this ABI),
# once per sharing mechanism (a reader of one field gets frames holding it alone, verified; a
# client's first frame maps one slot; Python reading one field), then `cuview-bench --sections
# budget,first` (frames delivered at a 0.3 % budget, the cost measured inside and outside; a fresh
# client's start → first frame). Logs and the tables go to $OUT (or /tmp/cuview-gpu); one result
# line per suite. SKIP_BENCH=1: tests only; BENCH_ONLY=1: the tables only; BUDGET=0.3 (percent);
# SECTIONS=budget,first.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "GPU: $gpu, $(date -u +%Y-%m-%dT%H:%MZ)" | tee "$out/summary.txt"
if [ -z "${BENCH_ONLY:-}" ]; then
  log_run unit cuview-unit-tests "[pacer],[ring],[slab]"
  log_run embedded cuview-integration-tests "[embedded],[plugin]"
  for sharing in ${SHARINGS:-legacy vmm pool}; do
    export CUVIEW_SHARING=$sharing
    log_run "sharing-$sharing" cuview-integration-tests "[sharing]"
    CUVIEW_TEST_BACKEND=cuda PYTHONPATH=python \
      log_run "python-cuda-$sharing" python3 tests/python/test_client.py PythonClient -v
  done
  unset CUVIEW_SHARING
fi
if [ -z "${SKIP_BENCH:-}" ]; then
  # Python's first frame: the package from this tree, over the library built with the bundle.
  PYTHONPATH=$PWD/python \
    cuview-bench --sections "${SECTIONS:-budget,first}" --backends cuda --budget "${BUDGET:-0.3}" --publish-pairs "${PAIRS:-6}" \
    --window "${WINDOW:-0.5}" --out "$out/budget.md" >"$out/budget.log" 2>&1
  echo "budget-bench: rc=$?" | tee -a "$out/summary.txt"
  cat "$out/budget.md" >>"$out/summary.txt" 2>/dev/null
fi
