#!/usr/bin/env bash
# The reliability campaign: a libFuzzer run over the message decoder, then cuview-faults, which
# kills, stops, floods and impersonates real processes. Prints the table; with --out FILE also
# appends it there (docs/reliability.md keeps the published ones).
#   scripts/faults.sh [--config short|long] [--backend host|cuda] [--out FILE] [--bin DIR]
#                     [--only fuzz,viewers,embedded,lbm,nbody,frozen,daemon,hostile,access,versions]
# short: CI (a few minutes); long: a GPU host (the issue's 200 kills, 1M+ fuzz inputs, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
config=short backend=host out="" only="" bindir=${CUVIEW_BIN_DIR:-$PWD/build/bin}
while (($#)); do
  case $1 in
    --config) config=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bin) bindir=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "faults.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
runs=300000; [[ $config == long ]] && runs=2000000
wants() { [[ -z $only || ,$only, == *,$1,* ]]; }
args=(--config "$config" --backend "$backend")
[[ -n $out ]] && args+=(--out "$out")
for s in viewers embedded lbm nbody frozen daemon hostile access versions; do
  [[ -n $only ]] && wants $s && args+=(--only $s)
done
if [[ -n $only ]] && ! wants viewers && ! wants embedded && ! wants lbm && ! wants nbody && ! wants frozen && ! wants daemon && ! wants hostile && ! wants access && ! wants versions; then
  args+=(--only none)  # the fuzzer alone
fi
if wants fuzz; then

# libFuzzer needs clang; a prebuilt fuzzer beside the binaries (GPU hosts have no clang) is used as is.
fuzzer=$bindir/cuview-fuzz-protocol seeds=$bindir/cuview-fuzz-seeds
stale() { [[ ! -x $fuzzer ]] || { command -v clang++ >/dev/null && [[ $(ls -t "$fuzzer" tests/fuzz/*.cpp common/src/protocol.cpp common/include/cuview/protocol.hpp | head -1) != "$fuzzer" ]]; }; }
if stale; then
  command -v clang++ >/dev/null || { echo "faults.sh: clang++ is needed for the fuzzer (scripts/install-deps.sh)" >&2; exit 1; }
  flags=(-std=c++20 -O1 -g -DMSGPACK_NO_BOOST -Icommon/include common/src/protocol.cpp common/src/error.cpp)
  clang++ "${flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    tests/fuzz/fuzz_protocol.cpp -o "$fuzzer"
  clang++ "${flags[@]}" tests/fuzz/make_seeds.cpp -o "$seeds"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
"$seeds" "$work/corpus"
set +e
"$fuzzer" -runs=$runs -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/corpus" >"$work/fuzz.log" 2>&1
fuzz_rc=$?
set -e
executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/fuzz.log" | grep -o '[0-9]*$' || echo 0)
peak=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$work/fuzz.log" | grep -o '[0-9]*$' || echo "?")
if ((fuzz_rc != 0)); then
  echo "faults.sh: the fuzzer found a failure:" >&2; tail -30 "$work/fuzz.log" >&2
  mkdir -p build && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* build/ 2>/dev/null || true
fi
fuzz_row="libFuzzer over every decoder (ASan, UBSan)|$executed|$((fuzz_rc != 0))|$executed inputs, no crash, leak or undefined behaviour; peak RSS ${peak} MiB"
((fuzz_rc != 0)) && fuzz_row="libFuzzer over every decoder (ASan, UBSan)|$executed|1|FAILED: see build/crash-* and the log above"
args+=(--extra-row "$fuzz_row")
fi

CUVIEW_BIN_DIR=$bindir "$bindir/cuview-faults" "${args[@]}"
