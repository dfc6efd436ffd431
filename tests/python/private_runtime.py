"""The private runtime directory each Python test class runs its daemons in, and the mpirun line
that hands it to every rank."""
import os
import shutil
import tempfile
import unittest


def private_runtime_dir():
    """A new XDG_RUNTIME_DIR (mode 0700, as the daemons require) with XDG_STATE_HOME (checkpoints)
    inside it, set for this process and the ones it starts. The caller cleans it up."""
    rt = tempfile.TemporaryDirectory()
    os.chmod(rt.name, 0o700)
    os.environ["XDG_RUNTIME_DIR"] = rt.name
    os.environ["XDG_STATE_HOME"] = os.path.join(rt.name, "state")
    return rt


class PrivateRuntimeTest(unittest.TestCase):
    """A test class whose publishers and daemons live in a runtime directory of its own (self.rt)."""

    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()

    @classmethod
    def tearDownClass(cls):
        cls.rt.cleanup()


def mpirun_argv(ranks, program, args):
    """`mpirun -n N PROGRAM ARGS` as tests/support/mpi_run.cpp makes it: --allow-run-as-root as
    root, --oversubscribe on small machines, this test's runtime directory (and on GPU hosts the
    library path and NCCL's settings) passed to every rank."""
    argv = [shutil.which("mpirun"), "--oversubscribe", "-n", str(ranks)]
    if os.geteuid() == 0:
        argv.insert(1, "--allow-run-as-root")
    for var in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "LD_LIBRARY_PATH", "CUVIEW_SHARING", "CUVIEW_HOST",
                "NCCL_NVLS_ENABLE", "NVSHMEM_DISABLE_NVLS", "CUDA_VISIBLE_DEVICES"):
        if var in os.environ:
            argv += ["-x", var]
    return argv + [program] + args


def step_paused_daemon(bin_dir, name, steps, remote=None, timeout=20):
    """Waits until the paused daemon `name` answers (through `remote` when given), then has it take
    `steps` steps and waits until it is there: a field with structure in it, then fixed."""
    import subprocess
    import time

    import cuview

    deadline = time.time() + timeout
    while True:
        try:
            cuview.attach(name, remote=remote, control_only=remote is None).close()
            break
        except cuview.CuviewError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)
    subprocess.run([f"{bin_dir}/cuview-ctl", "--name", name, "step", str(steps)], check=True, capture_output=True)
    with cuview.attach(name, control_only=True) as sim:
        while sim.status()["step"] != steps:
            if time.time() > deadline:
                raise AssertionError(f"the daemon '{name}' did not reach step {steps}")
            time.sleep(0.025)


def start_web_run(bin_dir, size, steps):
    """A paused host-backend grayscott3d daemon 'web' of `size` (WxHxD) taken `steps` steps, and a
    gateway serving the web viewer on a free loopback port: (daemon, gateway, the URL it printed)."""
    import subprocess

    daemon = subprocess.Popen([f"{bin_dir}/cuview-compute", "--name", "web", "--backend", "host", "--sim",
                               "grayscott3d", "--size", size, "--paused", "--log-level", "warn"])
    gateway = subprocess.Popen([f"{bin_dir}/cuview-gateway", "--http", "127.0.0.1:0", "--log-level", "warn"],
                               stdout=subprocess.PIPE, text=True)
    url = gateway.stdout.readline().strip()  # the URL it prints, alone on its line
    gateway.stdout.close()
    step_paused_daemon(bin_dir, "web", steps)
    return daemon, gateway, url
