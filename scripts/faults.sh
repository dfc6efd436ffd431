#!/usr/bin/env bash
# The reliability campaign: libFuzzer runs over the message decoders (local and remote), then
# cuview-faults, which kills, stops, floods and impersonates real processes. Prints the table;
# with --out FILE also appends it there (docs/reliability.md keeps the published ones).
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
for s in viewers embedded lbm nbody frozen daemon hostile access versions remote; do
  [[ -n $only ]] && wants $s && args+=(--only $s)
done
if [[ -n $only ]] && ! wants viewers && ! wants embedded && ! wants lbm && ! wants nbody && ! wants frozen && ! wants daemon && ! wants hostile && ! wants access && ! wants versions && ! wants remote; then
  args+=(--only none)  # the fuzzer alone
fi
if wants fuzz; then

# fuzz NAME SEEDS SCENARIO SOURCES...: builds (when stale) the libFuzzer target
# tests/fuzz/fuzz_NAME.cpp over SOURCES and its seed writer tests/fuzz/SEEDS.cpp, runs it from
# those seeds and adds its row, named SCENARIO, to the table.
# libFuzzer needs clang; a prebuilt fuzzer beside the binaries (GPU hosts have no clang) is used as is.
fuzz() {
  local name=$1 seeds_source=$2 scenario=$3; shift 3
  local fuzzer=$bindir/cuview-fuzz-$name seeds=$bindir/cuview-fuzz-$name-seeds
  [[ $name == protocol ]] && seeds=$bindir/cuview-fuzz-seeds  # its name before there were two
  local flags=(-std=c++20 -O1 -g -DMSGPACK_NO_BOOST -Icommon/include "$@" common/src/error.cpp)
  if [[ ! -x $fuzzer ]] || { command -v clang++ >/dev/null &&
       [[ $(ls -t "$fuzzer" tests/fuzz/* common/include/cuview/*.hpp common/include/cuview/remote/*.hpp "$@" | head -1) != "$fuzzer" ]]; }; then
    if ! command -v clang++ >/dev/null; then
      echo "faults.sh: clang++ is needed for the fuzzer $fuzzer (scripts/install-deps.sh)" >&2
      args+=(--extra-row "$scenario|0|1|NOT RUN: no clang++ and no prebuilt $(basename "$fuzzer")")
      return
    fi
    clang++ "${flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      "tests/fuzz/fuzz_$name.cpp" -lzstd -lwebp -o "$fuzzer"
    clang++ "${flags[@]}" "tests/fuzz/$seeds_source.cpp" -lzstd -lwebp -o "$seeds"
  fi
  mkdir -p "$work/$name"
  "$seeds" "$work/$name"
  set +e
  "$fuzzer" -runs=$runs -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$name-" "$work/$name" >"$work/$name.log" 2>&1
  local rc=$?
  set -e
  local executed peak
  executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name.log" | grep -o '[0-9]*$' || echo 0)
  peak=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$work/$name.log" | grep -o '[0-9]*$' || echo "?")
  if ((rc != 0)); then
    echo "faults.sh: the fuzzer $name found a failure:" >&2; tail -30 "$work/$name.log" >&2
    mkdir -p build && cp "$work/$name"-crash-* "$work/$name"-leak-* "$work/$name"-timeout-* build/ 2>/dev/null || true
    args+=(--extra-row "$scenario|$executed|1|FAILED: see build/$name-crash-* and the log above")
  else
    args+=(--extra-row "$scenario|$executed|0|$executed inputs, no crash, leak or undefined behaviour; peak RSS ${peak} MiB")
  fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fuzz protocol make_seeds "libFuzzer over every decoder (ASan, UBSan)" common/src/protocol.cpp
fuzz remote make_remote_seeds "libFuzzer over the remote decoders and the value codec (ASan, UBSan)" \
  common/src/protocol.cpp common/src/remote/remote_protocol.cpp common/src/remote/value_codec.cpp \
  common/src/remote/picture_codec.cpp
fi

CUVIEW_BIN_DIR=$bindir "$bindir/cuview-faults" "${args[@]}"
