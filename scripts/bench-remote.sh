#!/usr/bin/env bash
# The remote-viewer benchmark (docs/benchmarks.md, "Remote viewers through cuview-gateway"): the
# section `remote` of cuview-bench once per link, each run inside a private network namespace
# whose loopback is the link. Daemon, gateway and viewers all run in that namespace; viewers reach
# the gateway over tcp://127.0.0.1 (CURVE), so a tc limit on `lo` is a real network limit. tbf
# shapes the rate (netem is not available on every kernel; tbf is). Needs root (or CAP_SYS_ADMIN
# and CAP_NET_ADMIN) for unshare -n and tc. Appends every table to one Markdown file.
#   scripts/bench-remote.sh [BUILD_DIR] [extra cuview-bench options]
#   OUT=file.md scripts/bench-remote.sh build-bench --remote-seconds 3
# Never fails on speed: it exits non-zero only when a link could not be set up or measured.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
bench=$(realpath "$build/bin/cuview-bench")
out=${OUT:-/tmp/cuview-bench-remote.md}
[[ -x $bench ]] || { echo "bench-remote: no $bench; build cuview-bench, cuview-compute, cuview-gateway first" >&2; exit 1; }
: >"$out"
rc=0
# label, then the tc qdisc for lo ("" = no limit). burst: 256 kB, enough for a token bucket to
# reach its rate at 1 Gbit/s with the kernel's timer; latency 50 ms bounds the queue.
links=("unlimited|" "1gbit|tbf rate 1gbit burst 256kb latency 50ms" "100mbit|tbf rate 100mbit burst 256kb latency 50ms")
for link in "${links[@]}"; do
  label=${link%%|*} qdisc=${link#*|}
  echo "bench-remote: link $label${qdisc:+ ($qdisc)}"
  unshare -n bash -c '
    set -e
    ip link set lo up
    if [[ -n $2 ]]; then tc qdisc add dev lo root $2; fi
    bench=$1 label=$3 out=$4
    shift 4
    exec "$bench" --sections remote --link-label "$label" --out "$out" "$@"' \
    bench-remote "$bench" "$qdisc" "$label" "$out" "$@" || { echo "bench-remote: link $label failed" >&2; rc=1; }
done
echo "bench-remote: tables in $out"
exit $rc
