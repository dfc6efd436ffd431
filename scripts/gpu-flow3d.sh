#!/usr/bin/env bash
# The flows' storage modes and the 3-D flow's in-place streaming on a GPU host (issue 57): the
# CUDA tests of lbm3d and lbm (bits against the host, the analytic flows, checkpoints, parts over
# two GPUs where there are two), the D3Q19 rates at 256³, 512³ and 1024³ and the D2Q9 rates at
# 4096² and 8192² in each storage (cuview-bench --sections flow3d),
# and 1024³ runs of cuview-compute: float32 (the ring fitted beside it) and FP16S, watched by a
# reader and a viewer's pictures. SKIP_TESTS=1, SKIP_BENCH=1, SKIP_BIG=1 leave a part out; NCU=1
# adds Nsight Compute's duration, instructions and DRAM bytes of each kernel of a 512³ step, in
# each storage (docs/benchmarks.md "Where a step's time goes"). Logs and summary.txt under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$out/summary.txt"
gpus=$(nvidia-smi -L | wc -l)
if [[ ${SKIP_TESTS:-0} != 1 ]]; then
log_run unit-lbm3d cuview-unit-tests "[lbm3d]"
log_run numerics cuview-integration-tests "the 3-D flow computes the same bits*"
log_run unit-lbm cuview-unit-tests "[lbm]"
log_run numerics-2d cuview-integration-tests "the 2-D flow computes the same bits*"
log_run checkpoints cuview-integration-tests "a run continued from a checkpoint equals*"
if (( gpus >= 2 )); then
  log_run parts cuview-parts-tests "[gpu]"  # 2 ranks, and 4 where there are 4 GPUs
else
  echo "parts: skipped (one GPU; the CUDA parts tests need two)" | tee -a "$out/summary.txt"
fi
fi
if [[ ${NCU:-0} == 1 ]]; then
  for st in fp32 fp16s; do
    timeout 150 "${NCU_BIN:-/usr/local/cuda/bin/ncu}" --kernel-name regex:"_kernel" --launch-skip 60 --launch-count 8 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes.sum \
      cuview-compute --name ncu-$st --backend cuda --sim lbm3d --size 512x512x512 --sim-option storage=$st \
      --no-final-checkpoint >"$out/ncu-$st.txt" 2>&1 &
    ncu_pid=$!
    sleep 40; cuview-ctl --name ncu-$st shutdown >/dev/null 2>&1; wait $ncu_pid
    # each kernel's name, then its three figures: one line a kernel
    awk '/^  [a-z].*_kernel/{k=$0; sub(/\(.*/,"",k); sub(/.*::/,"",k)} /gpu__time|inst_exec|dram__bytes/{v=v" "$NF" "$(NF-1)} /inst_exec/{print "ncu '"$st"' " k ":" v; v=""}' \
      "$out/ncu-$st.txt" | sort | uniq -c | tee -a "$out/summary.txt"
  done
fi
[[ ${SKIP_BENCH:-0} == 1 ]] || cuview-bench --sections flow3d --backends cuda --reps 5 >"$out/flow3d.md" 2>"$out/flow3d.log"
[[ ${SKIP_BIG:-0} == 1 ]] && exit 0
# The ring beside a 1024³ float32 run (85 GB of populations): fewer slots than asked when they do
# not fit beside it, with the publisher's warning.
cuview-compute --name big32 --backend cuda --sim lbm3d --size 1024x1024x1024 --slots 3 --no-final-checkpoint \
  --log-level info >"$out/big32.log" 2>&1 &
big32=$!
if wait_for_daemon big32; then
  cuview-ctl --name big32 status >"$out/big32-status.txt" 2>&1
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv >>"$out/big32-status.txt"
  echo "big32: $(grep -m1 'ring slots' "$out/big32.log" || grep -m1 'slots of' "$out/big32.log")" | tee -a "$out/summary.txt"
else
  echo "big32: did not start" | tee -a "$out/summary.txt"; tail -5 "$out/big32.log" >>"$out/summary.txt"
fi
kill -KILL $big32 2>/dev/null; wait $big32 2>/dev/null
# The largest grid of the issue, as a person starts it, watched: its rate unwatched, then what a
# reader of frames and a viewer's pictures cost it (scripts/gpu-picture-cost.py), then a verified attach.
cuview-compute --name big --backend cuda --sim lbm3d --size 1024x1024x1024 --sim-option storage=fp16s \
  --no-final-checkpoint --log-level info >"$out/big.log" 2>&1 &
big=$!
if wait_for_daemon big; then
  sleep 8
  cuview-ctl --name big status >"$out/big-status.txt" 2>&1
  nvidia-smi --query-gpu=memory.used,memory.total --format=csv >>"$out/big-status.txt"
  echo "big unwatched: $(grep -m1 -i 'steps/s' "$out/big-status.txt")" | tee -a "$out/summary.txt"
  PYTHONPATH=$PWD/python timeout 150 python3 scripts/gpu-picture-cost.py --name big --mode emission \
    --ctl "$(command -v cuview-ctl)" 2>&1 | sed 's/^/big watched: /' | tee -a "$out/summary.txt"
  timeout 90 cuview-ctl --name big attach --frames 5 --verify --read speed >>"$out/big-status.txt" 2>&1 || echo "attach failed: $?" >>"$out/big-status.txt"
  cuview-ctl --name big status >>"$out/big-status.txt" 2>&1
  echo "big attach: $(grep -m1 -i 'verified' "$out/big-status.txt" || echo 'no frame verified')" | tee -a "$out/summary.txt"
else
  echo "big: did not start" | tee -a "$out/summary.txt"; tail -20 "$out/big.log" >>"$out/summary.txt"
fi
kill -KILL $big 2>/dev/null; wait $big 2>/dev/null
