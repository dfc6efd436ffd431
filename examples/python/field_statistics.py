#!/usr/bin/env python3
"""A statistic of a live field, zero-copy: mean, min, max and the fraction of cells above a
threshold, for every new frame of a running publisher, computed where the frame lives — with CuPy
on the GPU (CUDA backend), with NumPy in shared memory (host backend). Nothing is copied but the
four numbers.

    cuview-compute --name default &                      # or any program embedding the publisher
    PYTHONPATH=python python3 examples/python/field_statistics.py --name default --field v

Stops after --frames frames (0: until Ctrl-C) or when the publisher goes away."""
import argparse
import sys

import cuview


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", default="default", help="the publisher's instance name")
    ap.add_argument("--field", default=None, help="field to summarise (default: the first)")
    ap.add_argument("--threshold", type=float, default=0.25)
    ap.add_argument("--frames", type=int, default=10, help="frames to summarise, 0 for ever")
    args = ap.parse_args()

    with cuview.attach(args.name, client="field_statistics.py") as sim:
        field = args.field or sim.fields[0]
        if field not in sim.fields:
            sys.exit(f"'{args.name}' has no field '{field}'; it has {', '.join(sim.fields)}")
        if sim.backend == "cuda":
            import cupy as xp  # the frame stays on the GPU: CuPy reads it in place
        else:
            import numpy as xp  # the frame is in shared memory: NumPy reads it in place
        print(f"{args.name}: {sim.description['sim']} on {sim.backend} (shared by {sim.sharing}), field '{field}'")
        seen = 0
        while args.frames == 0 or seen < args.frames:
            frame = sim.next_frame(timeout=2.0)
            if frame is None:
                continue
            with frame as f:  # the slot is held until the block ends, and released after our GPU work
                a = xp.asarray(f[field])
                mean, lo, hi = float(a.mean()), float(a.min()), float(a.max())
                above = float((a > args.threshold).mean())
            print(f"step {f.step:>9}  mean {mean:.5f}  min {lo:.5f}  max {hi:.5f}  "
                  f"> {args.threshold}: {above:6.1%}")
            seen += 1


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
    except cuview.CuviewError as e:
        sys.exit(f"field_statistics.py: {e}")
