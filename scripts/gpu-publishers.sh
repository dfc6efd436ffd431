#!/usr/bin/env bash
# Issue 39 on the GPU machine: the publisher's C API on CUDA, cuview.Publisher with CuPy and
# PyTorch arrays on every sharing mechanism (and the caller's GPU unchanged where there are 2), the
# Python examples served and verified, and bench/python_publisher.py. Logs and summary.txt in $OUT.
#   OUT=$OUT scripts/gpu-publishers.sh          (after scripts/gpu-env.sh's bundle is in .device/)
set -u
. scripts/gpu-env.sh
export PYTHONPATH=$PWD/python
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
nvidia-smi -L >"$out/gpus.txt"
log_run publisher-c-cuda /tmp/rt/bin/cuview-test-publisher-c cuda /tmp/rt/bin/cuview-ctl
for sharing in legacy vmm pool; do
  CUVIEW_TEST_BACKEND=cuda CUVIEW_SHARING=$sharing log_run "python-publisher-$sharing" \
    python3 tests/python/test_publisher.py -v
done
# The examples, served to a verifying reader, steered, shut down.
for ex in grayscott torch_heat3d; do
  python3 examples/python/$ex.py --name "$ex" >"$out/example-$ex.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do /tmp/rt/bin/cuview-ctl --name "$ex" status >/dev/null 2>&1 && break; sleep 0.2; done
  {
    /tmp/rt/bin/cuview-ctl --name "$ex" status
    /tmp/rt/bin/cuview-ctl --name "$ex" attach --frames 30 --verify
    /tmp/rt/bin/cuview-ctl --name "$ex" shutdown
  } >>"$out/example-$ex.log" 2>&1
  wait $pid
  echo "example-$ex: rc=$? $(grep -c 'verified intact' "$out/example-$ex.log") verified" | tee -a "$out/summary.txt"
done
# A volume seen whole from a CUDA frame (issue 40's first part: Frame.view, brick taken on the GPU).
/tmp/rt/bin/cuview-compute --name vol3 --sim grayscott3d --size 128x128x128 --log-level warn &
daemon=$!
for _ in $(seq 100); do /tmp/rt/bin/cuview-ctl --name vol3 status >/dev/null 2>&1 && break; sleep 0.2; done
log_run volume-view python3 -c '
import cuview, numpy as np, time
with cuview.attach("vol3") as sim, sim.next_frame(timeout=10) as f:
    for mode in ("mip", "emission", "isosurface"):
        t = time.perf_counter(); v = f.view("v", mode=mode, size=(1280, 720))
        print(mode, v, f"{1e3 * (time.perf_counter() - t):.0f} ms", "shown:", int(np.isfinite(v.values).sum()))
        assert v.image.shape == (720, 1280, 3) and np.isfinite(v.values).sum() > 1000
print("OK")'
/tmp/rt/bin/cuview-ctl --name vol3 shutdown >/dev/null; wait $daemon
[[ -n ${SKIP_BENCH:-} ]] && exit 0
for array in cupy torch; do
  python3 bench/python_publisher.py --array $array --size 4096 --seconds 6 >"$out/bench-$array.log" 2>&1
  echo "bench-$array: rc=$?" | tee -a "$out/summary.txt"
done
