#!/usr/bin/env bash
# Installs the dependencies (Debian packages) and builds cuview into build/.
# Extra arguments go to CMake's configure step, e.g. -DCUVIEW_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON "$@"
cmake --build build --parallel "$(nproc)"
