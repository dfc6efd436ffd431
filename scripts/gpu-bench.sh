#!/usr/bin/env bash
# The benchmark suite on a GPU host, one invocation: every cuview-bench table, then the cost and
# handoff tables again with the CUDA Multi-Process Service running (a private MPS server, stopped
# afterwards): MPS removes the context switches that a viewer's kernels or cross-context stream
# waits would cost (cuview's viewer has neither; the bench's previous-path rows do), so the two runs
# side by side show it (docs/benchmarks.md). Writes $OUT/bench.md (or /tmp/cuview-gpu/bench.md).
# Never fails on speed.
#   scripts/gpu-bench.sh [extra cuview-bench options]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/cuview-gpu}
mkdir -p "$out"
if ! command -v cuview-bench >/dev/null; then  # not sourced from a bundle yet
  mkdir -p /tmp/rt && tar xJf .device/runtime.txz -C /tmp/rt && . /tmp/rt/env.sh
fi
cuview-bench "$@" --out "$out/bench.md" >"$out/bench.log" 2>&1
echo "bench: rc=$?"
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/cuview-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/cuview-mps/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    cuview-bench --sections cost,handoff --backends cuda --label "under MPS (nvidia-cuda-mps-control -d)" "$@" \
      --out "$out/bench.md" >"$out/bench-mps.log" 2>&1
    echo "bench under MPS: rc=$?"
    echo quit | nvidia-cuda-mps-control
  else
    echo "bench under MPS: skipped (nvidia-cuda-mps-control -d failed)"
  fi
else
  echo "bench under MPS: skipped (no nvidia-cuda-mps-control on this host)"
fi
