#!/bin/sh
# What each library holds (docs/architecture.md, "Libraries say what they are"): the client library
# (libcuview_common.a, installed as cuview::client), libcuview.so and cuview-ctl hold no export
# half of a sharing mechanism, no part of the gateway's CURVE server side and no simulation.
# Usage: check-library-boundaries.sh BUILD_DIR
set -eu
build=${1:?usage: check-library-boundaries.sh BUILD_DIR}
forbidden='cuview::share::[a-z]+::export_|cuview::share::make_slot_memory|cuview::share::CudaSlots|cuview::remote::ZapHandler|cuview::remote::AuthorizedKeys|cuview::remote::apply_server_curve|cuview::sim::|cuview::Publisher::'
status=0
for file in "$build/common/libcuview_common.a" "$build/lib/libcuview.so" "$build/bin/cuview-ctl"; do
  [ -e "$file" ] || { echo "FAIL: $file is missing; build cuview first" >&2; exit 1; }
  symbols=$(nm -C --defined-only "$file" 2>/dev/null || true)
  # The check can fail: each file must show the client's own entry point.
  if ! printf '%s\n' "$symbols" | grep -qE 'cuview::open\(|cuview_group_attach'; then
    echo "FAIL: nm shows no client symbol in $file (stripped?); cannot check what it holds" >&2
    status=1
    continue
  fi
  found=$(printf '%s\n' "$symbols" | grep -E "$forbidden" | head -5 || true)
  if [ -n "$found" ]; then
    echo "FAIL: $file holds what belongs to the publisher, the gateway or the simulations:" >&2
    printf '  %s\n' "$found" >&2
    status=1
  else
    echo "ok: $file"
  fi
done
exit $status
