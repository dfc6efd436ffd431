#!/usr/bin/env bash
# Runs the commands README.md prints under "### Watching from a browser" exactly as printed, as a
# newcomer pastes them, with the tested build's programs on the PATH (standing for the installed
# ones), then opens the URL the gateway printed in Debian's chromium, headless, as the README says,
# and waits until the page shows the run (tests/python/devtools.py drives it).
#   tests/install/check-readme-web.sh BUILD_DIR
set -euo pipefail
source=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
scratch=$(mktemp -d /tmp/cuview-readme-web-XXXXXX)
export HOME=$scratch/home XDG_RUNTIME_DIR=$scratch/run XDG_STATE_HOME=$scratch/state PATH=$build/bin:$PATH
mkdir -p "$HOME"
mkdir -m 700 "$XDG_RUNTIME_DIR"
pids=()
cleanup() {
  for p in "${pids[@]}"; do { kill "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() {
  echo "check-readme-web: $*" >&2
  for log in "$scratch"/*.log; do [[ -f $log ]] && { echo "--- $log (last 30 lines)" >&2; tail -30 "$log" >&2; }; done
  exit 1
}

mapfile -t lines < <(awk '
  /^#+ / { inside = $0 == "### Watching from a browser" }
  /^```/ { fence = !fence; sh = $0 == "```sh"; next }
  fence && sh && inside { print }' "$source/README.md")
((${#lines[@]} == 2)) || fail "README.md's 'Watching from a browser' should print 2 commands, it prints ${#lines[@]}"
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$1"; }

url=""
for line in "${lines[@]}"; do
  cmd=$(trim "${line%%#*}")
  echo "check-readme-web: \$ $cmd"
  case $cmd in
    *'&')
      bash -c "exec $(trim "${cmd%&}")" >"$scratch/daemon.log" 2>&1 &
      pids+=($!)
      for _ in $(seq 300); do cuview-ctl --name run1 status >/dev/null 2>&1 && break; sleep 0.1; done
      cuview-ctl --name run1 status >/dev/null || fail "'$cmd' does not answer status" ;;
    cuview-gateway*)
      bash -c "exec $cmd" >"$scratch/gateway.out" 2>"$scratch/gateway.log" &
      pids+=($!)
      for _ in $(seq 300); do
        url=$(grep -m1 '^http://' "$scratch/gateway.out" || true)
        [[ -n $url ]] && break
        kill -0 "${pids[-1]}" 2>/dev/null || fail "'$cmd' exited (is its port taken?)"
        sleep 0.1
      done
      [[ -n $url ]] || fail "'$cmd' printed no URL within 30 s" ;;
    *)
      fail "a line the check does not know how to run: '$cmd'" ;;
  esac
done
[[ $url == http://127.0.0.1:8765/?token=* ]] || fail "the gateway printed '$url', not the README's http://127.0.0.1:8765/?token=…"
# "open that URL in a browser": the page shows the run, at the step it is at.
CUVIEW_LIBRARY=$build/lib/libcuview.so PYTHONPATH=$source/tests/python:$source/python${PYTHONPATH:+:$PYTHONPATH} /usr/bin/python3 - "$url" <<'EOF' || fail "the page did not show run1"
import sys
from devtools import Browser
b = Browser()
try:
    b.call("Page.enable")
    b.call("Page.navigate", url=sys.argv[1])
    b.wait_for("document.getElementById('status').textContent.includes('run1 · step')", timeout=60)
    b.wait_for("document.getElementById('picture').width > 0", timeout=60)
    print("check-readme-web: the page shows", b.js("document.getElementById('status').textContent"))
finally:
    b.close()
EOF
cuview-ctl --name run1 shutdown >/dev/null
echo "check-readme-web: README.md's 2 browser command lines ran as printed, and chromium showed the run: ok"
