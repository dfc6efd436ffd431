#!/usr/bin/env python3
# The sphere's wake in FP16S against float32 (issue 57; docs/physics.md "Storage"): the default
# sphere in a 160×40×40 channel at Re 80 (viscosity 0.008, inflow 0.08, diameter 8), on the host
# backend, run in each storage for STEPS steps (argument; default 16 000, eight flow-throughs: the
# wake has settled, which at 8 000 it has not, and two runs compare only as far as their transients
# agree), then the recirculation length behind the sphere on its axis, its drag (the momentum a box
# around it lets out) and the velocity fields' normalised L2 difference. Needs PYTHONPATH=python,
# CUVIEW_LIBRARY and CUVIEW_BIN_DIR as the Python tests do; ~3 min on 2 cores.
import os, subprocess, sys, time
import numpy as np
import cuview
W, H, D = 160, 40, 40
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 16000
bin_dir = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
out, rho_field = {}, {}
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
    # The frame of the last step: both storages compared at the same step.
    f = c.next_frame(timeout=30)
    while f is not None and f.step < steps:
        f.release()
        f = c.next_frame(timeout=30)
    if f is None:
        sys.exit(f"{name}: no frame of step {steps} came within 30 s")
    v = np.array(f["velocity"])  # (D, H, W, 3)
    out[storage] = v
    rho_field[storage] = np.array(f["density"])  # (D, H, W)
    f_step = f.step
    f.release(); c.shutdown(); c.close(); p.wait()
    print(storage, "done in", round(time.time() - t0, 1), "s; the frame of step", f_step, flush=True)
cx0, cy0, cz0 = W / 5, H / 2 + 1, D / 2
r = max(2.0, min(H, D) / 10)
y, z = int(cy0), int(cz0)
for storage, v in out.items():
    ux = v[z, y, :, 0]
    behind = np.arange(W) > cx0 + r
    neg = np.where(behind & (ux < 0))[0]
    length = (neg.max() + 1 - (cx0 + r)) / (2 * r) if len(neg) else 0.0
    print(f"{storage}: recirculation behind the sphere to x = {neg.max() if len(neg) else None}, length {length:.3f} diameters; min u_x on the axis {ux[behind].min():.5f}")


def drag(v, rho, nu=0.008, u_in=0.08):
    """The sphere's drag from the momentum that leaves a box around it (steady flow: what the box's
    faces carry out, convection, pressure ρ/3 and viscous stress, is the force on the body), and
    its coefficient F / (½ ρ U² π r²) with U the inflow. The box: x from 2 radii before the centre
    to 3 after, y and z 3 cells from the walls."""
    i0, i1 = int(cx0 - 2 * r), int(cx0 + 3 * r)
    j0, j1, k0, k1 = 3, H - 4, 3, D - 4
    ux, uy, uz = v[..., 0], v[..., 1], v[..., 2]
    dux = np.gradient(ux, axis=2), np.gradient(ux, axis=1), np.gradient(ux, axis=0)  # ∂x, ∂y, ∂z
    pxx = rho * ux * ux + rho / 3 - 2 * nu * rho * dux[0]
    pxy = rho * ux * uy - nu * rho * (dux[1] + np.gradient(uy, axis=2))
    pxz = rho * ux * uz - nu * rho * (dux[2] + np.gradient(uz, axis=2))
    ys, zs, xs = slice(j0, j1 + 1), slice(k0, k1 + 1), slice(i0, i1 + 1)
    out_flux = (pxx[zs, ys, i1].sum() - pxx[zs, ys, i0].sum() + pxy[zs, j1, xs].sum() - pxy[zs, j0, xs].sum() +
                pxz[k1, ys, xs].sum() - pxz[k0, ys, xs].sum())
    force = -out_flux
    return force, force / (0.5 * u_in ** 2 * np.pi * r * r)


cd = {}
for storage in out:
    force, cd[storage] = drag(out[storage].astype(np.float64), rho_field[storage].astype(np.float64))
    print(f"{storage}: drag {force:.6f} (lattice units), coefficient {cd[storage]:.4f}")
print(f"drag coefficient, FP16S against float32: {100 * (cd['fp16s'] - cd['fp32']) / cd['fp32']:+.3f} %")
d = out["fp16s"] - out["fp32"]
print("velocity L2 difference (normalised):", np.sqrt((d ** 2).sum() / (out["fp32"] ** 2).sum()))
