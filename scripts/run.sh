#!/usr/bin/env bash
# Builds cuview, starts the simulation daemon headless, shows a client receiving verified frames
# from it, then opens the viewer on it (without a display: renders it headless to a PNG).
#   ./scripts/run.sh [--name NAME] [--size WxH] [--backend auto|cuda|host]
set -euo pipefail
cd "$(dirname "$0")/.."
name=default size=512x512 backend=auto
while (($#)); do
  case $1 in
    --name) name=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    *) echo "run.sh: unknown option $1 (use --name, --size, --backend)" >&2; exit 2 ;;
  esac
done
# Only what this script runs: the daemon, cuview-ctl and the viewer (test.sh builds the rest).
echo "run.sh: building cuview-compute, cuview-ctl and cuview-gui into build/ (the first time takes minutes)"
./scripts/build.sh --target cuview-compute --target cuview-ctl --target cuview-gui
bin=$PWD/build/bin
log=$PWD/build/cuview-compute-$name.log

if "$bin/cuview-ctl" --name "$name" status >/dev/null 2>&1; then
  echo "run.sh: daemon '$name' is already running; attaching to it"
else
  # setsid: the daemon is headless and outlives this script and its terminal.
  setsid "$bin/cuview-compute" --name "$name" --size "$size" --backend "$backend" >"$log" 2>&1 </dev/null &
  for _ in $(seq 100); do
    "$bin/cuview-ctl" --name "$name" status >/dev/null 2>&1 && break
    kill -0 $! 2>/dev/null || { echo "run.sh: cuview-compute exited:" >&2; cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "run.sh: started cuview-compute '$name' (pid $!), log in $log"
fi
"$bin/cuview-ctl" --name "$name" status
"$bin/cuview-ctl" --name "$name" attach --frames 120 --verify
if [[ -x $bin/cuview-gui ]]; then
  if [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} ]]; then
    echo "run.sh: opening the viewer; close it whenever you like, the simulation goes on"
    "$bin/cuview-gui" --name "$name" || true
  else
    shot=$PWD/build/cuview-$name.png
    echo "run.sh: no display here; the viewer renders headless instead, to $shot"
    "$bin/cuview-gui" --name "$name" --screenshot "$shot" --frames 60 --screenshot-window
  fi
fi
cat <<EOT

The simulation keeps running headless. Next:
  $bin/cuview-ctl --name $name status          # where it is
  $bin/cuview-ctl --name $name attach --verify # watch frames arrive
  $bin/cuview-gui --name $name                 # open the viewer (again)
  $bin/cuview-ctl --name $name shutdown        # stop it
EOT
