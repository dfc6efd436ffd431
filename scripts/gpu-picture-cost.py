#!/usr/bin/env python3
"""Where a picture's cost goes (issue 55): against a running daemon (--name), three phases of
--seconds each, the publisher's own stats read at each end — frames only (a reader of one field),
pictures of one view (cuview-gui at rest), and pictures of a moving camera (an orbit) — so that a
frame's cost and a picture's are told apart. Prints one line per phase."""
import argparse
import subprocess
import sys
import time

import cuview


def stats(group):
    return group.leader.status()


def line(name, a, b, seconds, extra=""):
    frames = b["frames_published"] - a["frames_published"]
    pictures = b.get("pictures", 0) - a.get("pictures", 0)
    print(f"{name}: {frames / seconds:.1f} frames/s, {pictures / seconds:.1f} pictures/s, cost {b['cost'] * 100:.3f} %"
          f" (limited by {b['limited_by'] or '-'}), newest picture {b.get('picture_ms', 0):.2f} ms, "
          f"{(b['step'] - a['step']) / seconds:.1f} steps/s over the phase{extra}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--name", required=True)
    p.add_argument("--field", default="speed")
    p.add_argument("--seconds", type=float, default=8)
    p.add_argument("--mode", default="emission")
    p.add_argument("--range", default="0,0.07")
    p.add_argument("--ctl", default="cuview-ctl")
    a = p.parse_args()
    lo, hi = map(float, a.range.split(","))
    g = cuview.attach_group(a.name, control_only=True)
    # frames only: one reader of the field, as a 2-D viewer of it
    reader = subprocess.Popen([a.ctl, "--name", a.name, "attach", "--read", a.field, "--frames", "100000",
                               "--frame-timeout", "30"], stdout=subprocess.DEVNULL)
    time.sleep(2)
    s0 = stats(g)
    time.sleep(a.seconds)
    line("frames only", s0, stats(g), a.seconds)
    reader.terminate()
    reader.wait()
    time.sleep(6)  # the cost window forgets the frames
    for name, orbit in (("pictures, one view", False), ("pictures, orbiting", True)):
        s0 = stats(g)
        t0 = time.monotonic()
        got, az, waits = 0, 30.0, []
        while time.monotonic() - t0 < a.seconds:
            if orbit:
                az += 3.0
            asked = time.monotonic()
            v = g.picture(a.field, mode=a.mode, camera={"azimuth": az, "elevation": 20}, range=(lo, hi), timeout=2.0)
            if v is not None:
                got += 1
                waits.append((time.monotonic() - asked) * 1e3)
        waits.sort()
        extra = f", {got} answers, answer p50 {waits[len(waits) // 2]:.0f} ms" if waits else ""
        line(name, s0, stats(g), time.monotonic() - t0, extra)
        time.sleep(6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
