#!/usr/bin/env bash
# Runs the 3 commands README.md prints under "### Several GPUs and MPI ranks" exactly as printed,
# as a newcomer pastes them: from a scratch directory whose build/ is the tested build, with a
# private HOME, XDG_RUNTIME_DIR and XDG_STATE_HOME. Without a GPU `--backend auto` runs the ranks
# on the host backend (halos through MPI); the lines must do what their comments say:
#   - `mpirun -n 2 ... &` serves the run as 2 parts (both answer `status`);
#   - `status` prints one line per part, part 0 on rank 0 and part 1 on rank 1;
#   - the viewer, in a real window on a private Xvfb (offscreen where Xvfb, xdotool, xwininfo or
#     python3 is missing), is titled for the run's global grid (one picture of the whole run), reads
#     frames from every part (a reader on each, each having published) and draws the flow (pixels
#     read back from Xvfb's framebuffer file);
# meanwhile a `pause` reaches every part; then `cuview-ctl --name big shutdown` ends the run,
# mpirun exits with status 0 and each rank has written its own final checkpoint (part-0/, part-1/).
# The only additions are in the environment, never in the commands: Open MPI's consent to run as
# root (CI runs as root) and to put 2 ranks on fewer cores. Exit status 77 (skipped) without mpirun.
#   tests/install/check-readme-parts.sh BUILD_DIR
set -euo pipefail
source=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
fail() { echo "check-readme-parts: $*" >&2; exit 1; }
say() { echo "check-readme-parts: $*"; }

if ! command -v mpirun >/dev/null; then
  say "skipped: mpirun is not installed (Debian: openmpi-bin), so README.md's 'Several GPUs and MPI ranks' cannot run"
  exit 77
fi

scratch=$(mktemp -d /tmp/cuview-readme-parts-XXXXXX)
export HOME=$scratch/home XDG_RUNTIME_DIR=$scratch/run XDG_STATE_HOME=$scratch/state
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME
export OMPI_MCA_rmaps_base_oversubscribe=1
if (($(id -u) == 0)); then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p "$HOME" "$scratch/tree"
mkdir -m 700 "$XDG_RUNTIME_DIR"
ln -s "$build" "$scratch/tree/build"

run_group="" viewer="" xserver=""
# Whatever is still running ends with the test: mpirun with its ranks (its own process group),
# the viewer, the X server.
cleanup() {
  set +e
  [[ -n $viewer ]] && { kill "$viewer" && wait "$viewer"; } 2>/dev/null
  if [[ -n $run_group ]] && kill -0 -- "-$run_group" 2>/dev/null; then
    kill -TERM -- "-$run_group" 2>/dev/null
    for _ in $(seq 100); do kill -0 -- "-$run_group" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$run_group" 2>/dev/null
    wait "$run_group" 2>/dev/null
  fi
  [[ -n $xserver ]] && { kill "$xserver" && wait "$xserver"; } 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
ctl() { "$build/bin/cuview-ctl" "$@"; }

mapfile -t lines < <(awk '
  /^#+ / { inside = $0 == "### Several GPUs and MPI ranks" }
  /^```/ { fence = !fence; sh = $0 == "```sh"; next }
  fence && sh && inside { print }' "$source/README.md")
((${#lines[@]} == 3)) || fail "README.md's 'Several GPUs and MPI ranks' should print 3 commands, it prints ${#lines[@]}"
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$1"; }
run_cmd=$(trim "${lines[0]%%#*}") status_cmd=$(trim "${lines[1]%%#*}") viewer_cmd=$(trim "${lines[2]%%#*}")
[[ $run_cmd == 'mpirun -n 2 '*'&' ]] ||
  fail "the first line should start 2 ranks in the background (mpirun -n 2 ... &), as this test expects: '$run_cmd'"
name=$(sed -n 's/.*--name \([^ ]*\).*/\1/p' <<<"$run_cmd")
[[ -n $name ]] || fail "'$run_cmd' names no run (--name)"
sim=$(sed -n 's/.*--sim \([^ ]*\).*/\1/p' <<<"$run_cmd")
read -r width height < <(sed -n 's/.*--size \([0-9]*\)x\([0-9]*\).*/\1 \2/p' <<<"$run_cmd") || true
[[ -n $sim && -n $height ]] || fail "'$run_cmd' names no simulation (--sim) or grid (--size WxH)"
cd "$scratch/tree"
started=$SECONDS

# 1. The run: mpirun in a process group of its own (setsid), so that every rank can be ended.
say "\$ $run_cmd"
setsid bash -c "exec $(trim "${run_cmd%&}")" >"$scratch/run.log" 2>&1 &
run_group=$!
parts_json() { ctl --name "$name" status --json 2>/dev/null; }
for _ in $(seq 900); do
  [[ $(parts_json | grep -c '"index":') == 2 ]] && break
  kill -0 "$run_group" 2>/dev/null || { cat "$scratch/run.log" >&2; fail "'$run_cmd' exited"; }
  sleep 0.1
done
[[ $(parts_json | grep -c '"index":') == 2 ]] ||
  { cat "$scratch/run.log" >&2; fail "'$run_cmd' did not serve 2 parts within 90 s"; }
say "the run serves 2 parts after $((SECONDS - started)) s"

# 2. status: a line per part, naming its rank.
say "\$ $status_cmd"
out=$(timeout 60 bash -c "$status_cmd") || fail "'$status_cmd' failed"
echo "$out"
[[ $(grep -cE '^  part [0-9]+  rank ' <<<"$out") == 2 ]] || fail "'$status_cmd' should print 2 part lines"
# Part K owns rows [K·H/2, (K+1)·H/2) of every column (docs/protocol.md "Parts").
for k in 0 1; do
  rows="$((k * height / 2))-$(((k + 1) * height / 2 - 1))"
  grep -qE "^  part $k  rank $k  on .+  rows $rows cols 0-$((width - 1)) " <<<"$out" ||
    fail "'$status_cmd' prints no line for part $k on rank $k (rows $rows)"
done

# Steering reaches every rank: a pause, sent now (it takes effect at the end of the batch of steps in
# flight, at one step on both parts), so that the run stands still for the viewer and ends at once.
ctl --name "$name" pause >/dev/null || fail "cuview-ctl --name $name pause failed"

# 3. The viewer: the whole grid as one picture, frames read from every part.
# drawn FRAMEBUFFER X Y W H: whether the window at X,Y (W×H) of Xvfb's screen (an XWD file, -fbdir)
# shows a picture of the field: one colormap colour (not grey) over at least 2 % of the window. The
# young flow is nearly uniform, so its picture is a large area of one colour; before a frame the
# window's only colours are the colour bar's stripes and Qt's highlight (each about 1 %).
drawn() {
  python3 - "$@" <<'PY'
import struct, sys
from collections import Counter
path, x0, y0, w, h = sys.argv[1], *map(int, sys.argv[2:6])
data = open(path, "rb").read()
head = struct.unpack(">25I", data[:100])
size, byte_order, bpp, stride, ncolors = head[0], head[7], head[11], head[12], head[19]
pixels = data[size + 12 * ncolors:]
assert bpp == 32, f"Xvfb framebuffer of {bpp} bits per pixel"
count = Counter()
for y in range(y0, y0 + h):
    row = pixels[y * stride + 4 * x0:y * stride + 4 * (x0 + w)]
    for i in range(0, len(row), 4):
        v = int.from_bytes(row[i:i + 4], "little" if byte_order == 0 else "big")
        rgb = (v >> 16 & 255, v >> 8 & 255, v & 255)
        if max(rgb) - min(rgb) > 40:
            count[rgb] += 1
colour, n = count.most_common(1)[0] if count else ((0, 0, 0), 0)
print(f"{100 * n / (w * h):.1f} % of the window is colour {colour}")
sys.exit(0 if n >= 0.02 * w * h else 1)
PY
}

window=""
if [[ ! -x build/bin/cuview-gui ]]; then
  say "'$viewer_cmd' not run: this build has no viewer"
  viewer_cmd=""
elif command -v Xvfb >/dev/null && command -v xdotool >/dev/null && command -v xwininfo >/dev/null &&
     command -v python3 >/dev/null; then
  say "\$ $viewer_cmd"
  # A private X server on a display number it picks (written to descriptor 3), its screen kept
  # in $scratch/fb/Xvfb_screen0 for the test to read. -noreset: xdotool's probes come and go, and
  # a server that resets as its last client leaves refuses the viewer connecting meanwhile (seen:
  # "no X server answers at DISPLAY=:0").
  mkdir "$scratch/fb"
  Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp -noreset -fbdir "$scratch/fb" 3>"$scratch/display" \
    >"$scratch/xvfb.log" 2>&1 &
  xserver=$!
  for _ in $(seq 300); do [[ -s $scratch/display ]] && break; sleep 0.1; done
  display=$(head -n 1 "$scratch/display")
  [[ -n $display ]] || { cat "$scratch/xvfb.log" >&2; fail "Xvfb did not start within 30 s"; }
  DISPLAY=:$display QT_QPA_PLATFORM=xcb bash -c "exec $viewer_cmd" >"$scratch/viewer.log" 2>&1 &
  viewer=$! window=yes
else
  say "\$ $viewer_cmd"
  say "no Xvfb, xdotool, xwininfo or python3 here: the viewer runs offscreen (its window is not checked)"
  QT_QPA_PLATFORM=offscreen bash -c "exec $viewer_cmd" >"$scratch/viewer.log" 2>&1 &
  viewer=$!
fi
if [[ -n $viewer ]]; then
  # The first frame comes at the end of the first batch of steps: a minute or so at this size on
  # two shared cores.
  title="" reading="" picture="" id=""
  for _ in $(seq 1800); do
    kill -0 "$viewer" 2>/dev/null || { cat "$scratch/viewer.log" >&2; fail "'$viewer_cmd' exited"; }
    if [[ -n $window && -z $id ]]; then
      id=$(DISPLAY=:$display xdotool search --onlyvisible --pid "$viewer" 2>/dev/null | head -n 1) || true
    fi
    if [[ -n $window && -n $id && -z $title ]]; then
      title=$(DISPLAY=:$display xwininfo -id "$id" 2>/dev/null | sed -n 's/^xwininfo: Window id: [^ ]* "\(.*\)"$/\1/p' |
        grep -F "cuview — $name ($sim ${width}×$height") || true
    fi
    if [[ -z $reading ]]; then
      json=$(parts_json) || true
      [[ $(grep -cE '"readers": [1-9]' <<<"$json") == 2 && $(grep -cE '"frames_published": [1-9]' <<<"$json") == 2 ]] &&
        reading=yes
    fi
    if [[ -n $reading && -n $title && -z $picture ]]; then
      read -r x y w h < <(DISPLAY=:$display xwininfo -id "$id" |
        awk '/Absolute upper-left X/ {x = $NF} /Absolute upper-left Y/ {y = $NF} /Width:/ {w = $NF} /Height:/ {h = $NF}
             END {print x, y, w, h}')
      picture=$(drawn "$scratch/fb/Xvfb_screen0" "$x" "$y" "$w" "$h") || picture=""
    fi
    [[ -n $reading && ( -z $window || -n $picture ) ]] && break
    sleep 0.1
  done
  [[ -n $reading ]] ||
    { cat "$scratch/viewer.log" >&2; fail "'$viewer_cmd' did not read frames from both parts within 180 s"; }
  if [[ -n $window ]]; then
    [[ -n $title ]] || { cat "$scratch/viewer.log" >&2; fail "'$viewer_cmd' shows no window titled for the whole ${width}×$height run"; }
    [[ -n $picture ]] || { cat "$scratch/viewer.log" >&2; fail "'$viewer_cmd' drew no picture of the flow ($(drawn "$scratch/fb/Xvfb_screen0" "$x" "$y" "$w" "$h"))"; }
    say "the viewer's window '$title' drew the flow: $picture"
  fi
  say "the viewer reads frames from both parts ($((SECONDS - started)) s)"
  kill "$viewer"
  wait "$viewer" || true
  viewer=""
fi

# The pause reached both parts; shutdown ends the run, each rank writing its own final checkpoint.
for _ in $(seq 1200); do [[ $(parts_json | grep -c '"paused": true') == 2 ]] && break; sleep 0.1; done
[[ $(parts_json | grep -c '"paused": true') == 2 ]] || fail "'cuview-ctl --name $name pause' did not pause both parts"
ctl --name "$name" shutdown >/dev/null || fail "cuview-ctl --name $name shutdown failed"
rc=0
for _ in $(seq 1200); do kill -0 "$run_group" 2>/dev/null || break; sleep 0.1; done
kill -0 "$run_group" 2>/dev/null && { cat "$scratch/run.log" >&2; fail "mpirun did not exit within 120 s of shutdown"; }
wait "$run_group" || rc=$?
run_group=""
((rc == 0)) || { cat "$scratch/run.log" >&2; fail "mpirun exited with status $rc after shutdown"; }
for k in 0 1; do
  compgen -G "$XDG_STATE_HOME/cuview/$name/part-$k/step-*.h5" >/dev/null ||
    { cat "$scratch/run.log" >&2; fail "rank $k wrote no final checkpoint in $XDG_STATE_HOME/cuview/$name/part-$k/"; }
done
say "README.md's 3 'Several GPUs and MPI ranks' lines ran as printed (2 ranks, host backend) in $((SECONDS - started)) s: ok"
