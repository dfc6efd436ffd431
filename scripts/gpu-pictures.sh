#!/usr/bin/env bash
# Issue 55 on the GPU machine (after the bundle): pictures cast by the run from every cell
# (`render`): the integration test on CUDA (the publisher's pictures equal the CPU caster's), the
# [volume] and [gpu] unit tests, `cuview-bench --sections pictures` (pictures/s within 1 % and 5 %,
# cost inside and outside, camera change → picture, the codecs and pictures through a gateway,
# unlimited and at 100 Mbit/s), and cuview-gui offscreen on the 512³ flow: the brick's picture
# and, at rest, the run's, locally and through a gateway; where a picture's cost goes
# (scripts/gpu-picture-cost.py). $OUT: summary.txt, logs, the bench's table, PNGs.
set -u
. scripts/gpu-env.sh
# The device tool brings back few files: the logs stay in $logs, $OUT gets the summary and PNGs.
logs=${LOGS:-/tmp/cuview-pictures-logs}; mkdir -p "$logs"
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) × $(nvidia-smi -L | wc -l), $(nproc) CPU threads, $(date -u +%Y-%m-%dT%H:%MZ)" | tee "$out/summary.txt"
log_run render-integration /tmp/rt/bin/cuview-integration-tests "[render]"
log_run volume-unit /tmp/rt/bin/cuview-unit-tests "[volume],[gpu]"
[[ -n ${SKIP_BENCH:-} ]] || log_run bench-pictures /tmp/rt/bin/cuview-bench --sections pictures --backends cuda
grep -A12 "^### Pictures" "$logs/bench-pictures.log" >>"$out/summary.txt" 2>/dev/null
grep -A8 "^#### Pictures" "$logs/bench-pictures.log" >>"$out/summary.txt" 2>/dev/null
# Through a gateway over a 100 Mbit/s link: the section at the 5 % budget alone, inside a private
# network namespace whose loopback tc's tbf limits (as scripts/bench-remote.sh does).
if [[ -z ${SKIP_BENCH:-}${SKIP_LINK:-} ]]; then
  log_run bench-pictures-100mbit unshare -n bash -c 'ip link set lo up &&
    tc qdisc add dev lo root tbf rate 100mbit burst 256kb latency 50ms &&
    exec /tmp/rt/bin/cuview-bench --sections pictures --backends cuda --picture-budgets 5 --link-label 100mbit'
  grep -A8 "^#### Pictures through a gateway (" "$logs/bench-pictures-100mbit.log" >>"$out/summary.txt" 2>/dev/null
fi
# Where a picture's cost goes: frames only, one view at rest, an orbit (docs/benchmarks.md "Where a
# picture's cost goes"), against a 512³ flow at 1 % and at 5 %.
if [[ -z ${SKIP_BENCH:-}${SKIP_COST:-} ]]; then
  for cost in 1 5; do
    /tmp/rt/bin/cuview-compute --name cost$cost --sim lbm3d --size 512x512x512 --max-cost $cost% --no-final-checkpoint \
      --log-level warn >"$logs/cost$cost-daemon.log" 2>&1 &
    daemon=$!
    wait_for_daemon cost$cost
    /tmp/rt/bin/cuview-ctl --name cost$cost set steps_per_frame=2 >/dev/null
    for mode in emission mip; do
      echo "picture cost, $cost % budget, $mode:" >>"$out/summary.txt"
      PYTHONPATH=$PWD/python timeout 120 python3 scripts/gpu-picture-cost.py --name cost$cost --mode $mode \
        --ctl /tmp/rt/bin/cuview-ctl >>"$out/summary.txt" 2>&1
    done
    kill $daemon; wait $daemon 2>/dev/null
  done
fi
[[ -n ${SKIP_BENCH:-}${SKIP_CAST:-} ]] || log_run bench-cast /tmp/rt/bin/cuview-bench --sections cast --backends cuda --reps 5
grep -A12 "^| grid\|^| size" "$logs/bench-cast.log" >>"$out/summary.txt" 2>/dev/null
# The flow past a sphere at 512³, watched in cuview-gui (offscreen) under a 5 % budget: the first
# pictures are the brick's (every 4th cell); once the camera rests, the run's own, of every cell.
shot() {  # NAME FRAMES PNG ARGS...: cuview-gui offscreen, its last line (what the picture is) in the summary
  local name=$1 frames=$2 png=$3; shift 3
  QT_QPA_PLATFORM=offscreen timeout 120 /tmp/rt/bin/cuview-gui --name "$name" --frames "$frames" --screenshot "$png" "$@" \
    >"$logs/gui-$(basename "$png" .png).log" 2>&1
  echo "gui $name --frames $frames $*: rc=$? $(tail -1 "$logs/gui-$(basename "$png" .png).log")" | tee -a "$out/summary.txt"
}
if [[ -z ${SKIP_SPHERE:-} ]]; then
  /tmp/rt/bin/cuview-compute --name sphere --sim lbm3d --size 512x512x512 --max-cost 5 --no-final-checkpoint \
    --log-level warn >"$logs/sphere.log" 2>&1 &
  daemon=$!
  wait_for_daemon sphere
  sleep ${SPHERE_WARM_S:-60}
  shot sphere 1 "$out/sphere-brick.png" --field speed --volume emission --camera 35,25
  shot sphere ${FULL_FRAMES:-12} "$out/sphere-full.png" --field speed --volume emission --camera 35,25
  # The same through a cuview-gateway (its unix socket): the brick while it moves, the run's
  # picture, compressed losslessly, at rest.
  /tmp/rt/bin/cuview-gateway --log-level warn >"$logs/gateway.log" 2>&1 &
  gateway=$!
  sleep 1
  shot sphere ${FULL_FRAMES:-12} "$out/sphere-remote.png" --field speed --volume emission --camera 35,25 \
    --remote "unix:$XDG_RUNTIME_DIR/cuview/.gateway/gateway.sock"
  kill $gateway; wait $gateway 2>/dev/null
  /tmp/rt/bin/cuview-ctl --name sphere status | tee -a "$out/summary.txt"
  kill $daemon; wait $daemon 2>/dev/null
fi
# Two GPUs: a run of 2 parts (z-slabs of 512×512×1024, one per GPU), each casting its block; the
# viewer composites them.
if [[ -z ${SKIP_TWO:-} ]] && (( $(nvidia-smi -L | wc -l) >= 2 )); then
  setsid mpirun --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x XDG_RUNTIME_DIR -x NCCL_NVLS_ENABLE \
    /tmp/rt/bin/cuview-compute --sim lbm3d --size 512x512x1024 --name parts --max-cost 5 --no-final-checkpoint \
    >"$logs/parts.log" 2>&1 &
  run=$!
  wait_for_daemon parts
  sleep ${PARTS_WARM_S:-30}
  shot parts ${FULL_FRAMES:-12} "$out/parts-full.png" --field speed --volume emission --camera 35,25
  shot parts 12 "$logs/parts-mip.png" --field speed --volume mip --camera 35,25
  /tmp/rt/bin/cuview-ctl --name parts status | tee -a "$out/summary.txt"
  /tmp/rt/bin/cuview-ctl --name parts shutdown >/dev/null; wait $run
  grep -E "error|died" "$logs/parts.log" | head -5 >>"$out/summary.txt"
fi
# Four GPUs: the issue's 512×512×2048 in 4 parts (one 512³ z-slab per GPU) within 1 %: each part
# casts its block, the viewer composites the four; the status says each part's cost.
if (( $(nvidia-smi -L | wc -l) >= 4 )); then
  setsid mpirun --allow-run-as-root -n 4 -x LD_LIBRARY_PATH -x XDG_RUNTIME_DIR -x NCCL_NVLS_ENABLE \
    /tmp/rt/bin/cuview-compute --sim lbm3d --size 512x512x2048 --name parts4 --max-cost ${PARTS4_BUDGET:-1} \
    --no-final-checkpoint >"$logs/parts4.log" 2>&1 &
  run=$!
  wait_for_daemon parts4
  sleep ${PARTS_WARM_S:-30}
  shot parts4 1 "$out/parts4-brick.png" --field speed --volume emission --camera 35,25
  shot parts4 ${FULL_FRAMES:-12} "$out/parts4-full.png" --field speed --volume emission --camera 35,25
  shot parts4 12 "$logs/parts4-mip.png" --field speed --volume mip --camera 35,25
  /tmp/rt/bin/cuview-ctl --name parts4 status | tee -a "$out/summary.txt"
  /tmp/rt/bin/cuview-ctl --name parts4 shutdown >/dev/null; wait $run
  grep -E "error|died" "$logs/parts4.log" | head -5 >>"$out/summary.txt"
fi
