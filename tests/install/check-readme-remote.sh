#!/usr/bin/env bash
# Runs the commands README.md prints under "### Watching from another machine" exactly as printed,
# as a newcomer pastes them, with the tested build's programs on the PATH (standing for the
# installed ones) and ssh going to a real sshd on loopback with throw-away keys
# (CUVIEW_SSH_COMMAND, the documented override). The daemon line must serve; the viewer line runs
# offscreen and must receive views through the gateway it starts over ssh; every other line must
# succeed (and `pause` must pause).
#   tests/install/check-readme-remote.sh BUILD_DIR
set -euo pipefail
source=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
scratch=$(mktemp -d /tmp/cuview-readme-remote-XXXXXX)
export HOME=$scratch/home XDG_RUNTIME_DIR=$scratch/run XDG_STATE_HOME=$scratch/state PATH=$build/bin:$PATH
unset XDG_CONFIG_HOME
mkdir -p "$HOME"
mkdir -m 700 "$XDG_RUNTIME_DIR"
pids=()
cleanup() {
  [[ -n ${CUVIEW_KEEP_GATEWAY_LOG-} && -f $XDG_RUNTIME_DIR/cuview/.gateway/gateway.log ]] &&
    cp "$XDG_RUNTIME_DIR/cuview/.gateway/gateway.log" "$CUVIEW_KEEP_GATEWAY_LOG"
  for p in "${pids[@]}"; do { kill "$p" && wait "$p"; } 2>/dev/null || true; done
  [[ -f $XDG_RUNTIME_DIR/cuview/.gateway/pid ]] && kill "$(cat "$XDG_RUNTIME_DIR/cuview/.gateway/pid")" 2>/dev/null
  [[ -n ${SSHD_PID-} ]] && { exec {SSHD[1]}>&-; wait "$SSHD_PID" 2>/dev/null; }
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() {
  echo "check-readme-remote: $*" >&2
  for log in "$scratch/daemon.log" "$XDG_RUNTIME_DIR/cuview/.gateway/gateway.log"; do
    [[ -f $log ]] && { echo "--- $log (last 30 lines)" >&2; tail -30 "$log" >&2; }
  done
  exit 1
}

coproc SSHD { exec "$build/bin/cuview-test-sshd"; }
read -r -u "${SSHD[0]}" CUVIEW_SSH_COMMAND || fail "the test sshd did not start (see above)"
export CUVIEW_SSH_COMMAND

mapfile -t lines < <(awk '
  /^#+ / { inside = $0 == "### Watching from another machine" }
  /^```/ { fence = !fence; sh = $0 == "```sh"; next }
  fence && sh && inside { print }' "$source/README.md")
((${#lines[@]} == 3)) || fail "README.md's 'Watching from another machine' should print 3 commands, it prints ${#lines[@]}"
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$1"; }
status_json() { cuview-ctl --name run1 status --json 2>/dev/null; }

for line in "${lines[@]}"; do
  cmd=$(trim "${line%%#*}")
  echo "check-readme-remote: \$ $cmd"
  case $cmd in
    *'&')
      bash -c "exec $(trim "${cmd%&}")" >"$scratch/daemon.log" 2>&1 &
      pids+=($!)
      for _ in $(seq 300); do status_json >/dev/null && break; sleep 0.1; done
      status_json >/dev/null || { cat "$scratch/daemon.log" >&2; fail "'$cmd' does not answer status"; } ;;
    cuview-gui*)
      QT_QPA_PLATFORM=offscreen bash -c "exec $cmd" >"$scratch/viewer.log" 2>&1 &
      pid=$!
      ok=""
      for _ in $(seq 300); do  # through ssh and the gateway it started: the gateway reads frames for it
        kill -0 "$pid" 2>/dev/null || { cat "$scratch/viewer.log" >&2; fail "'$cmd' exited"; }
        status_json | grep -q '"readers": [1-9]' && { ok=yes; break; }
        sleep 0.1
      done
      kill "$pid"; wait "$pid" || true
      [[ -n $ok ]] || { cat "$scratch/viewer.log" >&2; fail "'$cmd' received no views within 30 s"; } ;;
    *)
      timeout 120 bash -c "$cmd" || fail "'$cmd' failed" ;;
  esac
done
status_json | grep -q '"paused": true' || fail "after the README's 'pause' the simulation is not paused"
cuview-ctl --name run1 shutdown >/dev/null
echo "check-readme-remote: README.md's 3 remote command lines ran as printed, through a real sshd: ok"
