#!/usr/bin/env bash
# The whole GPU check in one invocation, on a GPU host that has the driver but no Qt, ZeroMQ or
# Catch2 (../shared/device/README.md): unpack the bundle built by scripts/gpu-bundle.sh, run the
# unit tests, the [gpu] end-to-end tests and the host ones, then the benchmark suite
# (scripts/gpu-bench.sh). SKIP_BENCH=1: tests only; BENCH_ONLY=1: benchmarks only. Logs go to
# $OUT (or /tmp/cuview-gpu); one result line per suite.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "GPU: $gpu" | tee "$out/summary.txt"
cuview-compute --check-cuda | tee -a "$out/summary.txt"

run() {  # name, command...: log to $out/name.log, remember the Catch2 totals line
  local name=$1; shift
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local totals
  totals=$(grep -E '^(All tests passed|test cases:)' "$out/$name.log" | tail -1)
  echo "$name: rc=$rc ${totals:-$(tail -2 "$out/$name.log")}" | tee -a "$out/summary.txt"
}
if [ -z "${BENCH_ONLY:-}" ]; then
run unit cuview-unit-tests "~[ssh]~[.]"  # hidden cases (the 30 000-step flow check) only when named
# [ssh]: GPU hosts have no sshd (CI runs those tests).
run integration-host cuview-integration-tests "~[gpu]~[ssh]" --durations yes
run gui-host cuview-gui-tests "~[gpu]~[window]" --durations yes
run gui-window cuview-gui-tests "[window]" --durations yes  # exit 77 (skipped) where Xvfb/xdotool are missing
# The same [gpu] tests, fault scenarios and Python client once per sharing mechanism: every
# publisher (cuview-compute, embed-wave) picks its mechanism from CUVIEW_SHARING.
for sharing in ${SHARINGS:-legacy vmm pool}; do
  export CUVIEW_SHARING=$sharing
  run "integration-gpu-$sharing" cuview-integration-tests "[gpu]" --durations yes
  mkdir -p "$out/$sharing"
  CUVIEW_SCREENSHOT_DIR=$out/$sharing run "gui-gpu-$sharing" cuview-gui-tests "[gpu]" --durations yes
  run "faults-$sharing" scripts/faults.sh --only viewers,embedded,daemon,remote --backend cuda --bin "$CUVIEW_BIN_DIR"
  CUVIEW_TEST_BACKEND=cuda PYTHONPATH=python \
    run "python-cuda-$sharing" python3 tests/python/test_client.py -v
done
unset CUVIEW_SHARING
# Decomposed runs on this host's GPUs (one rank per GPU, NCCL halos), once per sharing mechanism.
for sharing in ${SHARINGS:-legacy vmm pool}; do
  CUVIEW_SHARING=$sharing run "parts-gpu-$sharing" cuview-parts-tests "[gpu]" --durations yes
done
fi

# Remote viewers of CUDA daemons through a gateway on this host (tcp:// with CURVE, unlimited
# loopback): views per second, latency, and the cost of 1 and 4 remote viewers to the simulation.
if [ -n "${REMOTE_BENCH:-}" ]; then
  cuview-bench --sections remote --remote-backend cuda --remote-seconds 3 --out "$out/remote.md" >"$out/remote.log" 2>&1
  echo "remote-bench: rc=$?" | tee -a "$out/summary.txt"
  cat "$out/remote.md" >>"$out/summary.txt"
fi

# What publishing costs (off, no reader, 1 and 4 viewers), start → first step and first frames, for
# every built-in simulation at 4096² and 8192² (docs/benchmarks.md, "Publishing").
if [ -n "${PUBLISH_BENCH:-}" ]; then
  PYTHONPATH=python \
    cuview-bench --sections publish --backends cuda --sizes "${PUBLISH_SIZES:-4096,8192}" \
    --publish-pairs "${PUBLISH_PAIRS:-8}" --window "${PUBLISH_WINDOW:-0.5}" --out "$out/publish.md" \
    >"$out/publish.log" 2>&1
  echo "publish-bench: rc=$?" | tee -a "$out/summary.txt"
  cat "$out/publish.md" >>"$out/summary.txt"
fi

# The benchmark suite (docs/benchmarks.md), unless SKIP_BENCH is set.
if [ -z "${SKIP_BENCH:-}" ]; then
  scripts/gpu-bench.sh | tee -a "$out/summary.txt"
  cat "$out/bench.md" >>"$out/summary.txt"
fi
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)" | tee -a "$out/summary.txt"
