#!/usr/bin/env python3
# The sphere's wake in FP16S against float32 (issue 57; docs/physics.md "Storage"): the default
# sphere in a 160×40×40 channel at Re 80 (viscosity 0.008, inflow 0.08, diameter 8), on the host
# backend, run in each storage for STEPS steps (argument; default 16 000, eight flow-throughs: the
# wake has settled, which at 8 000 it has not, and two runs compare only as far as their transients
# agree), then the recirculation length behind the sphere on its axis and the velocity fields'
# normalised L2 difference. Needs PYTHONPATH=python, CUVIEW_LIBRARY and CUVIEW_BIN_DIR as the
# Python tests do; ~3 min on 2 cores.
import os, subprocess, sys, time
import numpy as np
import cuview
W, H, D = 160, 40, 40
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 16000
bin_dir = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
out = {}
for storage in ("fp32", "fp16s"):
    name = "wake-" + storage
    p = subprocess.Popen([f"{bin_dir}/cuview-compute", "--name", name, "--backend", "host", "--sim", "lbm3d",
                          "--size", f"{W}x{H}x{D}", "--sim-option", f"storage={storage}", "--paused",
                          "--log-level", "warn", "--no-final-checkpoint"])
    time.sleep(2)
    c = cuview.attach(name)
    c.set(viscosity=0.008, inflow=0.08)
    t0 = time.time()
    c.step(steps)
    while c.status()["step"] < steps: time.sleep(0.5)
    f = c.next_frame(timeout=30)
    v = np.array(f["velocity"])  # (D, H, W, 3)
    out[storage] = v
    f.release(); c.shutdown(); c.close(); p.wait()
    print(storage, "done in", round(time.time() - t0, 1), "s", flush=True)
cx0, cy0, cz0 = W / 5, H / 2 + 1, D / 2
r = max(2.0, min(H, D) / 10)
y, z = int(cy0), int(cz0)
for storage, v in out.items():
    ux = v[z, y, :, 0]
    behind = np.arange(W) > cx0 + r
    neg = np.where(behind & (ux < 0))[0]
    length = (neg.max() + 1 - (cx0 + r)) / (2 * r) if len(neg) else 0.0
    print(f"{storage}: recirculation behind the sphere to x = {neg.max() if len(neg) else None}, length {length:.3f} diameters; min u_x on the axis {ux[behind].min():.5f}")
d = out["fp16s"] - out["fp32"]
print("velocity L2 difference (normalised):", np.sqrt((d ** 2).sum() / (out["fp32"] ** 2).sum()))
