#!/usr/bin/env bash
# The web viewer's figures on a GPU host (docs/benchmarks.md "The web viewer"): a CUDA lbm3d run of
# 512³ at its default budget, a gateway with --http, and scripts/web-bench.py doing what the page
# does over its live connection (GPU hosts have no browser): first picture, pictures a second, bytes a
# picture and the run's cost, for a plane, MIP and emission; then the run's cost with nobody watching.
# Needs the bundle (scripts/gpu-bundle.sh) and python3-websocket's module under .device/py.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
export PYTHONPATH=$PWD/.device/py${PYTHONPATH:+:$PYTHONPATH}
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
start_web_flow || exit 1
sleep 5  # the run settles (its budget's window is 5 s)
cuview-ctl --name flow status --json >"$out/status-before.json"
for mode in plane mip emission; do
  python3 scripts/web-bench.py --url "$url" --name flow --field speed --mode "$mode" --seconds 15 | tee -a "$out/web-bench.jsonl"
done
sleep 8
cuview-ctl --name flow status --json >"$out/status-after.json"
kill $gateway $daemon; wait
