#!/usr/bin/env bash
# Issue 37's run on a host with two GPUs, in one invocation (after scripts/gpu-bundle.sh): `mpirun
# -n 2 cuview-compute --sim lbm3d --size 512x512x1024` (z-slabs, one per GPU) watched as one volume
# by cuview-gui — a plane across the slabs and three planes — locally and through cuview-gateway,
# and read from Python as one 3-D CuPy array. Screenshots and a summary go to $OUT (or /tmp/cuview-gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) × $(nvidia-smi -L | wc -l)" | tee "$out/summary.txt"
export XDG_RUNTIME_DIR=/tmp/xdg-vol; rm -rf "$XDG_RUNTIME_DIR"; mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
setsid mpirun --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x XDG_RUNTIME_DIR -x NCCL_NVLS_ENABLE \
  cuview-compute --sim lbm3d --size ${SIZE:-512x512x1024} --name flow3d --no-final-checkpoint >"$out/flow3d.log" 2>&1 &
run=$!
wait_for_daemon flow3d
sleep ${WARM_S:-10}  # the wake behind the sphere takes a few hundred steps to show
cuview-ctl --name flow3d status | tee -a "$out/summary.txt"
gui() {
  local t0=$(date +%s.%N)
  QT_QPA_PLATFORM=offscreen timeout 90 cuview-gui --name flow3d --field speed --frames 5 --screenshot-window "$@" 2>&1 | tail -1 | tee -a "$out/summary.txt"
  echo "  ($(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s from start to the 5th frame)" | tee -a "$out/summary.txt"
}
gui --plane y=256 --screenshot "$out/local-y.png"
gui --three-planes --screenshot "$out/local-three.png"
cuview-gateway --log-level warn >"$out/gateway.log" 2>&1 &
gw=$!
sleep 1
gui --remote "unix:$XDG_RUNTIME_DIR/cuview/.gateway/gateway.sock" --three-planes --screenshot "$out/remote-three.png"
PYTHONPATH=python python3 - <<'PY' 2>&1 | tee -a "$out/summary.txt"
import cupy, cuview
run = cuview.attach("flow3d")
with run.next_frame(10) as g:
    speed = g.assemble("speed")
    print("python:", type(run).__name__, "of", len(run.parts_info), "parts, offsets",
          [p["offset"] for p in run.parts_info], "->", type(speed).__module__, speed.shape, speed.dtype,
          "max speed", float(speed.max()), "step", g.step)
PY
cuview-ctl --name flow3d shutdown
kill $gw; wait $run; echo "mpirun exit: $?" | tee -a "$out/summary.txt"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)" >>"$out/summary.txt"
echo "===== summary"; cat "$out/summary.txt"
