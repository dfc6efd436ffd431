#!/usr/bin/env bash
# Issue 40 on the GPU machine, in one invocation (after scripts/gpu-bundle.sh): the brick taken by
# the copy engine equals the CUDA frame's cells; the D3Q19 flow past a sphere at 512³ watched as a
# live volume by cuview-gui (a vorticity isosurface, speed through emission–absorption), local
# screenshots; `cuview-bench --sections volume` (cost, frames drawn, interaction); with two GPUs,
# the 2-rank run (z-slabs, one per GPU) seen as one volume and its frame rate; a volume through a
# gateway (its brick taken from the CUDA frame). $OUT: summary.txt, the bench's table, a few
# screenshots (the device tool brings back few files); logs in $logs.
set -u
. scripts/gpu-env.sh
logs=${LOGS:-/tmp/cuview-volume-logs}; mkdir -p "$logs"
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
gpus=$(nvidia-smi -L | wc -l)
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) × $gpus, $(nproc) CPU threads, $(date -u +%Y-%m-%dT%H:%MZ)" | tee "$out/summary.txt"
log_run volume-brick-gpu /tmp/rt/bin/cuview-integration-tests "a volume's brick*"
# cuview-gui offscreen, NAME ARGS...: the 5th frame's screenshot, and start → 5th frame.
shot() {
  local name=$1 t0; shift
  t0=$(date +%s.%N)
  QT_QPA_PLATFORM=offscreen timeout 120 /tmp/rt/bin/cuview-gui --name "$name" --frames "${FRAMES:-5}" "$@" >"$logs/gui.log" 2>&1
  echo "gui $*: rc=$? $(tail -1 "$logs/gui.log") ($(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s)" | tee -a "$out/summary.txt"
}
/tmp/rt/bin/cuview-compute --name sphere --sim lbm3d --size 512x512x512 --no-final-checkpoint --log-level warn \
  >"$logs/sphere.log" 2>&1 &
daemon=$!
wait_for_daemon sphere
sleep ${SPHERE_WARM_S:-90}  # the wake: the inflow (0.05 cells a step) crosses 512 cells in ~10 000 steps
/tmp/rt/bin/cuview-ctl --name sphere status | tee -a "$out/summary.txt"
for level in ${LEVELS-0.01 0.02}; do
  shot sphere --field vorticity --volume isosurface --level $level --camera 35,25 --screenshot "$out/sphere-vorticity-$level.png"
done
if [[ -z ${SKIP_SHOTS:-} ]]; then
  shot sphere --field speed --volume emission --opacity peak --camera 35,25 --screenshot "$out/sphere-speed-peak.png"
  FRAMES=30 shot sphere --field speed --volume mip --camera 35,25 --screenshot "$logs/sphere-mip-30.png"
fi
# Data frames at 512³: the volume view takes frames of its brick's cells only (Client::read_every),
# which the flow then writes alone; a frame can only follow a batch (steps_per_frame steps). The
# run's own status (rate, cost, what limits) is read while the viewer draws.
for spf in ${RATE_SPF-16 2}; do
  /tmp/rt/bin/cuview-ctl --name sphere set steps_per_frame=$spf >/dev/null
  for view in "speed --volume emission --opacity peak" "speed --volume mip" "vorticity --volume isosurface --level 0.01"; do
    (sleep ${RATE_STATUS_S:-4}; /tmp/rt/bin/cuview-ctl --name sphere status | grep -E "frames|cost" | sed "s/^/  [spf $spf] /" \
      >>"$out/summary.txt") &
    status=$!
    FRAMES=${RATE_FRAMES:-150} shot sphere --field $view --camera 35,25 --screenshot "$logs/rate-$spf.png"
    wait $status  # (not the daemon)
  done
done
/tmp/rt/bin/cuview-ctl --name sphere set steps_per_frame=16 >/dev/null
# Through a gateway on this host: the brick taken from the CUDA frame by the gateway, fitted to the link.
[[ -z ${SKIP_GATEWAY:-} ]] && {
/tmp/rt/bin/cuview-gateway --log-level warn >"$logs/gateway.log" 2>&1 &
gw=$!
sleep 1
shot sphere --remote "unix:$XDG_RUNTIME_DIR/cuview/.gateway/gateway.sock" --field vorticity --volume isosurface \
  --level 0.01 --camera 35,25 --screenshot-window --screenshot "$out/remote-window.png"
kill $gw; wait $gw 2>/dev/null
}
# Through ssh, as the issue's "done when" asks: `cuview-gui --remote ssh://HOST`, ssh going to a real
# sshd on loopback with throw-away keys (cuview-test-sshd, CUVIEW_SSH_COMMAND). The GPU hosts have no
# OpenSSH: the bundle carries Debian's (scripts/gpu-bundle.sh); sshd run as root wants its
# privilege-separation user.
if [[ -z ${SKIP_SSH:-} ]]; then
  if (( $(id -u) == 0 )) && ! getent passwd sshd >/dev/null; then
    useradd --system --no-create-home --home-dir /run/sshd --shell /usr/sbin/nologin sshd 2>>"$logs/sshd.log" ||
      echo "sshd:x:64999:65534::/run/sshd:/usr/sbin/nologin" >>/etc/passwd
  fi
  coproc SSHD { exec /tmp/rt/bin/cuview-test-sshd 2>>"$logs/sshd.log"; }
  if read -r -t 30 -u "${SSHD[0]}" ssh_command; then
    export CUVIEW_SSH_COMMAND=$ssh_command
    /tmp/rt/bin/cuview-ctl --name sphere set steps_per_frame=${SSH_SPF:-2} >/dev/null
    shot sphere --remote ssh://cuview-test-host --field vorticity --volume isosurface --level 0.01 --camera 35,25 \
      --screenshot-window --screenshot "$out/ssh-window.png"
    # The run's own status while the remote viewer draws: its rate and cost with the gateway reading.
    (sleep ${RATE_STATUS_S:-4}; /tmp/rt/bin/cuview-ctl --name sphere status | grep -E "frames|cost" | sed "s/^/  [ssh] /" \
      >>"$out/summary.txt") &
    status=$!
    FRAMES=${SSH_FRAMES:-150} shot sphere --remote ssh://cuview-test-host --field speed --volume emission --opacity peak \
      --camera 35,25 --screenshot "$logs/ssh-speed.png"
    wait $status
    /tmp/rt/bin/cuview-ctl --name sphere set steps_per_frame=16 >/dev/null
    unset CUVIEW_SSH_COMMAND
  else
    echo "ssh: the test sshd did not start: $(tail -3 "$logs/sshd.log")" | tee -a "$out/summary.txt"
  fi
  [[ -f $XDG_RUNTIME_DIR/cuview/.gateway/pid ]] && kill "$(cat "$XDG_RUNTIME_DIR/cuview/.gateway/pid")" 2>/dev/null
  [[ -n ${SSHD_PID-} ]] && { exec {SSHD[1]}>&-; wait "$SSHD_PID" 2>/dev/null; }
fi
/tmp/rt/bin/cuview-ctl --name sphere shutdown >/dev/null; wait $daemon
if [[ -z ${SKIP_BENCH:-} ]]; then
  /tmp/rt/bin/cuview-bench --sections volume --backends cuda --publish-pairs ${PAIRS:-3} --window 3 \
    >"$out/bench-volume.md" 2>"$logs/bench-volume.log"
  echo "bench-volume: rc=$?" | tee -a "$out/summary.txt"
fi
if [[ -z ${SKIP_REMOTE:-} ]] && ! command -v ip >/dev/null; then
  # No iproute2 here (no tc links): bricks through a gateway over loopback, unshaped.
  /tmp/rt/bin/cuview-bench --sections remote --link-label unlimited --remote-backend cuda --out "$out/bench-remote.md" \
    --remote-fields 'lbm3d/speed (brick)' --remote-seconds 4 --remote-viewers 1 --no-pinned >"$logs/bench-remote.log" 2>&1
  echo "bench-remote (loopback, no tc here): rc=$?" | tee -a "$out/summary.txt"
elif [[ -z ${SKIP_REMOTE:-} ]]; then  # bricks through a gateway over 1 Gbit/s and 100 Mbit/s (network namespaces, tc tbf)
  OUT=$out/bench-remote.md timeout 300 scripts/bench-remote.sh /tmp/rt --remote-backend cuda \
    --remote-fields 'lbm3d/speed (brick)' --remote-seconds 4 --remote-viewers 1 --no-pinned >"$logs/bench-remote.log" 2>&1
  rc=$?
  echo "bench-remote: rc=$rc $(tail -1 "$logs/bench-remote.log")" | tee -a "$out/summary.txt"
  (( rc == 0 )) || tail -8 "$logs/bench-remote.log" >>"$out/summary.txt"
fi
if (( gpus >= 2 )) && [[ -z ${SKIP_PARTS:-} ]]; then
  setsid mpirun --allow-run-as-root -n 2 -x LD_LIBRARY_PATH -x XDG_RUNTIME_DIR -x NCCL_NVLS_ENABLE \
    /tmp/rt/bin/cuview-compute --sim lbm3d --size 512x512x1024 --name parts --no-final-checkpoint >"$logs/parts.log" 2>&1 &
  run=$!
  wait_for_daemon parts
  sleep ${WARM_S:-20}
  shot parts --field vorticity --volume isosurface --level 0.01 --camera 35,25 --screenshot "$out/parts-vorticity.png"
  FRAMES=30 shot parts --field speed --volume mip --camera 35,25 --screenshot "$logs/parts-mip-30.png"
  /tmp/rt/bin/cuview-ctl --name parts shutdown >/dev/null; wait $run
fi
echo "===== summary"; cat "$out/summary.txt"
