#!/usr/bin/env python3
"""What publishing a CuPy volume costs per frame in the layouts real codes hold (docs/benchmarks.md
"Layouts"): a contiguous float32 field of --size³ cells against the same cells in float64, and in
float64 with a halo of 1 ghost cell read in place (`T[1:-1, 1:-1, 1:-1]`: the publisher's strided
kernel copies the interior; the program copies nothing). The C++ section `cuview-bench --sections
layouts` measures the same from C++; this is the Python program's view of it.

One reader (`cuview-bench viewer --render wait`, another process) takes every frame; frames are
published back to back. Per published frame: the GPU time of its work on the publishing stream
(CUDA events around publish(): the copy, the checksum, the trailer and the event), and publish()'s
own time on the host (the Python checks and the C call; the copy runs after it returns).
    PYTHONPATH=python python3 bench/python_layouts.py [--size 512] [--frames 200]"""
import argparse
import os
import statistics
import subprocess
import time

import cupy as cp

import cuview

ap = argparse.ArgumentParser()
ap.add_argument("--size", type=int, default=512)
ap.add_argument("--frames", type=int, default=200)
ap.add_argument("--sharing", default="auto")
ap.add_argument("--bin", default=os.environ.get("CUVIEW_BIN_DIR", "build/bin"))
args = ap.parse_args()
n = args.size

CASES = [("float32, contiguous", cp.float32, 0), ("float64, contiguous", cp.float64, 0),
         ("float64 with a halo of 1, in place", cp.float64, 1)]

rows, base = [], None
for k, (label, dtype, halo) in enumerate(CASES):
    whole = cp.zeros((n + 2 * halo,) * 3, dtype)
    field = whole[halo:halo + n, halo:halo + n, halo:halo + n]
    name = f"pylayouts-{os.getpid()}-{k}"
    stream = cp.cuda.Stream(non_blocking=True)
    gpu_ms, host_ms = [], []
    with cuview.Publisher(name, fields={"T": field}, backend="cuda", sharing=args.sharing, fps=0, max_cost=1,
                          log="warn") as pub:
        reader = subprocess.Popen([f"{args.bin}/cuview-bench", "viewer", "--name", name, "--hz", "0", "--seconds",
                                   "120", "--render", "wait"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            step, deadline = 0, time.monotonic() + 120
            while len(gpu_ms) < args.frames + 10 and time.monotonic() < deadline:
                step += 1
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record(stream)
                t0 = time.perf_counter()
                published = pub.publish(step, float(step), {"T": field}, stream=stream)
                t1 = time.perf_counter()
                end.record(stream)
                if published:
                    end.synchronize()
                    gpu_ms.append(cp.cuda.get_elapsed_time(start, end))
                    host_ms.append((t1 - t0) * 1e3)
                else:
                    time.sleep(0.0002)
        finally:
            reader.kill()
            reader.wait()
    gpu_ms, host_ms = gpu_ms[10:], host_ms[10:]  # the first frames warm up
    if not gpu_ms:
        raise SystemExit(f"{label}: no frame was published within 120 s (is {args.bin}/cuview-bench there?)")
    ms = statistics.median(gpu_ms)
    moved = 2 * n ** 3 * cp.dtype(dtype).itemsize  # read once, written once
    base = base or ms
    rows.append((label, ms, moved / ms / 1e9, ms / base, statistics.median(host_ms), len(gpu_ms)))

gpu = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()
print(f"CuPy, {n}³ cells, {gpu}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, sharing {args.sharing}")
print("| field | GPU time per frame | rate | vs float32 | publish() on the host | frames |")
print("|---|---|---|---|---|---|")
for label, ms, tbs, ratio, host, count in rows:
    print(f"| {label} | {ms:.3f} ms | {tbs:.2f} TB/s | {ratio:.2f}× | {host:.3f} ms | {count} |")
