#!/usr/bin/env bash
# Makes the .deb by README's command, as printed (from the directory holding build/; a build
# directory named otherwise gets plain `cpack -G DEB` in it), and moves it to OUT_DIR.
# Prints the .deb's path; on failure shows cpack's output and exits 1.
#   tests/install/make-deb.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "make-deb: $*" >&2; exit 1; }
make_deb=$(grep -m1 "^cd build && cpack -G DEB" "$src/README.md") || fail "README.md has no line 'cd build && cpack -G DEB'"
mkdir -p "$out"
rm -f "$build"/cuview_*.deb
if [[ $(basename "$build") == build ]]; then
  (cd "$(dirname "$build")" && eval "$make_deb") >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log" >&2; fail "$make_deb failed"; }
else
  (cd "$build" && cpack -G DEB) >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log" >&2; fail "cpack -G DEB failed in $build"; }
fi
deb=$(ls "$build"/cuview_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || fail "cpack made no cuview_*.deb in $build"
mv "$deb" "$out/"
echo "$out/$(basename "$deb")"
