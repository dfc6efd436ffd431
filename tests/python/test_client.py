"""The Python package against a real publisher: attach, zero-copy arrays equal to the frame another
process reads, steering, refusals; a run decomposed into parts under mpirun read as a group, its
assembled fields equal to the one-process run's. Backend from CUVIEW_TEST_BACKEND (host by default;
cuda uses CuPy and PyTorch where installed). Run by CTest (python-host) with PYTHONPATH=python."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import cuview
from private_runtime import PrivateRuntimeTest, mpirun_argv, private_runtime_dir

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

    def test_a_reader_of_one_field_gets_frames_holding_it_alone(self):
        with cuview.attach("py") as sim:
            with self.assertRaises(cuview.CuviewError) as e:
                sim.read_fields(["w"])
            self.assertIn("it has: u, v", str(e.exception))
            sim.read_fields(["v"])
            # Reading less publishes nothing by itself (the newest frame holds v): a change does,
            # even paused — the same value, so the run stays at step 200 for the other tests.
            name, value = next(iter(sim.status()["params"].items()))
            sim.set(**{name: value})
            deadline = time.time() + 10
            while True:
                self.assertLess(time.time(), deadline, "no frame held v alone")
                frame = sim.next_frame(timeout=1)
                if frame is None:
                    continue
                with frame as f:
                    f.verify()  # the checksum covers what the frame holds
                    f["v"]
                    try:
                        f["u"]  # a frame from before the question holds both
                    except cuview.CuviewError as e:
                        self.assertIn("does not hold 'u'", str(e))
                        break
            sim.read_fields([])  # every field again

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

    def test_a_frame_changed_on_its_gpu_fails_verify(self):
        if BACKEND == "host":
            self.skipTest("readers map a host-backend slot read-only (test_embedded.cpp changes one in C++)")
        import cupy
        rt = cupy.cuda.runtime
        with cuview.attach("py") as sim:
            frame = None
            for _ in range(5):
                frame = frame or sim.next_frame(timeout=2)
            self.assertIsNotNone(frame, "no frame in 10 s")
            with frame as f:
                f.verify()  # summed on the frame's GPU, where it lies
                at = f["v"].data + 4 * 100
                was, changed = np.zeros(1, np.uint32), np.zeros(1, np.uint32)
                rt.memcpy(was.ctypes.data, at, 4, rt.memcpyDeviceToHost)
                changed[0] = was[0] ^ 1
                rt.memcpy(at, changed.ctypes.data, 4, rt.memcpyHostToDevice)
                try:
                    with self.assertRaises(cuview.CuviewError) as e:
                        f.verify()
                    self.assertIn("checksum mismatch", str(e.exception))
                finally:
                    rt.memcpy(at, was.ctypes.data, 4, rt.memcpyHostToDevice)  # as it was, for the other tests
                f.verify()

    def test_no_publisher_is_a_clear_error(self):
        with self.assertRaises(cuview.CuviewError) as e:
            cuview.attach("nobody-here")
        self.assertEqual(e.exception.code, "no_daemon")
        self.assertIn("nobody-here", str(e.exception))


class PythonLibrary(unittest.TestCase):
    """CUVIEW_LIBRARY names the library file or the folder that holds it; a path that is not there
    is an error naming it, never silently replaced by another library."""

    def imported(self, value):
        """`import cuview` in a new interpreter with CUVIEW_LIBRARY=value: (exit status, output)."""
        env = dict(os.environ, CUVIEW_LIBRARY=value)
        r = subprocess.run([sys.executable, "-c", "import cuview._capi as c; print('loaded', c.lib._name)"], env=env,
                           capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout + r.stderr

    def test_the_library_file_or_its_folder_is_loaded(self):
        library = cuview._capi.lib._name
        for value in (library, os.path.dirname(library)):
            code, out = self.imported(value)
            self.assertEqual(code, 0, out)
            self.assertIn("loaded " + os.path.dirname(library) + "/libcuview.so", out)

    def test_a_path_that_is_not_there_is_an_error_naming_it(self):
        missing = os.path.join(os.path.dirname(cuview._capi.lib._name), "no-such-dir", "libcuview.so")
        code, out = self.imported(missing)
        self.assertNotEqual(code, 0)
        self.assertIn(f"CUVIEW_LIBRARY={missing} does not exist", out)
        self.assertIn("the folder that holds it", out)
        with tempfile.TemporaryDirectory() as empty:  # a folder that exists, without the library
            code, out = self.imported(empty)
            self.assertNotEqual(code, 0)
            self.assertIn(f"CUVIEW_LIBRARY={empty} is a folder without libcuview.so", out)


class PythonFourComponents(PrivateRuntimeTest):
    """A field of 4 components (an RGBA colour) from cuview.Publisher reaches a reader whole; one of
    5 is refused naming the field and the 1 to 4 allowed."""

    def test_an_rgba_field_is_read_back_and_five_components_are_refused(self):
        rgba = np.arange(5 * 6 * 4, dtype=np.float32).reshape(5, 6, 4)
        spec = {"shape": (5, 6, 4), "dtype": "float32", "components": 4}
        with cuview.Publisher("rgba", fields={"colour": spec}, backend="host", fps=0, max_cost=1) as pub, \
                cuview.attach("rgba") as sim:
            info = sim.description["fields"][0]
            self.assertEqual((info["components"], info["shape"]), (4, [5, 6, 4]))
            for step in range(1, 400):
                published = pub.publish(step, 0.0, {"colour": rgba})
                frame = sim.next_frame(timeout=1.0 if published else 0.01)
                if frame is not None:
                    break
            self.assertIsNotNone(frame, "no frame reached the reader")
            with frame as f:
                f.verify()
                np.testing.assert_array_equal(np.asarray(f["colour"]), rgba)
        five = {"shape": (5, 6, 5), "dtype": "float32", "components": 5}
        with self.assertRaises(cuview.CuviewError) as e:
            cuview.Publisher("five", fields={"c": five}, backend="host")
        self.assertIn("field 'c' has 5 components", str(e.exception))
        self.assertIn("1 to 4", str(e.exception))


class PythonVolume(unittest.TestCase):
    """A 3-D simulation (grayscott3d): a field is a (depth, height, width) array, zero-copy, with a C
    array's strides, equal to what another process saves of the frame."""

    def test_a_volume_is_a_3d_array_with_c_strides(self):
        rt = private_runtime_dir()
        daemon = subprocess.Popen([f"{BIN}/cuview-compute", "--name", "vol", "--backend", BACKEND, "--sim",
                                   "grayscott3d", "--size", "24x16x12", "--paused", "--log-level", "warn"])
        try:
            sim = None
            for _ in range(200):
                try:
                    sim = cuview.attach("vol")
                    break
                except cuview.CuviewError:
                    time.sleep(0.05)
            self.assertIsNotNone(sim, "grayscott3d did not start")
            with sim:
                self.assertEqual(list(sim.description["dims"]), [12, 16, 24])
                path = os.path.join(rt.name, "volume.bin")
                subprocess.run([f"{BIN}/cuview-ctl", "--name", "vol", "attach", "--frames", "1", "--save", path],
                               check=True, capture_output=True)
                desc = sim.description["fields"][0]
                raw = np.fromfile(path, dtype=np.uint8)
                expected = raw[desc["offset"]:desc["offset"] + 12 * 16 * 24 * 4].view(np.float32).reshape(12, 16, 24)
                with sim.next_frame(timeout=5) as f:
                    view = f["u"]
                    self.assertEqual(tuple(view.shape), (12, 16, 24))
                    self.assertEqual(tuple(view.strides), (16 * 24 * 4, 24 * 4, 4))
                    if BACKEND == "host":
                        a = np.asarray(view)
                        self.assertEqual(a.__array_interface__["data"][0], view.data)
                    else:
                        import cupy
                        a = cupy.asnumpy(cupy.asarray(view))
                    np.testing.assert_array_equal(a, expected)
                    self.assertLess(float(a.min()), 1.0)  # the seeded cubes are in it
        finally:
            daemon.terminate()
            daemon.wait(30)
            rt.cleanup()


class PythonGroup(unittest.TestCase):
    """`mpirun -n 2 cuview-compute --sim lbm` (two parts of 96x32) beside the same run in one process:
    stepped alike, every field the group assembles equals the whole run's, bit for bit. On CUDA one
    rank per GPU, assembled by CuPy on part 0's GPU."""
    STEP = 40
    ARGS = ["--backend", BACKEND, "--sim", "lbm", "--size", "96x64", "--paused", "--no-final-checkpoint",
            "--log-level", "warn"]

    @classmethod
    def setUpClass(cls):
        if shutil.which("mpirun") is None:
            raise unittest.SkipTest("mpirun is not installed (Debian: openmpi-bin): runs of parts are not tested here")
        if BACKEND == "cuda":
            try:
                import cupy
            except ImportError:
                raise unittest.SkipTest("CuPy is not installed: a CUDA group is assembled with CuPy")
            if cupy.cuda.runtime.getDeviceCount() < 2:
                raise unittest.SkipTest("a CUDA run of two parts takes two GPUs, one rank each")
        cls.rt = private_runtime_dir()
        cls.whole = subprocess.Popen([f"{BIN}/cuview-compute", "--name", "one"] + cls.ARGS)
        # mpirun in a process group of its own: killing the group takes every rank with it.
        cls.mpirun = subprocess.Popen(mpirun_argv(2, f"{BIN}/cuview-compute", ["--name", "g"] + cls.ARGS),
                                      start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            cls.group = cls.wait_for(lambda: cuview.attach("g", timeout=10), cls.mpirun, "mpirun -n 2")
            cls.one = cls.wait_for(lambda: cuview.attach("one"), cls.whole, "the one-process run")
            for sim in (cls.group, cls.one):
                sim.step(cls.STEP)  # the group's through part 0, which hands it to both parts
            deadline = time.time() + 60
            while time.time() < deadline:  # the steps run in batches: wait for every part
                steps = [s["step"] for s in cls.group.statuses()] + [cls.one.status()["step"]]
                if steps == [cls.STEP] * 3:
                    break
                time.sleep(0.025)
            else:
                raise AssertionError(f"the runs did not reach step {cls.STEP}: at {steps}")
        except BaseException:
            cls.tearDownClass()
            raise

    @staticmethod
    def wait_for(attach, process, what):
        deadline = time.time() + 60
        while True:
            try:
                return attach()
            except cuview.CuviewError as e:
                if process.poll() is not None:
                    out = process.stdout.read().decode() if process.stdout else ""
                    raise AssertionError(f"{what} exited ({process.returncode}) before it could be attached: {out}")
                if time.time() > deadline:
                    raise AssertionError(f"{what} could not be attached within 60 s: {e}")
                time.sleep(0.1)

    @classmethod
    def tearDownClass(cls):
        for sim in ("group", "one"):
            if hasattr(cls, sim):
                getattr(cls, sim).close()
        if hasattr(cls, "mpirun"):
            try:
                os.killpg(cls.mpirun.pid, signal.SIGTERM)
                cls.mpirun.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(cls.mpirun.pid, signal.SIGKILL)
                cls.mpirun.wait(30)
            except ProcessLookupError:
                pass
            cls.mpirun.stdout.close()
        if hasattr(cls, "whole"):
            cls.whole.terminate()
            cls.whole.wait(30)
        if hasattr(cls, "rt"):
            cls.rt.cleanup()

    @staticmethod
    def at_step(source, step):
        """The frame (or group frame) of `step` from `source`."""
        deadline = time.time() + 30
        while time.time() < deadline:
            f = source.next_frame(timeout=2)
            if f is not None and f.step == step:
                return f
            if f is not None:
                f.release()
        raise AssertionError(f"no frame of step {step} from '{source.name}'")

    @staticmethod
    def host(array):
        if BACKEND == "host":
            return np.asarray(array)
        import cupy
        return cupy.asnumpy(array)

    def whole_field(self, frame, name):
        if BACKEND == "host":
            return np.array(frame[name])
        import cupy
        with cupy.cuda.Device(frame.device):
            return cupy.asnumpy(cupy.from_dlpack(frame[name]))

    def test_attach_finds_the_parts_and_says_where_each_block_lies(self):
        g = self.group
        self.assertIsInstance(g, cuview.Group)
        self.assertTrue(g.decomposed)
        self.assertEqual(g.shape, (64, 96))
        self.assertEqual(len(g.parts), 2)
        self.assertIs(g.leader, g.parts[0])
        self.assertIsInstance(self.one, cuview.Client)  # a whole publisher attaches as before
        for k, p in enumerate(g.parts_info):
            self.assertEqual((p["index"], p["count"], p["rank"]), (k, 2, k))
            self.assertEqual((p["offset"], p["dims"], p["global_dims"]), ((32 * k, 0), (32, 96), (64, 96)))
            self.assertNotIn("width", p)  # every axis in dims, none repeated
            self.assertEqual(p["group"], g.parts_info[0]["group"])
            self.assertTrue(p["host"])
            self.assertGreater(p["pid"], 0)
            self.assertTrue(p["device"])
        self.assertNotEqual(g.parts_info[0]["pid"], g.parts_info[1]["pid"])
        self.assertEqual(g.fields, self.one.fields)
        # The run's grid is the whole one's (these name no coordinates: cell indices), not part 0's block.
        self.assertEqual(g.grid(), self.one.grid())
        self.assertEqual(g.parts[1].grid().shape, (32, 96))
        self.assertIsNone(g.gone_reason())

    def test_assembled_fields_equal_the_one_process_run_bit_for_bit(self):
        with self.at_step(self.group, self.STEP) as gf, self.at_step(self.one, self.STEP) as whole:
            gf.verify()
            self.assertEqual(len(gf.parts), 2)
            self.assertEqual([off for _, off in gf.parts], [(0, 0), (32, 0)])
            for name in self.one.fields:
                expected = self.whole_field(whole, name)
                assembled = gf.assemble(name)
                if BACKEND == "cuda":
                    import cupy
                    self.assertIsInstance(assembled, cupy.ndarray)
                    self.assertEqual(assembled.device.id, gf.parts[0][0].device)
                self.assertTrue(np.array_equal(self.host(assembled), expected), f"field {name}")
                self.assertTrue(np.array_equal(gf.assemble(name, host=True), expected), f"field {name}, host=True")
                for frame, (y0, x0) in gf.parts:  # each part's block is its slice of the whole
                    self.assertEqual(frame.step, self.STEP)
                    block = self.whole_field(frame, name)
                    np.testing.assert_array_equal(block, expected[y0:y0 + block.shape[0], x0:x0 + block.shape[1]])
                if BACKEND == "host":
                    self.assertGreater(float(np.abs(expected).max()), 0.0)
            with self.assertRaises(KeyError):
                gf.assemble("nothing")
            part, _ = gf.parts[1]
        with self.assertRaises(cuview.CuviewError):  # released with the group frame
            part["density"].__dlpack__()
        with self.assertRaises(cuview.CuviewError):
            gf.assemble("density")

    def test_steering_goes_through_part_0_and_other_parts_refuse_it(self):
        with self.assertRaises(cuview.CuviewError) as e:
            self.group.parts[1].pause()
        self.assertIn("part", str(e.exception))
        self.group.pause()  # part 0 takes it for the run
        self.assertEqual(self.group.status()["step"], self.STEP)

    def test_a_whole_publisher_attaches_as_a_group_of_one_part(self):
        # New attachments take the run's newest frame (of STEP): the other tests' stay as they are.
        with cuview.attach_group("one") as g, cuview.attach("one") as one:
            self.assertFalse(g.decomposed)
            self.assertEqual(len(g.parts), 1)
            self.assertEqual(g.shape, (64, 96))
            p = g.parts_info[0]
            self.assertEqual((p["index"], p["count"], p["rank"], p["offset"]), (0, 1, -1, (0, 0)))
            self.assertEqual(p["dims"], (64, 96))
            with self.at_step(g, self.STEP) as gf, self.at_step(one, self.STEP) as whole:
                np.testing.assert_array_equal(self.host(gf.assemble("vorticity")),
                                              self.whole_field(whole, "vorticity"))

if __name__ == "__main__":
    sys.exit(unittest.main())
