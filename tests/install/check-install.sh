#!/usr/bin/env bash
# Installs the build into a scratch prefix and uses it from there, as a user of the package would:
# the programs' --version (the viewer's with no display), the desktop entry and icons where
# desktops look for them, the docs, and a daemon from the prefix serving verified frames.
#   tests/install/check-install.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d /tmp/cuview-install-XXXXXX)
export XDG_RUNTIME_DIR=$prefix/run XDG_STATE_HOME=$prefix/state  # checkpoints go under the state dir
mkdir -m 700 "$XDG_RUNTIME_DIR"
daemon=""
cleanup() { [[ -n $daemon ]] && kill "$daemon" 2>/dev/null; rm -rf "$prefix"; }
trap cleanup EXIT
fail() { echo "check-install: $*" >&2; exit 1; }
# start NAME ARGS...: the installed daemon in the background, once it answers `status`.
start() {
  local name=$1; shift
  "$prefix/bin/cuview-compute" --name "$name" --backend host --log-level warn "$@" &
  daemon=$!
  for _ in $(seq 100); do
    "$prefix/bin/cuview-ctl" --name "$name" status >/dev/null 2>&1 && return 0
    kill -0 "$daemon" 2>/dev/null || fail "the installed cuview-compute $* exited"
    sleep 0.1
  done
  fail "the installed cuview-compute $* did not answer within 10 s"
}

# build_example NAME DIR: configures and builds the installed examples/NAME out of tree in DIR.
# For sm_90 only, to keep this test short: check-readme-sdk.sh runs the README's own commands,
# which build for the examples' default architectures.
build_example() {
  cmake -S "$prefix/share/doc/cuview/examples/$1" -B "$2" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CUDA_ARCHITECTURES=90 >"$2.configure.log" 2>&1 ||
    { cat "$2.configure.log" >&2; fail "configuring examples/$1 against $prefix failed"; }
  cmake --build "$2" >"$2.build.log" 2>&1 || { cat "$2.build.log" >&2; fail "building examples/$1 against $prefix failed"; }
}

cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install $build --prefix $prefix failed"
version=$(sed -n 's/^project(cuview VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../../CMakeLists.txt")
for p in cuview-compute cuview-ctl; do
  out=$("$prefix/bin/$p" --version) || fail "$prefix/bin/$p --version failed"
  [[ $out == "$p $version" ]] || fail "$prefix/bin/$p --version printed '$out', expected '$p $version'"
done
if [[ -e $build/bin/cuview-gui ]]; then
  out=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$prefix/bin/cuview-gui" --version) ||
    fail "$prefix/bin/cuview-gui --version failed with no display"
  [[ $out == "cuview-gui $version" ]] || fail "cuview-gui --version printed '$out'"
  desktop=$prefix/share/applications/cuview-gui.desktop
  [[ -f $desktop ]] || fail "no desktop entry at $desktop"
  if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$desktop" || fail "desktop-file-validate rejects $desktop"
  fi
  grep -q '^Icon=cuview$' "$desktop" || fail "$desktop does not name the icon 'cuview'"
  for size in 16 24 32 48 64 128 256; do
    [[ -f $prefix/share/icons/hicolor/${size}x${size}/apps/cuview.png ]] || fail "no ${size}x${size} icon"
  done
  [[ -f $prefix/share/icons/hicolor/scalable/apps/cuview.svg ]] || fail "no scalable icon"
fi
[[ -f $prefix/share/doc/cuview/README.md && -f $prefix/share/doc/cuview/docs/protocol.md ]] ||
  fail "docs are not in $prefix/share/doc/cuview"

# The installed daemon and client work from the prefix alone.
start installed --size 64x64
"$prefix/bin/cuview-ctl" --name installed attach --frames 10 --verify || fail "installed cuview-ctl attach --verify failed"
"$prefix/bin/cuview-ctl" --name installed shutdown >/dev/null
wait "$daemon"
daemon=""

# A plugin built out of tree against the installed package (examples/plugin-heat), run by the
# installed daemon, steered and verified by the installed client, drawn by the installed viewer.
heat=$prefix/build-heat
build_example plugin-heat "$heat"
[[ -f $heat/libheat.so ]] || fail "the heat example built no libheat.so"
start heat --size 96x64 --sim "$heat/libheat.so"
"$prefix/bin/cuview-ctl" --name heat attach --frames 10 --verify || fail "attach --verify to the heat plugin failed"
"$prefix/bin/cuview-ctl" --name heat set alpha=0.1 || fail "set alpha=0.1 on the heat plugin failed"
"$prefix/bin/cuview-ctl" --name heat status --json | grep -q '"alpha": 0.1' || fail "status does not show alpha=0.1"
if "$prefix/bin/cuview-ctl" --name heat set alpha=0.3 2>"$prefix/err"; then fail "alpha=0.3 (out of range) was accepted"; fi
grep -q "alpha=0.3 is out of range \[0, 0.25\]" "$prefix/err" || fail "alpha=0.3 refused without its range: $(cat "$prefix/err")"
if [[ -x $prefix/bin/cuview-gui ]]; then
  QT_QPA_PLATFORM=offscreen "$prefix/bin/cuview-gui" --name heat --screenshot "$prefix/heat.png" --frames 5 ||
    fail "cuview-gui could not show the heat plugin"
fi
"$prefix/bin/cuview-ctl" --name heat pause >/dev/null
step=$("$prefix/bin/cuview-ctl" --name heat status --json | sed -n 's/^  "step": \([0-9]*\),/\1/p')
"$prefix/bin/cuview-ctl" --name heat shutdown >/dev/null
wait "$daemon"
daemon=""
# The plugin gets checkpoints too: the final one, restored by a new daemon at the same step.
[[ -f $XDG_STATE_HOME/cuview/heat/$(printf 'step-%012d.h5' "$step") ]] ||
  fail "no final checkpoint of step $step in $XDG_STATE_HOME/cuview/heat: $(ls "$XDG_STATE_HOME/cuview/heat" 2>&1)"
start heat --size 96x64 --sim "$heat/libheat.so" --paused --restore latest
"$prefix/bin/cuview-ctl" --name heat status --json | grep -q "\"step\": $step," || fail "the restored heat plugin is not at step $step"
"$prefix/bin/cuview-ctl" --name heat attach --frames 1 --verify >/dev/null || fail "the restored heat plugin's frame failed to verify"
"$prefix/bin/cuview-ctl" --name heat shutdown >/dev/null
wait "$daemon"
daemon=""
# The example's plugin of 3 axes (libheat3d.so), run on a volume by the installed daemon.
[[ -f $heat/libheat3d.so ]] || fail "the heat example built no libheat3d.so"
start heat3d --size 40x24x16 --sim "$heat/libheat3d.so"
"$prefix/bin/cuview-ctl" --name heat3d attach --frames 10 --verify || fail "attach --verify to the heat3d plugin failed"
"$prefix/bin/cuview-ctl" --name heat3d describe --json | tr -d ' \n' | grep -q '"shape":\[16,24,40\]' ||
  fail "the heat3d plugin's field is not 40x24x16 (shape [16, 24, 40]): $("$prefix/bin/cuview-ctl" --name heat3d describe)"
"$prefix/bin/cuview-ctl" --name heat3d shutdown >/dev/null
wait "$daemon"
daemon=""
# A program embedding the publisher (examples/embed-wave), built out of tree against the installed
# package (cuview::publisher), attached, verified, steered and drawn by the installed tools.
wave=$prefix/build-wave
build_example embed-wave "$wave"
[[ -x $wave/embed-wave ]] || fail "the embed-wave example built no embed-wave program"
"$wave/embed-wave" --name wave --backend host --size 96x64 >"$prefix/wave.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
  "$prefix/bin/cuview-ctl" --name wave status >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || { cat "$prefix/wave.log" >&2; fail "embed-wave exited"; }
  sleep 0.1
done
"$prefix/bin/cuview-ctl" --name wave attach --frames 10 --verify || fail "attach --verify to embed-wave failed"
"$prefix/bin/cuview-ctl" --name wave set c=0.25 || fail "set c=0.25 on embed-wave failed"
"$prefix/bin/cuview-ctl" --name wave status --json | grep -q '"c": 0.25' || fail "status does not show c=0.25"
if [[ -x $prefix/bin/cuview-gui ]]; then
  QT_QPA_PLATFORM=offscreen "$prefix/bin/cuview-gui" --name wave --screenshot "$prefix/wave.png" --frames 5 ||
    fail "cuview-gui could not show embed-wave"
fi
"$prefix/bin/cuview-ctl" --name wave shutdown >/dev/null
wait "$daemon" || fail "embed-wave exited with $? after shutdown: $(cat "$prefix/wave.log")"
daemon=""
# A program whose grid is split over MPI ranks (examples/embed-mpi, cuview/mpi_parts.hpp), built out
# of tree against the installed package and run by mpirun as two parts of one name.
mpi_result="embed-mpi skipped (no mpirun: Debian's openmpi-bin libopenmpi-dev)"
if command -v mpirun >/dev/null; then
  mpi=$prefix/build-mpi
  build_example embed-mpi "$mpi"
  [[ -x $mpi/embed-mpi ]] || fail "the embed-mpi example built no embed-mpi program"
  as_root=()
  [[ $(id -u) == 0 ]] && as_root=(--allow-run-as-root)
  mpirun --oversubscribe -n 2 "${as_root[@]}" -x XDG_RUNTIME_DIR "$mpi/embed-mpi" --name heat --size 96x64 \
    >"$prefix/mpi.log" 2>&1 &
  daemon=$!
  parts=$XDG_RUNTIME_DIR/cuview/heat
  for _ in $(seq 300); do
    [[ -S $parts/part-0/control && -S $parts/part-1/control ]] && grep -q "2 ranks publish 'heat'" "$prefix/mpi.log" && break
    kill -0 "$daemon" 2>/dev/null || { cat "$prefix/mpi.log" >&2; fail "mpirun -n 2 embed-mpi exited"; }
    sleep 0.1
  done
  [[ -S $parts/part-0/control && -S $parts/part-1/control ]] ||
    { cat "$prefix/mpi.log" >&2; fail "mpirun -n 2 embed-mpi made no part-0/control and part-1/control in $parts within 30 s"; }
  if "$prefix/bin/cuview-ctl" --name heat status >/dev/null 2>&1; then
    "$prefix/bin/cuview-ctl" --name heat shutdown >/dev/null || fail "cuview-ctl --name heat shutdown failed"
  else
    # This cuview-ctl does not address a run of parts: stop it as Ctrl-C would, a SIGTERM to every
    # rank (rank 0's decides; a signal to mpirun itself makes Open MPI's mpirun exit 1 however the
    # ranks end).
    kill -TERM $(pgrep -P "$daemon") || fail "no rank of mpirun -n 2 embed-mpi to signal"
  fi
  wait "$daemon" || { cat "$prefix/mpi.log" >&2; fail "mpirun -n 2 embed-mpi exited with $? after being stopped"; }
  daemon=""
  grep -q "embed-mpi: stopped at step" "$prefix/mpi.log" || { cat "$prefix/mpi.log" >&2; fail "embed-mpi did not stop at a step"; }
  [[ ! -e $parts/part-0/control && ! -e $parts/part-1/control ]] || fail "embed-mpi's parts left their sockets in $parts"
  mpi_result="embed-mpi as 2 MPI parts"
fi
echo "check-install: installed into $prefix, ran from there, built and ran the heat plugin, embed-wave and $mpi_result: ok"
