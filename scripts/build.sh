#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds cuview into build/.
#   ./scripts/build.sh [--target T]... [CMAKE_CONFIGURE_ARGS...]
# --target builds only T (and what it needs; repeatable), as run.sh does; without it, everything:
# programs, libraries, tests, benchmarks and examples. Other arguments go to CMake's configure
# step, e.g. -DCUVIEW_CUDA=OFF, or -DCMAKE_CUDA_ARCHITECTURES="80;90" (default: the GPU present,
# else Ampere's code plus PTX that any later GPU runs).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=() configure=()
while (($#)); do
  case $1 in
    --target) targets+=(--target "$2"); shift 2 ;;
    *) configure+=("$1"); shift ;;
  esac
done
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON "${configure[@]}"
cmake --build build --parallel "$(nproc)" "${targets[@]}"
