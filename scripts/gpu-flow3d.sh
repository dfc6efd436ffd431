#!/usr/bin/env bash
# The 3-D flow's storage modes and in-place streaming on a GPU host (issue 57): the CUDA tests
# (bits against the host, the analytic flows, checkpoints, parts over two GPUs where there are
# two), the D3Q19 rates at 256³, 512³ and 1024³ in each storage (cuview-bench --sections flow3d),
# and a 1024³ FP16S run of cuview-compute watched by a client. Logs and summary.txt under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$out/summary.txt"
gpus=$(nvidia-smi -L | wc -l)
log_run unit-lbm3d cuview-unit-tests "[lbm3d]"
log_run numerics cuview-integration-tests "the 3-D flow computes the same bits*"
log_run checkpoints cuview-integration-tests "a run continued from a checkpoint equals*"
if (( gpus >= 2 )); then
  log_run parts cuview-parts-tests "a 3-D flow*(cuda)"
else
  echo "parts: skipped (one GPU; the CUDA parts tests need two)" | tee -a "$out/summary.txt"
fi
[[ ${SKIP_BENCH:-0} == 1 ]] || cuview-bench --sections flow3d --backends cuda --reps 5 >"$out/flow3d.md" 2>"$out/flow3d.log"
# The largest grid of the issue, as a person starts it, watched: its stats after a few seconds.
cuview-compute --name big --backend cuda --sim lbm3d --size 1024x1024x1024 --sim-option storage=fp16s \
  --log-level info >"$out/big.log" 2>&1 &
big=$!
if wait_for_daemon big; then
  sleep 5
  cuview-ctl --name big status >"$out/big-status.txt" 2>&1
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv >>"$out/big-status.txt"
  timeout 90 cuview-ctl --name big attach --frames 5 --verify --read speed >>"$out/big-status.txt" 2>&1 || echo "attach failed: $?" >>"$out/big-status.txt"
  cuview-ctl --name big status >>"$out/big-status.txt" 2>&1
  echo "big: started; $(grep -m1 -i 'steps/s\|step' "$out/big-status.txt" | head -1)" | tee -a "$out/summary.txt"
  kill -KILL $big; wait $big  # not TERM: its final checkpoint of a 1024³ grid is 40 GB
else
  echo "big: did not start" | tee -a "$out/summary.txt"; tail -20 "$out/big.log" >>"$out/summary.txt"
  kill -KILL $big 2>/dev/null
fi
