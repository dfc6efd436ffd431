#!/usr/bin/env bash
# Installs the build into a scratch prefix and uses it from there, as a user of the package would:
# the programs' --version (the viewer's with no display), the desktop entry and icons where
# desktops look for them, the docs, and a daemon from the prefix serving verified frames.
#   tests/install/check-install.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d /tmp/cuview-install-XXXXXX)
export XDG_RUNTIME_DIR=$prefix/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
daemon=""
cleanup() { [[ -n $daemon ]] && kill "$daemon" 2>/dev/null; rm -rf "$prefix"; }
trap cleanup EXIT
fail() { echo "check-install: $*" >&2; exit 1; }

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
"$prefix/bin/cuview-compute" --name installed --backend host --size 64x64 --log-level warn &
daemon=$!
for _ in $(seq 100); do
  "$prefix/bin/cuview-ctl" --name installed status >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || fail "the installed cuview-compute exited"
  sleep 0.1
done
"$prefix/bin/cuview-ctl" --name installed attach --frames 10 --verify || fail "installed cuview-ctl attach --verify failed"
"$prefix/bin/cuview-ctl" --name installed shutdown >/dev/null
wait "$daemon"
daemon=""
echo "check-install: installed into $prefix and ran from there: ok"
