#!/usr/bin/env python3
"""What cuview.Publisher costs a Python simulation (docs/benchmarks.md "Publishing from Python").
A CuPy (or PyTorch) Gray-Scott of --size² cells runs --seconds per case, steps timed by the host
clock after a device synchronisation:
  none     no publisher at all;
  idle     a publisher, publish() every step, no viewer (it records the step, copies nothing);
  viewer   the same with one viewer (cuview-ctl attach, another process) reading at 60 Hz;
and publish()'s own time on the host per call, beyond the copy (which runs on the GPU, after it
returns): the median of the calls that published a frame and of those that did not, and the Python
part of a frame's call (Publisher._prepare: reading and checking the arrays).
    PYTHONPATH=python python3 bench/python_publisher.py [--array cupy|torch] [--size 4096]"""
import argparse
import os
import statistics
import subprocess
import time

import cuview

ap = argparse.ArgumentParser()
ap.add_argument("--array", default="cupy", choices=["cupy", "torch"])
ap.add_argument("--size", type=int, default=4096)
ap.add_argument("--seconds", type=float, default=8)
ap.add_argument("--sharing", default="auto")
ap.add_argument("--ctl", default=os.path.join(os.environ.get("CUVIEW_BIN_DIR", "build/bin"), "cuview-ctl"))
args = ap.parse_args()
n = args.size

if args.array == "cupy":
    import cupy as xp
    roll, sync = xp.roll, xp.cuda.runtime.deviceSynchronize
    u, v = xp.ones((n, n), xp.float32), xp.zeros((n, n), xp.float32)
else:
    import torch as xp
    roll, sync = xp.roll, xp.cuda.synchronize
    u, v = xp.ones((n, n), device="cuda"), xp.zeros((n, n), device="cuda")
u[n // 2 - 16:n // 2 + 16, n // 2 - 16:n // 2 + 16], v[n // 2 - 16:n // 2 + 16, n // 2 - 16:n // 2 + 16] = 0.5, 0.25


def lap(a):
    return roll(a, 1, 0) + roll(a, -1, 0) + roll(a, 1, 1) + roll(a, -1, 1) - 4 * a


def step(u, v):
    uvv = u * v * v
    return u + 0.2 * lap(u) - uvv + 0.037 * (1 - u), v + 0.1 * lap(v) + uvv - 0.097 * v


def run(pub, seconds):
    global u, v
    calls = {True: [], False: []}
    sync()
    t0, steps = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        u, v = step(u, v)
        steps += 1
        if pub is not None:
            a = time.perf_counter()
            published = pub.publish(steps, float(steps), {"u": u, "v": v})
            calls[published].append(time.perf_counter() - a)
        if steps % 50 == 0:
            sync()
    sync()
    return steps / (time.perf_counter() - t0), calls


def us(values):
    return f"{1e6 * statistics.median(values):.1f} µs (n={len(values)})" if values else "-"


gpu = xp.cuda.get_device_name(0) if args.array == "torch" else xp.cuda.runtime.getDeviceProperties(0)["name"].decode()
print(f"{args.array} Gray-Scott {n}x{n} on {gpu}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
run(None, 2)  # warm-up: kernels compiled, the clocks up
rate_none, _ = run(None, args.seconds)
print(f"none     {rate_none:9.1f} steps/s")
with cuview.Publisher("pybench", fields={"u": u, "v": v}, backend="cuda", sharing=args.sharing) as pub:
    rate_idle, calls = run(pub, args.seconds)
    print(f"idle     {rate_idle:9.1f} steps/s ({100 * (1 - rate_idle / rate_none):+.2f} %), publish() {us(calls[False])}")
    viewer = subprocess.Popen([args.ctl, "--name", "pybench", "attach", "--frames", "1000000", "--read", "u"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    rate_viewer, calls = run(pub, args.seconds)
    viewer.terminate()
    viewer.wait()
    a = time.perf_counter()
    for _ in range(1000):
        pub._prepare({"u": u, "v": v}, None)
    prepare = (time.perf_counter() - a) / 1000
    print(f"viewer   {rate_viewer:9.1f} steps/s ({100 * (1 - rate_viewer / rate_none):+.2f} %), "
          f"publish() publishing {us(calls[True])}, not due {us(calls[False])}, "
          f"{len(calls[True]) / args.seconds:.1f} frames/s; of a frame's publish(), Python's own part "
          f"(reading and checking 2 arrays) {1e6 * prepare:.1f} µs, the rest the C++ publisher queueing the copies")
