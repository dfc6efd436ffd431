#!/usr/bin/env bash
# What publishing costs a program that embeds the publisher: examples/embed-wave's own step rate
# while it publishes at 60 Hz against while it publishes once a second, and with one attached
# reader (cuview-ctl attach --verify, host waits only). Prints a Markdown table.
#   scripts/gpu-embed-cost.sh [SIZE] [BACKEND]     (defaults 4096x4096 cuda; binaries from $CUVIEW_BIN_DIR)
set -euo pipefail
size=${1:-4096x4096} backend=${2:-cuda} bin=${CUVIEW_BIN_DIR:-$(dirname "$0")/../build/bin}
export XDG_RUNTIME_DIR=$(mktemp -d /tmp/cuview-embed-XXXXXX)
pid=""
trap 'kill $pid 2>/dev/null; rm -rf "$XDG_RUNTIME_DIR"' EXIT
rate() {  # steps per second over 3 s, from the program's own step counter
  local a b
  a=$("$bin/cuview-ctl" --name cost status --json | sed -n 's/.*"step": \([0-9]*\).*/\1/p')
  sleep 3
  b=$("$bin/cuview-ctl" --name cost status --json | sed -n 's/.*"step": \([0-9]*\).*/\1/p')
  echo $(((b - a) / 3))
}
measure() {  # fps, reader?
  "$bin/embed-wave" --name cost --backend "$backend" --size "$size" --fps "$1" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do "$bin/cuview-ctl" --name cost status >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  local reader=""
  [[ $2 == yes ]] && { "$bin/cuview-ctl" --name cost attach --frames 100000 --verify >/dev/null 2>&1 & reader=$!; sleep 0.5; }
  rate
  [[ -n $reader ]] && kill $reader 2>/dev/null
  "$bin/cuview-ctl" --name cost shutdown >/dev/null
  wait $pid
}
r1=$(measure 1 no); r60=$(measure 60 no); r60v=$(measure 60 yes)
echo "| embed-wave $size ($backend) | steps/s, publishing 1/s | at 60/s | at 60/s with a verifying reader |"
echo "| --- | --- | --- | --- |"
awk -v a="$r1" -v b="$r60" -v c="$r60v" 'BEGIN { printf "| | %d | %d (%+.2f %%) | %d (%+.2f %%) |\n", a, b, 100*(b-a)/a, c, 100*(c-a)/a }'
