#!/usr/bin/env bash
# Issue 39 on the GPU machine: the publisher's C API on CUDA, cuview.Publisher with CuPy and
# PyTorch arrays on every sharing mechanism (and the caller's GPU unchanged where there are 2), the
# Python examples served and verified, and bench/python_publisher.py. Logs and summary.txt in $OUT.
#   OUT=$OUT scripts/gpu-publishers.sh          (after scripts/gpu-env.sh's bundle is in .device/)
set -u
. scripts/gpu-env.sh
export CUVIEW_LIBRARY=$PWD/build-gpu/lib/libcuview.so PYTHONPATH=$PWD/python
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
[[ -n ${SKIP_BENCH:-} ]] && exit 0
for array in cupy torch; do
  python3 bench/python_publisher.py --array $array --size 4096 --seconds 6 >"$out/bench-$array.log" 2>&1
  echo "bench-$array: rc=$?" | tee -a "$out/summary.txt"
done
