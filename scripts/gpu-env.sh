# Sourced by the GPU scripts on the GPU host: unpacks the bundle (scripts/gpu-bundle.sh) into
# /tmp/rt and sets PATH, LD_LIBRARY_PATH and friends; makes $out for the logs.
# A script sourced from one that has already sourced it (its environment exported) only gets
# the helpers below.
out=${OUT:-/tmp/cuview-gpu}
mkdir -p "$out" /tmp/rt
if [[ ${CUVIEW_BIN_DIR:-} != /tmp/rt/bin ]]; then
  tar xJf .device/runtime.txz -C /tmp/rt && . /tmp/rt/env.sh
  # The host's own Open MPI serves mpirun's ranks (same soname; its plugins match its libraries):
  # the bundled copy of the build machine's would shadow it. NCCL is the host's too (dlopen).
  rm -f /tmp/rt/lib/libmpi* /tmp/rt/lib/libopen-rte* /tmp/rt/lib/libopen-pal* /tmp/rt/lib/libpmix* \
    /tmp/rt/lib/libhwloc* /tmp/rt/lib/libevent*
fi
export CUVIEW_BIN_DIR=/tmp/rt/bin
# The Python package's libraries: the bundle's (build-gpu/ does not travel to the GPU host).
export CUVIEW_LIBRARY=/tmp/rt/lib CUVIEW_PUBLISHER_LIBRARY=/tmp/rt/lib
# NVLink multicast stays off (the device tool's KINDS.md says why).
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
# log_run NAME COMMAND...: the command's output into $logs/NAME.log ($logs: a script's own log
# directory, kept out of $out when the device tool should bring back only a few files; else $out),
# its exit code and its test totals (Catch2's, Python unittest's) as a line of $out/summary.txt,
# and the log's tail there when it failed.
log_run() {
  local name=$1; shift
  local dir=${logs:-$out}
  "$@" >"$dir/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc $(grep -E '^(All tests passed|test cases:|Ran |OK|FAILED)' "$dir/$name.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
  (( rc == 0 )) || tail -30 "$dir/$name.log" >>"$out/summary.txt"
}
# wait_for_daemon NAME: until cuview-ctl reaches daemon NAME (at most 60 s).
wait_for_daemon() {
  local _
  for _ in $(seq 300); do cuview-ctl --name "$1" status >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}
# stat_of NAME KEY: a key of run NAME's `cuview-ctl status --json` (part 0's when decomposed).
stat_of() {
  cuview-ctl --name "$1" status --json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); d=d["parts"][0] if isinstance(d,dict) and "parts" in d else (d[0] if isinstance(d,list) else d); print(d[sys.argv[1]])' "$2" 2>/dev/null
}
# wait_first_frame FILE: until `cuview-ctl attach` writing to FILE has printed its first frame (at most 60 s).
wait_first_frame() {
  local _
  for _ in $(seq 600); do grep -q "^first frame" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
# start_web_flow: the web viewer's GPU figures and screenshot (scripts/gpu-web*.sh): a CUDA lbm3d
# run 'flow' of 512³ at its default budget and a gateway with --http beside it; sets $daemon,
# $gateway and $url (the page's, as the gateway printed it).
start_web_flow() {
  cuview-compute --name flow --backend cuda --sim lbm3d --size 512x512x512 --log-level warn >"$out/daemon.log" 2>&1 &
  daemon=$!
  wait_for_daemon flow || { echo "the daemon did not start" | tee -a "$out/summary.txt"; return 1; }
  cuview-gateway --http 127.0.0.1:0 --log-level warn >"$out/gateway.out" 2>"$out/gateway.log" &
  gateway=$!
  local _
  for _ in $(seq 100); do url=$(grep -m1 '^http://' "$out/gateway.out" || true); [[ -n $url ]] && return 0; sleep 0.1; done
  echo "the gateway printed no URL" | tee -a "$out/summary.txt"
  return 1
}
