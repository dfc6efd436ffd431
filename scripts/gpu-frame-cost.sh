#!/usr/bin/env bash
# What a frame of the 3-D flow costs (docs/benchmarks.md "What a frame of the 3-D flow costs"):
# the FP16S run without a budget or frame-rate limit (a frame every batch), steps/s and frames/s
# over 4-s windows (after 15 s of warming up: the GPU's clock settles) with no viewer, then a
# viewer of every field, PAIRS times (3), then a viewer of `speed` (SIZE, 1024³ by default), each
# window with the SM clock at its end; then Nsight Compute's duration and DRAM bytes of 60 kernels
# of a 512³ run with a viewer of every field, a frame among them (at the clock Nsight Compute
# locks). Run on the GPU host after the bundle is unpacked.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
export XDG_RUNTIME_DIR=/tmp/xdg-frame-cost; mkdir -p $XDG_RUNTIME_DIR; chmod 700 $XDG_RUNTIME_DIR
run_flow() {  # NAME SIZE [LAUNCHER...]: the run, in the background ($pid)
  local name=$1 size=$2; shift 2
  "$@" cuview-compute --sim lbm3d --backend cuda --size "$size" --sim-option storage=fp16s --name "$name" \
    --max-cost 100% --fps 0 --no-final-checkpoint >"$out/$name.log" 2>&1 &
  pid=$!
}
win() {  # LABEL: steps/s and frames/s over 4 s
  local s0 s1 f0 f1 t0 t1
  s0=$(stat_of f step); f0=$(stat_of f frames_published); t0=$(date +%s.%N); sleep 4
  s1=$(stat_of f step); f1=$(stat_of f frames_published); t1=$(date +%s.%N)
  local clock; clock=$(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader -i 0)
  python3 -c "dt=$t1-$t0; print(f'$1: {($s1-$s0)/dt:.2f} steps/s, {($f1-$f0)/dt:.2f} frames/s, SM clock $clock')" | tee -a "$out/summary.txt"
}
viewer() {  # [FIELD]: a viewer of every field (or of FIELD) for one window
  cuview-ctl --name f attach --frames 100000000 --frame-timeout 20 ${1:+--read $1} >"$out/viewer.txt" 2>&1 &
  local v=$!
  wait_first_frame "$out/viewer.txt"
  sleep 1; win "a viewer of ${1:-every field}"
  kill $v; wait $v 2>/dev/null; sleep 1
}
{ date -u; nvidia-smi -L; } >>"$out/summary.txt"
run_flow f "${SIZE:-1024x1024x1024}"
wait_for_daemon f; sleep 15
for _ in $(seq "${PAIRS:-3}"); do
  win "no viewer"
  viewer
done
viewer speed
win "no viewer"
kill -TERM $pid; wait $pid
# Nsight Compute: the kernels after the first 4000 launches (the viewer is attached by then).
run_flow n 512x512x512 timeout 170 "${NCU_BIN:-/usr/local/cuda/bin/ncu}" --kernel-name regex:"_kernel" \
  --launch-skip 4000 --launch-count 60 --metrics gpu__time_duration.sum,dram__bytes.sum
wait_for_daemon n
cuview-ctl --name n attach --frames 100000000 --frame-timeout 100 >"$out/ncu-viewer.txt" 2>&1 &
v=$!
sleep 100; kill $v; cuview-ctl --name n shutdown >/dev/null 2>&1; wait $pid
# each kernel's name, its DRAM bytes and its duration: one line a kernel, counted
awk '/^  [a-zA-Z].*_kernel/{k=$0; sub(/\(.*/,"",k); sub(/.*::/,"",k)} /gpu__time|dram__bytes/{v=v" "$NF" "$(NF-1)} /gpu__time/{print k ":" v; v=""}' \
  "$out/n.log" | sort | uniq -c | sort -rn | tee -a "$out/summary.txt"
