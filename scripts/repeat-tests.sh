#!/usr/bin/env bash
# Runs the test suite N times in a row beside a busy host daemon — the README's order, where the
# daemon `./scripts/run.sh` leaves behind is still running — and beside CPU hogs (CUVIEW_HOGS,
# default 2: one per core of CI's machine, each `yes >/dev/null`), and counts the runs that failed:
# a test that asserts a rate or a duration fails here. Logs: build/repeat-tests/run-K.log. Build
# first (./scripts/build.sh).
#   scripts/repeat-tests.sh [N (default 20)] [extra ctest arguments, e.g. -E faults-short]
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
shift || true
logs=build/repeat-tests
mkdir -p "$logs"
name=repeat-busy-$$
build/bin/cuview-compute --name "$name" --backend host --size 512x512 --log-level warn >"$logs/daemon.log" 2>&1 &
daemon=$!
hogs=()
for _ in $(seq "${CUVIEW_HOGS:-2}"); do
  yes >/dev/null &
  hogs+=($!)
done
trap 'kill $daemon "${hogs[@]}" 2>/dev/null; wait $daemon "${hogs[@]}" 2>/dev/null' EXIT
echo "repeat-tests: $n runs beside daemon $name and ${#hogs[@]} CPU hog(s)"
failed=0
for k in $(seq "$n"); do
  start=$(date +%s)
  if (cd build && ctest --output-on-failure --timeout 1500 "$@") >"$logs/run-$k.log" 2>&1; then
    result=passed
  else
    result=FAILED
    failed=$((failed + 1))
  fi
  echo "run $k/$n: $result in $(($(date +%s) - start)) s ($(grep -c 'Passed' "$logs/run-$k.log") tests passed)"
done
kill -0 $daemon 2>/dev/null || { echo "repeat-tests: the busy daemon died: $(cat "$logs/daemon.log")"; failed=$((failed + 1)); }
echo "repeat-tests: $failed of $n runs failed"
((failed == 0))
