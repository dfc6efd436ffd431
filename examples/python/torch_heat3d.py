#!/usr/bin/env python3
"""A 3-D heat equation in PyTorch (on the GPU where there is one), published to cuview viewers:
the tensor is read through DLPack / __cuda_array_interface__, copied on the GPU on torch's stream.
    PYTHONPATH=python python3 examples/python/torch_heat3d.py --name heat3t &
    build/bin/cuview-gui --name heat3t        # a volume: slices, steer alpha, draw heat in"""
import argparse

import torch

import cuview

ap = argparse.ArgumentParser()
ap.add_argument("--name", default="heat3t")
ap.add_argument("--size", type=int, default=128)
args = ap.parse_args()
n, device = args.size, "cuda" if torch.cuda.is_available() else "cpu"
kernel = torch.zeros((1, 1, 3, 3, 3), device=device)
kernel[0, 0, 1, 1, :] = kernel[0, 0, 1, :, 1] = kernel[0, 0, :, 1, 1] = 1
kernel[0, 0, 1, 1, 1] = -6  # the 7-point Laplacian, cold walls (zero padding)


def initial():
    z, y, x = torch.meshgrid(*[torch.arange(n, device=device)] * 3, indexing="ij")
    return (((x - n / 2) ** 2 + (y - n / 2) ** 2 + (z - n / 2) ** 2) < (n / 6) ** 2).float()


T = initial()
with cuview.Publisher(args.name, fields={"T": T}, params={"alpha": (0.1, 0.0, 1 / 6)}, inputs=["heat"],
                      backend="cuda" if device == "cuda" else "host", title="heat (PyTorch)") as pub:
    step, alpha = 0, 0.1
    while True:
        s = pub.poll()
        if s.shutdown:
            break
        alpha = s.params.get("alpha", alpha)
        if s.reset:
            T, step = initial(), 0
        for stroke in s.strokes:  # a ball of heat (1) or cold (0)
            z, y, x = torch.meshgrid(*[torch.arange(n, device=device)] * 3, indexing="ij")
            ball = (x - stroke["x"]) ** 2 + (y - stroke["y"]) ** 2 + (z - (stroke["z"] or 0)) ** 2
            T[ball <= stroke["radius"] ** 2] = float(stroke["value"])
        with torch.no_grad():
            for _ in range(pub.steps_allowed(4)):
                T = T + alpha * torch.nn.functional.conv3d(T[None, None], kernel, padding=1)[0, 0]
                step += 1
        if pub.paused:
            pub.wait(0.05)
        stream = torch.cuda.current_stream().cuda_stream if device == "cuda" else None
        pub.publish(step, float(step), {"T": T}, stream=stream)  # never waits for a viewer
