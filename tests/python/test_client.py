"""The Python package against a real publisher: attach, zero-copy arrays equal to the frame another
process reads, steering, refusals. Backend from CUVIEW_TEST_BACKEND (host by default; cuda uses CuPy
and PyTorch where installed). Run by CTest (python-host) with PYTHONPATH=python."""
import os
import subprocess
import sys
import time
import unittest

import numpy as np

import cuview
from private_runtime import private_runtime_dir

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
BACKEND = os.environ.get("CUVIEW_TEST_BACKEND", "host")


class PythonClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()
        cls.daemon = subprocess.Popen([f"{BIN}/cuview-compute", "--name", "py", "--backend", BACKEND, "--size",
                                       "96x64", "--paused", "--log-level", "warn"])
        for _ in range(200):
            try:
                cuview.attach("py", control_only=True).close()
                break
            except cuview.CuviewError:
                time.sleep(0.05)
        subprocess.run([f"{BIN}/cuview-ctl", "--name", "py", "step", "200"], check=True)
        with cuview.attach("py", control_only=True) as sim:  # the steps run in batches: wait for all
            for _ in range(400):
                if sim.status()["step"] == 200:
                    break
                time.sleep(0.025)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.terminate()
        cls.daemon.wait(30)
        cls.rt.cleanup()

    def saved_field(self, sim, name):
        """Field `name` of the current frame as cuview-ctl (another process) saves it."""
        path = os.path.join(self.rt.name, "frame.bin")
        subprocess.run([f"{BIN}/cuview-ctl", "--name", "py", "attach", "--frames", "1", "--save", path], check=True,
                       capture_output=True)
        desc = next(f for f in sim.description["fields"] if f["name"] == name)
        raw = np.fromfile(path, dtype=np.uint8)
        return raw[desc["offset"]:desc["offset"] + 96 * 64 * 4].view(np.float32).reshape(64, 96)

    def test_frames_are_zero_copy_views_of_the_published_field(self):
        with cuview.attach("py") as sim:
            self.assertEqual(sim.backend, BACKEND)
            # the mechanism CUVIEW_SHARING asked the daemon for (scripts/gpu-check.sh runs each)
            expected = "shm" if BACKEND == "host" else (os.environ.get("CUVIEW_SHARING") or "legacy")
            self.assertEqual(sim.sharing, expected)
            self.assertEqual(sim.status()["sharing"], expected)
            self.assertEqual(sim.fields, ["u", "v"])
            deadline = time.time() + 10
            while sim.status()["step"] != 200 and time.time() < deadline:
                time.sleep(0.02)
            expected = self.saved_field(sim, "v")
            frame = None
            while frame is None or frame.step != 200:
                frame = sim.next_frame(timeout=2)
            with frame as f:
                f.verify()
                view = f["v"]
                if BACKEND == "host":
                    a = np.asarray(view)
                    self.assertFalse(a.flags.writeable)
                    self.assertEqual(a.__array_interface__["data"][0], view.data)  # the shared memory itself
                    np.testing.assert_array_equal(a, expected)
                    np.testing.assert_array_equal(np.from_dlpack(view), expected)
                else:
                    import cupy
                    a = cupy.asarray(view)
                    self.assertEqual(a.data.ptr, view.data)  # the frame's GPU memory itself
                    np.testing.assert_array_equal(cupy.asnumpy(a), expected)
                    import torch  # both are on the GPU hosts; a missing one fails, never skips
                    t = torch.from_dlpack(view)
                    self.assertEqual(t.data_ptr(), view.data)
                    np.testing.assert_array_equal(t.cpu().numpy(), expected)
                self.assertGreater(float(expected.max()), 0.0)  # the seeds are in it, not only zeros
            with self.assertRaises(cuview.CuviewError):
                f["v"].__dlpack__()  # released: the slot may be written again

    def test_the_example_script_summarises_live_frames(self):
        subprocess.run([f"{BIN}/cuview-ctl", "--name", "py", "resume"], check=True, capture_output=True)
        try:
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python",
                                  "field_statistics.py")
            out = subprocess.run([sys.executable, script, "--name", "py", "--field", "u", "--frames", "3"], check=True,
                                 capture_output=True, text=True, timeout=120).stdout
        finally:
            subprocess.run([f"{BIN}/cuview-ctl", "--name", "py", "pause"], check=True, capture_output=True)
        lines = out.splitlines()
        self.assertIn(f"on {BACKEND}", lines[0])
        stats = [l for l in lines if l.startswith("step")]
        self.assertEqual(len(stats), 3)
        mean = float(stats[0].split("mean")[1].split()[0])
        self.assertGreater(mean, 0.0)  # Gray-Scott's u lies in (0, 1]
        self.assertLessEqual(mean, 1.0)
        steps = [int(l.split()[1]) for l in stats]
        self.assertEqual(steps, sorted(set(steps)))  # three different frames, in order

    def test_a_checkpoint_opens_in_h5py_with_the_published_state(self):
        with cuview.attach("py", control_only=True) as sim:
            path, step = sim.checkpoint()
            self.assertEqual(step, sim.status()["step"])
            self.assertTrue(path.endswith("step-%012d.h5" % step), path)
            u_published = self.saved_field(sim, "u")
        try:
            import h5py
        except ImportError:
            self.skipTest("h5py is not installed here (scripts/install-deps.sh installs python3-h5py)")
        with h5py.File(path) as f:  # the three lines of docs/checkpoints.md
            u = f["checkpoint/state/u"][...]
            self.assertEqual(f["checkpoint"].attrs["simulation"], b"grayscott")
            self.assertEqual(int(f["checkpoint"].attrs["step"]), step)
        np.testing.assert_array_equal(u, u_published)

    def test_drawing_into_a_simulation_without_inputs_is_refused_by_name(self):
        with cuview.attach("py", control_only=True) as sim:
            self.assertEqual(sim.description["inputs"], [])
            with self.assertRaises(cuview.CuviewError) as e:
                sim.draw("obstacles", 10, 10)
            self.assertEqual(e.exception.code, "bad_value")
            self.assertIn("takes no drawing", str(e.exception))

    def test_steering_is_checked_and_seen_by_status(self):
        with cuview.attach("py", control_only=True) as sim:
            sim.set(F=0.031)
            self.assertEqual(sim.status()["params"]["F"], 0.031)
            with self.assertRaises(cuview.CuviewError) as e:
                sim.set(F=5)
            self.assertEqual(e.exception.code, "out_of_range")
            self.assertIn("F=5 is out of range", str(e.exception))

    def test_the_callers_current_gpu_is_the_same_after_every_call(self):
        if BACKEND == "host":
            self.skipTest("the current GPU is a CUDA matter (CUVIEW_TEST_BACKEND=cuda runs this)")
        import cupy
        import torch  # both are on the GPU hosts; a missing one fails, never skips
        mine = cupy.cuda.runtime.getDeviceCount() - 1  # GPU 1 of two; the daemon runs on GPU 0
        cupy.cuda.Device(mine).use()
        torch.cuda.set_device(mine)
        held = torch.zeros(4, device="cuda")  # this process has a context on its GPU, as a user's does

        def unmoved(after):
            self.assertEqual(cupy.cuda.runtime.getDevice(), mine, f"CuPy's current GPU after {after}")
            self.assertEqual(torch.cuda.current_device(), mine, f"PyTorch's current GPU after {after}")
            self.assertEqual(torch.zeros(1, device="cuda").device.index, mine, f"a new tensor after {after}")

        with cuview.attach("py") as sim:
            unmoved("attach")
            frame = sim.next_frame(timeout=2)
            unmoved("next_frame")
            with frame as f:
                f.verify()
                unmoved("verify")
                v = cupy.from_dlpack(f["v"])  # DLPack names the frame's GPU; __cuda_array_interface__ cannot
                self.assertEqual(v.device.id, f.device)  # the frame stays where the daemon published it
                with cupy.cuda.Device(f.device):  # CuPy runs kernels on the current GPU: the frame's, here
                    self.assertGreater(float(v.max()), 0.0)
                unmoved("cupy.from_dlpack")
            unmoved("release")
        unmoved("detach")
        self.assertEqual(held.device.index, mine)

    def test_no_publisher_is_a_clear_error(self):
        with self.assertRaises(cuview.CuviewError) as e:
            cuview.attach("nobody-here")
        self.assertEqual(e.exception.code, "no_daemon")
        self.assertIn("nobody-here", str(e.exception))


if __name__ == "__main__":
    sys.exit(unittest.main())
