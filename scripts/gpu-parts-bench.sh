#!/usr/bin/env bash
# Weak scaling of the decomposed lattice-Boltzmann flow over this host's GPUs (docs/benchmarks.md
# "Several GPUs"): the same grid per GPU on 1 GPU (one process) and on N GPUs (mpirun -n N, one
# rank per GPU, NCCL halos), steps per second read from `cuview-ctl status` over timed windows;
# the cost of one viewer of every part (cuview-ctl attach, frames at the daemon's 60 Hz) in
# alternating windows; the time a fresh viewer takes to its first group of frames.
# Run on the GPU host with the bundle (scripts/gpu-env.sh unpacks it, or has already).
# PER_GPU="8192x8192 4096x4096" GPUS=2 WINDOW=2 PAIRS=2; writes $OUT/parts-bench.md.
# SIM=lbm3d PER_GPU=512x512x512: the 3-D flow, cut into z-slabs (the N-GPU grid is N times deeper).
# SIM_OPTIONS="storage=fp16s" gives every run those --sim-option values; OVERLAP=on measures the
# decomposed runs with that overlap only (default: on and off). MAX_COST=0.3% runs the daemons
# under that budget; READ=speed has the viewer read that field only;
# the frames/s column is what the viewer was offered (frames published while it watched).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
gpus=${GPUS:-$(nvidia-smi -L | wc -l)}
window=${WINDOW:-2}
pairs=${PAIRS:-2}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/xdg-bench}
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
mpi=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x XDG_RUNTIME_DIR -x NCCL_NVLS_ENABLE)

step_of() { stat_of "$1" step; }  # NAME: the run's step
rate() {  # NAME SECONDS: steps per second over a window
  local s0 s1 t0 t1
  s0=$(step_of "$1"); t0=$(date +%s.%N)
  sleep "$2"
  s1=$(step_of "$1"); t1=$(date +%s.%N)
  python3 -c "print(f'{($s1-$s0)/($t1-$t0):.2f}')"
}
wait_up() {  # NAME: until it answers and steps (a 4 x 1024³ run takes some 20 s to start)
  for _ in $(seq 900); do
    s=$(step_of "$1") && [ "${s:-0}" -gt 0 ] && return 0
    sleep 0.1
  done
  return 1
}
measure() {  # LABEL NAME: rates without and with a viewer (ABBA), viewer cost, first-frame time
  local label=$1 name=$2 none=() viewed=()
  wait_up "$name" || { echo "| $label | did not start | | | | |"; return; }
  sleep 1
  local frames=0 seconds=0
  for _ in $(seq "$pairs"); do
    none+=("$(rate "$name" "$window")")
    cuview-ctl --name "$name" attach --frames 1000000 --frame-timeout 10 ${READ:+--read "$READ"} >"$out/viewer.txt" 2>&1 &
    local viewer=$!
    # Timed from its first frame on: the attach itself (imports of every part's slots) is not watching.
    wait_first_frame "$out/viewer.txt"
    sleep 0.5
    local f0 f1 t0 t1
    f0=$(stat_of "$name" frames_published); t0=$(date +%s.%N)
    viewed+=("$(rate "$name" "$window")")
    viewed+=("$(rate "$name" "$window")")
    f1=$(stat_of "$name" frames_published); t1=$(date +%s.%N)
    frames=$((frames + f1 - f0)); seconds=$(python3 -c "print($seconds + $t1 - $t0)")
    kill "$viewer" 2>/dev/null; wait "$viewer" 2>/dev/null
    sleep 0.3
    none+=("$(rate "$name" "$window")")
  done
  local t0 t1
  t0=$(date +%s.%N); cuview-ctl --name "$name" attach --frames 1 >/dev/null 2>&1; t1=$(date +%s.%N)
  python3 - "$label" "$t0" "$t1" "${none[*]}" "${viewed[*]}" "$frames" "$seconds" <<'PY'
import sys, statistics as st
label, t0, t1, none, viewed = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split()
a, b = st.median(map(float, none)), st.median(map(float, viewed))
fps = int(sys.argv[6]) / float(sys.argv[7]) if float(sys.argv[7]) > 0 else 0
print(f"| {label} | {a:.1f} | {b:.1f} | {100*(a-b)/a:.2f} % | {fps:.1f} | {1000*(t1-t0):.0f} ms |")
PY
}

{
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) × $gpus, $(date -u +%Y-%m-%dT%H:%MZ), --sim ${SIM:-lbm}${SIM_OPTIONS:+, --sim-option $SIM_OPTIONS}${MAX_COST:+, --max-cost $MAX_COST}${READ:+, the viewer reads $READ}"
echo
echo "| run | steps/s, no viewer | steps/s, 1 viewer | viewer cost | frames/s to the viewer | ctl attach → first frame(s) |"
echo "| --- | --- | --- | --- | --- | --- |"
} | tee "$out/parts-bench.md"
sim=${SIM:-lbm}
options=()
for o in ${SIM_OPTIONS:-}; do options+=(--sim-option "$o"); done
for per in ${PER_GPU:-8192x8192 4096x4096}; do
  IFS=x read -r w h d <<<"$per"
  if [ -n "${d:-}" ]; then whole="${w}x${h}x$((d * gpus))"; else whole="${w}x$((h * gpus))"; fi
  cuview-compute --sim "$sim" --backend cuda --device 0 --size "$per" --name one --no-final-checkpoint "${options[@]}" \
    ${MAX_COST:+--max-cost "$MAX_COST"} >"$out/one-$per.log" 2>&1 &
  pid=$!
  measure "1 GPU, $per" one | tee -a "$out/parts-bench.md"
  kill -TERM $pid; wait $pid
  for overlap in ${OVERLAP:-on off}; do
    "${mpi[@]}" -n "$gpus" cuview-compute --sim "$sim" --backend cuda --size "$whole" --name many \
      --sim-option overlap=$overlap "${options[@]}" --no-final-checkpoint ${MAX_COST:+--max-cost "$MAX_COST"} \
      >"$out/many-$per-$overlap.log" 2>&1 &
    pid=$!
    measure "$gpus GPUs, $per each ($whole), overlap=$overlap" many | tee -a "$out/parts-bench.md"
    kill -TERM $pid; wait $pid
  done
done
exit 0  # each run ends by TERM (its exit status is not the measurement's); the table is the result
