#!/usr/bin/env bash
# The decomposed run on a host with several GPUs, in one invocation (after scripts/gpu-bundle.sh):
# the LBM slab's CUDA unit tests, `mpirun -n 2` equal to one process bit for bit on every sharing
# mechanism, Python groups assembled with CuPy, the issue's own run (16384x4096 over 2 GPUs
# watched by cuview-gui, every field equal to a 1-GPU run's), then scripts/gpu-parts-bench.sh.
# Logs and a summary go to $OUT (or /tmp/cuview-gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) × $(nvidia-smi -L | wc -l)" | tee "$out/summary.txt"
log_run unit-slab cuview-unit-tests "[slab],[lbm]"
for sharing in ${SHARINGS:-legacy vmm pool}; do
  CUVIEW_SHARING=$sharing log_run "parts-gpu-$sharing" cuview-parts-tests "[gpu]" --durations yes
done
CUVIEW_TEST_BACKEND=cuda PYTHONPATH=python \
  log_run python-groups-cuda python3 tests/python/test_client.py PythonGroup -v

# The issue's run: 16384x4096 over two GPUs, one viewer, equal to one GPU's run of the same grid.
export XDG_RUNTIME_DIR=/tmp/xdg-big; rm -rf "$XDG_RUNTIME_DIR"; mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
cuview-compute --sim lbm --backend cuda --device 0 --size 16384x4096 --name one --paused --no-final-checkpoint >"$out/one.log" 2>&1 &
one=$!
setsid mpirun --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x XDG_RUNTIME_DIR -x NCCL_NVLS_ENABLE \
  cuview-compute --sim lbm --size 16384x4096 --name big --paused --no-final-checkpoint >"$out/big.log" 2>&1 &
big=$!
for _ in $(seq 100); do cuview-ctl --name big status >/dev/null 2>&1 && cuview-ctl --name one status >/dev/null 2>&1 && break; sleep 0.2; done
cuview-ctl --name big status | tee -a "$out/summary.txt"
cuview-ctl --name one step 300 && cuview-ctl --name big step 300
for _ in $(seq 100); do
  [ "$(cuview-ctl --name big status --json | python3 -c 'import json,sys; print(min(p["step"] for p in json.load(sys.stdin)))' 2>/dev/null)" = 300 ] &&
    [ "$(cuview-ctl --name one status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step"])' 2>/dev/null)" = 300 ] && break
  sleep 0.2
done
PYTHONPATH=python python3 - <<'PY' 2>&1 | tee -a "$out/summary.txt"
import cupy, cuview
one, big = cuview.attach("one"), cuview.attach("big")
f1, g = one.next_frame(10), big.next_frame(10)
print("big:", type(big).__name__, [(p["rank"], p["device"], p["offset"]) for p in big.parts_info], "step", g.step, "vs", f1.step)
for name in one.fields:
    a = cupy.asarray(f1[name]); b = g.assemble(name)
    print(f"field {name}: 2 GPUs == 1 GPU bit for bit: {bool(cupy.array_equal(a.view(cupy.uint8), b.view(cupy.uint8)))}")
PY
cuview-ctl --name big resume
QT_QPA_PLATFORM=offscreen timeout 60 cuview-gui --name big --field vorticity --screenshot "$out/big.png" --frames 30 --screenshot-window 2>&1 | tail -1 | tee -a "$out/summary.txt"
cuview-ctl --name big shutdown; cuview-ctl --name one shutdown
wait $big; echo "mpirun exit: $?" | tee -a "$out/summary.txt"; wait $one
[ -n "${SKIP_BENCH:-}" ] || scripts/gpu-parts-bench.sh | tee -a "$out/summary.txt"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)" >>"$out/summary.txt"
echo "===== summary"; cat "$out/summary.txt"
