#!/usr/bin/env bash
# The built-in flows' inlet and outlet over a long run (docs/physics.md): the README's 2-D flow
# (--sim lbm --size 1600x400) and 3-D flow (--sim lbm3d --size 192x64x64) from their initial
# state, printing every tenth of the run the inlet's mean velocity against `inflow` and the mean
# density; fails when the inlet ends more than 1 % off. Runs the hidden Catch2 case
# [.flow-check] of cuview-unit-tests: from the GPU bundle where there is one (scripts/gpu-env.sh),
# else build/bin.
#   STEPS=30000 (default)  BACKEND=cuda|host (default: cuda where usable)  SIMS=lbm,lbm3d (default)
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CUVIEW_BIN_DIR:-}" ] && [ -f .device/runtime.txz ]; then . scripts/gpu-env.sh; fi
bin=${CUVIEW_BIN_DIR:-build/bin}
CUVIEW_FLOW_CHECK_STEPS=${STEPS:-30000} CUVIEW_FLOW_CHECK_BACKEND=${BACKEND:-} \
  CUVIEW_FLOW_CHECK_SIMS=${SIMS:-lbm,lbm3d} "$bin/cuview-unit-tests" "[.flow-check]"
