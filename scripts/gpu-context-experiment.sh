# Where a client's CUDA context time goes: cuview-ctl's first frame from a running daemon, then
# from the same daemon paused (no kernels of its own on the GPU).
for sim in lbm grayscott; do
  cuview-compute --sim $sim --backend cuda --size 8192x8192 --name ctx --no-final-checkpoint >$OUT/ctx-$sim.log 2>&1 &
  pid=$!
  for i in $(seq 100); do cuview-ctl --name ctx status >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  for i in 1 2 3; do echo "$sim running: $(cuview-ctl --name ctx attach --frames 1 | grep 'first frame')"; done
  cuview-ctl --name ctx pause >/dev/null
  sleep 0.5
  for i in 1 2 3; do echo "$sim paused: $(cuview-ctl --name ctx attach --frames 1 | grep 'first frame')"; done
  kill -TERM $pid; wait $pid
done
