#!/usr/bin/env bash
# The whole GPU check in one invocation, on a GPU host that has the driver but no Qt, ZeroMQ or
# Catch2 (../shared/device/README.md): unpack the bundle built by scripts/gpu-bundle.sh, run the
# unit tests, the [gpu] end-to-end tests and the host ones, and take a first throughput reading.
# Logs go to $OUT (or /tmp/cuview-gpu). Prints one result line at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/cuview-gpu}
mkdir -p "$out" /tmp/rt
tar xJf .device/runtime.txz -C /tmp/rt && . /tmp/rt/env.sh
export CUVIEW_BIN_DIR=/tmp/rt/bin
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
run unit cuview-unit-tests
run integration-gpu cuview-integration-tests "[gpu]" --durations yes
run integration-host cuview-integration-tests "~[gpu]" --durations yes
CUVIEW_SCREENSHOT_DIR=$out run gui-gpu cuview-gui-tests "[gpu]" --durations yes
run gui-host cuview-gui-tests "~[gpu]" --durations yes

# First throughput reading of the daemon itself (benchmarks proper: issue 5).
for size in 2048 4096; do
  export XDG_RUNTIME_DIR=/tmp/xdg-bench && mkdir -p $XDG_RUNTIME_DIR && chmod 700 $XDG_RUNTIME_DIR
  cuview-compute --name bench --backend cuda --size ${size}x${size} --log-level warn &
  pid=$!
  for _ in $(seq 100); do cuview-ctl --name bench status >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 3
  cuview-ctl --name bench status --json >"$out/bench-$size.json"
  cuview-ctl --name bench attach --frames 200 --verify >>"$out/bench-$size.json" 2>&1
  kill -TERM $pid; wait $pid
  sps=$(grep -o '"steps_per_second": [0-9.e+]*' "$out/bench-$size.json" | awk '{print $2}')
  echo "cuda ${size}x${size}: ${sps} steps/s = $(awk -v s="$sps" -v n=$((size*size)) 'BEGIN{printf "%.3g", s*n}') cell updates/s" | tee -a "$out/summary.txt"
done
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)" | tee -a "$out/summary.txt"
