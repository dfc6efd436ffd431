#!/usr/bin/env bash
# Issue 55's first pixels on the GPU machine (after the bundle): cuview-gui (offscreen) attaching to
# a busy simulation, whose first picture is the publisher's own plane over the control connection
# (`render` mode "plane") while the GUI's CUDA context and ring import start; then its first frame.
# Each run: spawn → exit with `--frames 1` (the first thing drawn), and the GUI's own lines. The same
# `cuview-ctl attach --frames 1` (frames only, no picture) beside it. $OUT/summary.txt.
set -u
. scripts/gpu-env.sh
logs=${LOGS:-/tmp/cuview-first-logs}; mkdir -p "$logs"
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%Y-%m-%dT%H:%MZ)" | tee -a "$out/summary.txt"
log_run plane-integration /tmp/rt/bin/cuview-integration-tests "[plane],[render]"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
stamp() {  # each line of stdin behind the ms since $1 (when the GUI's lines came, seen from outside)
  local line; while IFS= read -r line; do echo "[$(ms $1) ms] $line"; done
}
for run in ${RUNS:-"lbm3d:512x512x512" "grayscott3d:512x512x512" "lbm:8192x8192" "grayscott:8192x8192"}; do
  set -- ${run/:/ }
  name=first-$1
  /tmp/rt/bin/cuview-compute --name $name --sim $1 --size $2 --max-cost ${BUDGET:-1}% --no-final-checkpoint \
    --log-level warn >"$logs/$name-daemon.log" 2>&1 &
  daemon=$!
  wait_for_daemon $name
  sleep ${WARM_S:-8}
  for k in $(seq ${REPS:-3}); do
    t0=$(date +%s%N)
    QT_QPA_PLATFORM=offscreen timeout 60 /tmp/rt/bin/cuview-gui --name $name --frames 1 --screenshot "$logs/$name-$k.png" \
      2>&1 | stamp $t0 >"$logs/$name-gui-$k.log"
    echo "$1 $2 gui --frames 1: $(ms $t0) ms spawn→exit; $(grep -E 'first picture|first frame|saved' "$logs/$name-gui-$k.log" | sed 's/cuview-gui: //' | tr '\n' ' ')" | tee -a "$out/summary.txt"
    t0=$(date +%s%N)
    timeout 60 /tmp/rt/bin/cuview-ctl --name $name attach --frames 1 >"$logs/$name-ctl-$k.log" 2>&1
    echo "$1 $2 ctl attach --frames 1: $(ms $t0) ms spawn→exit; $(grep -E 'first frame' "$logs/$name-ctl-$k.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
  done
  cp "$logs/$name-1.png" "$logs/$name-gui-1.log" "$out/" 2>/dev/null
  kill $daemon; wait $daemon 2>/dev/null
done
