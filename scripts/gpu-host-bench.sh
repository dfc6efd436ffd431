#!/usr/bin/env bash
# On a GPU host, after a bundle of the build's programs (scripts/gpu-bundle.sh, or
# ../shared/device/bundle-runtime.sh on build/bin): the CUDA unit tests, the host loops' bit-identity
# tests, the remote and group integration tests on CUDA, and the host backend's benchmark on
# 16, 8, 4 and 2 of the host's cores (docs/benchmarks.md "Host backend"). Logs and a summary go to
# $OUT (or /tmp/cuview-gpu).
set -u
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) CPU: $(nproc) x$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) date: $(date -u +%FT%TZ)" | tee "$out/summary.txt"
log_run unit-gpu cuview-unit-tests "[gpu]" --durations yes
log_run unit-host-bits cuview-unit-tests "the host*"
log_run integration-remote-group-gpu cuview-integration-tests "[remote][gpu],[group][gpu]" --durations yes
for t in ${THREADS:-16 8 4 2}; do
  CUVIEW_HOST_THREADS=$t timeout 300 cuview-bench --sections kernel --backends host --host-sizes 1024 2048 --reps 15 \
    >"$out/host-bench-$t.md" 2>&1
done
grep -h "Memory bound\|^| grayscott\|^| lbm" "$out"/host-bench-*.md | tee -a "$out/summary.txt"
