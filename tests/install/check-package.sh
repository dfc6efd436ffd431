#!/usr/bin/env bash
# The Debian package as a user gets it, and the daemon as a systemd user service:
#  - `cpack -G DEB` in the build tree (README's command) makes cuview_VERSION_ARCH.deb; its
#    dependencies come from dpkg-shlibdeps, its description says which build it is, lintian finds
#    no error in it;
#  - unpacked into a throw-away root (dpkg -x): cuview-gui --version, the desktop entry
#    (desktop-file-validate), the unit (systemd-analyze verify), the Python package of the .deb and
#    `pip install ./python` in a venv, both `import cuview` against a daemon from the package;
#  - the unit run as systemd runs it (no systemd manager runs here): its ExecStart with %i and %h
#    filled in, NOTIFY_SOCKET and JOURNAL_STREAM set as systemd sets them. It says READY=1 once
#    clients can attach, logs with journal priorities, writes a final checkpoint on SIGTERM
#    (systemctl stop) and continues from it on the next start (systemctl restart).
#   tests/install/check-package.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/cuview-package-XXXXXX)
daemon="" listener=""
cleanup() {
  [[ -n $daemon ]] && kill "$daemon" 2>/dev/null
  [[ -n $listener ]] && kill "$listener" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check-package: $*" >&2; exit 1; }
export HOME=$work/home XDG_RUNTIME_DIR=$work/run XDG_STATE_HOME=$work/home/.local/state
mkdir -p "$HOME/.config/cuview" && mkdir -m 700 "$XDG_RUNTIME_DIR"

# readme_line START: README's line that starts so (its command, as printed).
readme_line() {
  local text
  text=$(START=$1 awk 'index($0, ENVIRON["START"]) == 1 { print; exit }' "$src/README.md")
  [[ -n $text ]] || fail "README.md has no line starting '$1'"
  printf '%s\n' "$text"
}

# ---- the .deb, made by README's command
deb=$("$src/tests/install/make-deb.sh" "$build" "$work/out") || fail "the .deb could not be made"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libzmq5 python3; do
  [[ $depends == *"$lib"* ]] || fail "$(basename "$deb") does not depend on $lib: Depends: $depends"
done
if [[ -e $build/bin/cuview-gui ]]; then
  [[ $depends == *libqt6widgets6* ]] || fail "$(basename "$deb") does not depend on Qt 6 Widgets: Depends: $depends"
fi
description=$(dpkg-deb -f "$deb" Description)
if command -v lintian >/dev/null; then
  lintian --no-tag-display-limit "$deb" >"$work/lintian.log" 2>&1 || true
  if grep -q '^E:' "$work/lintian.log"; then
    grep '^E:' "$work/lintian.log" >&2
    fail "lintian reports errors in $(basename "$deb")"
  fi
else
  echo "check-package: lintian is not installed (scripts/install-deps.sh installs it): not run" >&2
fi
root=$work/root
dpkg -x "$deb" "$root"
usr=$root/usr
version=$(sed -n 's/^project(cuview VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
out=$("$usr/bin/cuview-compute" --version) || fail "the package's cuview-compute --version failed"
# Which build it is, as the package says and as its cuview-compute says.
if "$usr/bin/cuview-compute" --check-cuda | grep -q "this build has no CUDA backend"; then
  [[ $description == *"host-only build"* ]] || fail "a host-only build's package does not say so: $description"
else
  [[ $description == *"CUDA build"* ]] || fail "a CUDA build's package does not say so: $description"
fi
[[ $out == "cuview-compute $version" ]] || fail "cuview-compute --version printed '$out'"
if [[ -e $build/bin/cuview-gui ]]; then
  out=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$usr/bin/cuview-gui" --version) ||
    fail "the package's cuview-gui --version failed with no display"
  [[ $out == "cuview-gui $version" ]] || fail "cuview-gui --version printed '$out'"
  desktop-file-validate "$usr/share/applications/cuview-gui.desktop" || fail "desktop-file-validate rejects the desktop entry"
  [[ -f $usr/share/icons/hicolor/scalable/apps/cuview.svg ]] || fail "the package has no scalable icon"
fi
[[ -f $usr/share/doc/cuview/copyright && -f $usr/share/doc/cuview/README.md ]] || fail "the package has no copyright or README"
# Machine-readable (DEP-5), naming the licence: Apache-2.0, whose text Debian keeps in common-licenses.
copyright=$usr/share/doc/cuview/copyright
{ head -n 1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' &&
  grep -qx 'License: Apache-2.0' "$copyright" && grep -q '/usr/share/common-licenses/Apache-2.0' "$copyright"; } ||
  fail "the package's copyright file is not in DEP-5 form naming Apache-2.0: $(head -n 3 "$copyright")"
unit=$usr/lib/systemd/user/cuview-compute@.service
[[ -f $unit ]] || fail "the package has no systemd user unit at /usr/lib/systemd/user/cuview-compute@.service"
grep -q '^ExecStart=/usr/bin/cuview-compute ' "$unit" || fail "the unit does not start /usr/bin/cuview-compute: $(grep ExecStart "$unit")"
if ldd "$usr/bin/cuview-compute" | grep -q libsystemd; then
  grep -q '^Type=notify$' "$unit" || fail "cuview-compute tells systemd it is ready, but the unit is not Type=notify"
fi
if command -v systemd-analyze >/dev/null; then
  # An instance of the template, in a copy of the root where /usr/bin/cuview-compute exists.
  mkdir -p "$work/units"
  sed "s|/usr/bin/cuview-compute|$usr/bin/cuview-compute|" "$unit" >"$work/units/cuview-compute@run1.service"
  systemd-analyze verify --man=no "$work/units/cuview-compute@run1.service" >"$work/verify.log" 2>&1 ||
    { cat "$work/verify.log" >&2; fail "systemd-analyze verify rejects the unit"; }
  if grep -v 'Failed to .*bus\|Failed to connect' "$work/verify.log" | grep -qi 'cuview-compute@'; then
    cat "$work/verify.log" >&2
    fail "systemd-analyze verify complains about the unit"
  fi
fi

# ---- the service, run as systemd runs it
# README's "Run it as a service": its options file, as printed.
(cd "$work" && eval "$(readme_line "mkdir -p ~/.config/cuview && printf")") || fail "README's line writing run1.conf failed"
grep -q '^size = "1600x400"$' "$HOME/.config/cuview/run1.conf" || fail "README's run1.conf line wrote: $(cat "$HOME/.config/cuview/run1.conf")"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s|%i|run1|g; s|%h|$HOME|g; s|^/usr/|$usr/|")
read -r -a command <<<"$exec_start"
notify=$work/notify.sock
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    with open(sys.argv[2], "ab") as out:
        out.write(s.recv(4096) + b"\n")
' "$notify" "$work/notify.log" &
listener=$!
for _ in $(seq 50); do [[ -S $notify ]] && break; sleep 0.1; done
ctl() { "$usr/bin/cuview-ctl" --name run1 "$@"; }
# start LOG: the unit's command, until it says READY=1 (and is attachable then).
start() {
  : >"$work/notify.log"
  : >"$1"
  NOTIFY_SOCKET=$notify bash -c 'export JOURNAL_STREAM=$(stat -L -c "%d:%i" /dev/stderr); exec "$@"' _ "${command[@]}" 2>>"$1" &
  daemon=$!
  for _ in $(seq 200); do
    grep -q '^READY=1' "$work/notify.log" 2>/dev/null && break
    kill -0 "$daemon" 2>/dev/null || { cat "$1" >&2; fail "the unit's command exited before READY=1: ${command[*]}"; }
    sleep 0.1
  done
  grep -q '^READY=1' "$work/notify.log" || { cat "$1" >&2; fail "the unit's command said no READY=1 within 20 s"; }
  ctl status >/dev/null || fail "cuview-ctl status failed right after READY=1"
}
stop() {  # as systemctl stop: SIGTERM, then wait
  kill -TERM "$daemon"
  wait "$daemon" || fail "the daemon exited with $? on SIGTERM"
  daemon=""
  grep -q '^STOPPING=1' "$work/notify.log" || fail "the daemon did not tell systemd STOPPING=1"
}
start "$work/journal1.log"
grep -q '^<6>ready: attach with' "$work/journal1.log" || { cat "$work/journal1.log" >&2; fail "log lines carry no journal priority (<6>ready: ...)"; }
grep -q 'no checkpoint in .* yet: starting from the initial state' "$work/journal1.log" ||
  { cat "$work/journal1.log" >&2; fail "the first start does not say it starts without a checkpoint"; }
! grep -q '^20[0-9][0-9]-' "$work/journal1.log" || fail "journal lines carry their own timestamp"
step_now() { ctl status --json | sed -n 's/^  "step": \([0-9]*\),/\1/p'; }
for _ in $(seq 100); do [[ $(step_now) -gt 0 ]] && break; sleep 0.1; done
ctl pause >/dev/null
step=$(step_now)
[[ $step -gt 0 ]] || fail "the service's daemon did not step within 10 s"
stop
grep -q '^<6>final checkpoint: ' "$work/journal1.log" || { cat "$work/journal1.log" >&2; fail "no final checkpoint on SIGTERM"; }
# The step it stopped at (a pause takes effect at the end of the batch under way).
step=$(sed -n 's/^<6>final checkpoint: .*step-0*\([0-9][0-9]*\)\.h5.*/\1/p' "$work/journal1.log")
[[ -n $step ]] || { cat "$work/journal1.log" >&2; fail "the final checkpoint's line names no step-N.h5"; }
start "$work/journal2.log"
grep -q "^<6>restored step $step " "$work/journal2.log" || { cat "$work/journal2.log" >&2; fail "the restarted service did not continue from step $step"; }

# ---- Python: the .deb's package, and `pip install ./python` in a venv, against this daemon
export CUVIEW_LIBRARY=$usr/lib/libcuview.so.0
PYTHONPATH=$usr/lib/python3/dist-packages python3 -c '
import cuview
with cuview.attach("run1", control_only=True) as c:
    assert c.status()["sim"] == "lbm", c.status()
print("the Python package of the .deb attached")' || fail "the .deb's Python package cannot attach to run1"
python3 -m venv "$work/venv" || fail "python3 -m venv failed (Debian: python3-venv)"
(cd "$src" && "$work/venv/bin/pip" install --quiet ./python) || fail "pip install ./python failed"
(cd "$work" && "$work/venv/bin/python" -c 'import cuview; print(cuview.version())') || fail "import cuview in the venv failed"
(cd "$work" && "$work/venv/bin/python" -m cuview status run1) | grep -q "^run1: lbm 1600x400 on host, " ||
  fail "python3 -m cuview status run1 does not show the restored daemon: $(cd "$work" && "$work/venv/bin/python" -m cuview status run1 2>&1)"
unset CUVIEW_LIBRARY
if (cd "$work" && "$work/venv/bin/python" -c 'import cuview' 2>"$work/noimport.log"); then
  [[ -n $(ldconfig -p | grep libcuview) ]] || fail "import cuview worked with no libcuview.so anywhere"
else
  grep -q "cannot find libcuview.so" "$work/noimport.log" && grep -q "CUVIEW_LIBRARY" "$work/noimport.log" ||
    fail "import cuview without the library does not say what to do: $(cat "$work/noimport.log")"
fi
stop
# A missing options file is named, with what to write in it.
rm "$HOME/.config/cuview/run1.conf"
if "${command[@]}" 2>"$work/noconf.log"; then fail "the unit's command ran without its options file"; fi
grep -q "$HOME/.config/cuview/run1.conf: no such file" "$work/noconf.log" || fail "a missing run1.conf is not named: $(cat "$work/noconf.log")"
echo "check-package: $(basename "$deb") (Depends: $depends) passed"
