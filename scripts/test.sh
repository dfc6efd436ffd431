#!/usr/bin/env bash
# Builds cuview and runs every test: unit tests, the host backend's end-to-end tests and,
# where a GPU is usable, the CUDA backend's (reported as skipped where none is).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh "$@"
cd build
ctest --output-on-failure --timeout 1500
