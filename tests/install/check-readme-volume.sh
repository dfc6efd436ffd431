#!/usr/bin/env bash
# Runs the 3 commands README.md prints under "### A volume in three lines" exactly as printed, from
# a scratch directory whose build/ is the tested build, with a private HOME and XDG_RUNTIME_DIR:
#   - the run serves a volume (describe names lbm3d and a grid of WxHxD);
#   - the viewer attaches and reads its frames (status counts a reader), offscreen (Qt's offscreen
#     platform, set in the environment: the command stays as printed);
#   - the draw line puts a solid ball there: the speed at its centre becomes 0 in the next frames;
#   - the command under "### A volume seen whole" attaches a second viewer, seeing the volume whole,
#     that reads the run's frames.
#   tests/install/check-readme-volume.sh BUILD_DIR
set -euo pipefail
source=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
fail() { echo "check-readme-volume: $*" >&2; exit 1; }
say() { echo "check-readme-volume: $*"; }
scratch=$(mktemp -d /tmp/cuview-readme-volume-XXXXXX)
export HOME=$scratch/home XDG_RUNTIME_DIR=$scratch/run QT_QPA_PLATFORM=offscreen
mkdir -p "$HOME" "$scratch/tree" && mkdir -m 700 "$XDG_RUNTIME_DIR" && ln -s "$build" "$scratch/tree/build"
pids=()
cleanup() { set +e; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$scratch"; }
trap cleanup EXIT

# The lines of the sh blocks under README.md's heading $1.
commands_under() {
  awk -v heading="$1" '
    /^#+ / { inside = $0 == heading }
    /^```/ { fence = !fence; sh = $0 == "```sh"; next }
    fence && sh && inside { print }' "$source/README.md"
}
mapfile -t lines < <(commands_under "### A volume in three lines")
((${#lines[@]} == 3)) || fail "README.md's 'A volume in three lines' should print 3 commands, it prints ${#lines[@]}"
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$1"; }
run_cmd=$(trim "${lines[0]%%#*}") viewer_cmd=$(trim "${lines[1]%%#*}") draw_cmd=$(trim "${lines[2]%%#*}")
name=$(sed -n 's/.*--name \([^ ]*\).*/\1/p' <<<"$run_cmd")
[[ -n $name && $run_cmd == *'&' && $viewer_cmd == *'&' ]] || fail "the first two lines should run in the background"
cd "$scratch/tree"
ctl() { build/bin/cuview-ctl --name "$name" "$@"; }
# start_reader CMD LOG N: runs CMD (printed with a trailing &) in the background, its output in
# LOG, and waits until `status` counts readers from N (1-9) on, failing if CMD exits first.
start_reader() {
  local cmd=$1 log=$2 readers="clients [0-9]+ \\([$3-9][0-9]* reading\\)"
  say "\$ $cmd"
  bash -c "exec $(trim "${cmd%&}")" >"$log" 2>&1 &
  pids+=($!)
  local pid=$!
  for _ in $(seq 300); do
    ctl status 2>/dev/null | grep -qE "$readers" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "'$cmd' exited"; }
    sleep 0.1
  done
  ctl status | grep -qE "$readers" || { ctl status; cat "$log" >&2; fail "'$cmd' does not read the run after 30 s"; }
}

say "\$ $run_cmd"
bash -c "exec $(trim "${run_cmd%&}")" >"$scratch/run.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do ctl status >/dev/null 2>&1 && break; sleep 0.1; done
desc=$(ctl describe) || { cat "$scratch/run.log" >&2; fail "'$run_cmd' did not start"; }
grep -qE "^lbm3d [0-9]+x[0-9]+x[0-9]+ " <<<"$desc" || fail "the run is not a volume: $(head -1 <<<"$desc")"
say "$(head -1 <<<"$desc")"

start_reader "$viewer_cmd" "$scratch/viewer.log" 1
say "the viewer reads the run"

say "\$ $draw_cmd"
bash -c "$draw_cmd" || fail "'$draw_cmd' failed"
read -r x y z < <(sed -n 's/.*draw obstacles \([0-9]*\) \([0-9]*\) \([0-9]*\).*/\1 \2 \3/p' <<<"$draw_cmd")
# The ball is solid from the next step: the speed at its centre reads 0 (python3 + the package).
if command -v python3 >/dev/null && python3 -c "import numpy" 2>/dev/null; then
  CUVIEW_LIBRARY=$build/lib/libcuview.so PYTHONPATH=$source/python python3 - "$name" "$x" "$y" "$z" <<'PY' ||
import sys, time, cuview, numpy as np
name, x, y, z = sys.argv[1], *map(int, sys.argv[2:5])
with cuview.attach(name) as sim:
    deadline = time.time() + 60
    while time.time() < deadline:
        with sim.next_frame(timeout=5) as f:
            if f is not None and float(np.asarray(f["speed"])[z, y, x]) == 0.0:
                print(f"speed at ({x}, {y}, {z}) is 0 at step {f.step}")
                sys.exit(0)
    sys.exit("the speed at the ball's centre never became 0")
PY
    fail "the ball drawn by '$draw_cmd' is not in the flow"
else
  say "python3 with numpy is missing: the ball's effect on the flow is not checked (Debian: python3-numpy)"
fi
mapfile -t whole < <(commands_under "### A volume seen whole")
((${#whole[@]} == 1)) || fail "README.md's 'A volume seen whole' should print 1 command, it prints ${#whole[@]}"
whole_cmd=$(trim "${whole[0]%%#*}")
start_reader "$whole_cmd" "$scratch/whole.log" 2
sleep 2
kill -0 "${pids[2]}" 2>/dev/null || { cat "$scratch/whole.log" >&2; fail "'$whole_cmd' exited"; }
say "the volume viewer reads the run"
kill -0 "${pids[0]}" || fail "the run ended"
ctl shutdown >/dev/null
say "passed"
