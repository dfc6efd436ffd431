#!/usr/bin/env python3
"""Gray-Scott reaction-diffusion in CuPy (NumPy where there is no GPU), published to cuview viewers
with cuview.Publisher: the arrays are copied into the ring on the GPU, on CuPy's stream.
    PYTHONPATH=python python3 examples/python/grayscott.py --name gs &
    build/bin/cuview-gui --name gs            # steer F and k, draw, reset"""
import argparse

import cuview

try:
    import cupy as xp
    xp.cuda.runtime.getDeviceCount()
except Exception:  # no CuPy or no GPU: the same on the host
    import numpy as xp

ap = argparse.ArgumentParser()
ap.add_argument("--name", default="gs")
ap.add_argument("--size", type=int, default=256)
args = ap.parse_args()
n = args.size


def initial():
    u, v = xp.ones((n, n), xp.float32), xp.zeros((n, n), xp.float32)
    u[n // 2 - 8:n // 2 + 8, n // 2 - 8:n // 2 + 8], v[n // 2 - 8:n // 2 + 8, n // 2 - 8:n // 2 + 8] = 0.5, 0.25
    return u, v


def laplacian(a):
    return xp.roll(a, 1, 0) + xp.roll(a, -1, 0) + xp.roll(a, 1, 1) + xp.roll(a, -1, 1) - 4 * a


u, v = initial()
backend = "host" if xp.__name__ == "numpy" else "cuda"
with cuview.Publisher(args.name, fields={"u": u, "v": v}, params={"F": (0.037, 0.0, 0.1), "k": (0.06, 0.0, 0.1)},
                      inputs=["seed"], backend=backend, title="Gray-Scott (Python)") as pub:
    step, F, k = 0, 0.037, 0.06
    while True:
        s = pub.poll()
        if s.shutdown:
            break
        F, k = s.params.get("F", F), s.params.get("k", k)
        if s.reset:
            (u, v), step = initial(), 0
        for stroke in s.strokes:  # seed v in a disc
            y, x = xp.ogrid[:n, :n]
            v[(x - stroke["x"]) ** 2 + (y - stroke["y"]) ** 2 <= stroke["radius"] ** 2] = 0.25 * stroke["value"]
        for _ in range(pub.steps_allowed(10)):
            uvv = u * v * v
            u, v = u + 0.2 * laplacian(u) - uvv + F * (1 - u), v + 0.1 * laplacian(v) + uvv - (F + k) * v
            step += 1
        if pub.paused:
            pub.wait(0.05)
        pub.publish(step, float(step), {"u": u, "v": v})  # never waits for a viewer
