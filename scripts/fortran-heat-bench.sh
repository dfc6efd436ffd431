#!/usr/bin/env bash
# examples/fortran-heat's steps/s on the host backend, without and with one viewer (cuview-ctl
# attach, 60 Hz) — docs/benchmarks.md "Publishing from C, Fortran and Python".
#   scripts/fortran-heat-bench.sh [BUILD_DIR] [SIZE] [SECONDS]
set -euo pipefail
build=${1:-build} size=${2:-128} seconds=${3:-10}
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
ctl() { "$build/bin/cuview-ctl" --name fbench "$@"; }
rate() {  # the mean steps/s over $seconds, from the step `status` reports
  local s0 s1
  s0=$(ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step"])')
  sleep "$seconds"
  s1=$(ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step"])')
  echo "scale=1; ($s1 - $s0) / $seconds" | bc
}
"$build/bin/fortran-heat" --name fbench --size "$size" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$XDG_RUNTIME_DIR"' EXIT
for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.1; done
sleep 2
echo "fortran-heat --size $size (${size}x${size}x$((size / 2)) cells, real(8)), host backend, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "no viewer:  $(rate) steps/s"
ctl attach --frames 100000000 --frame-timeout 60 >/dev/null 2>&1 &
viewer=$!
sleep 1
echo "one viewer: $(rate) steps/s ($(ctl status --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s.get("frames_published"), "frames published")'))"
kill $viewer
ctl shutdown >/dev/null
wait $pid
