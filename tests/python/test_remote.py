"""The Python package attached through a cuview-gateway (remote="unix:..."): views within their
stated error bound, pinned encodings honoured, exact fetches equal to the frame a local client
reads, control calls, refusals by name. A host-backend daemon and a gateway in a private
XDG_RUNTIME_DIR. Run by CTest (python-remote) with PYTHONPATH=python."""
import math
import os
import subprocess
import sys
import time
import unittest

import numpy as np

import cuview
from private_runtime import private_runtime_dir, step_paused_daemon

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
W, H = 96, 64


class PythonRemoteClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()
        cls.daemon = subprocess.Popen([f"{BIN}/cuview-compute", "--name", "pyr", "--backend", "host", "--size",
                                       f"{W}x{H}", "--paused", "--log-level", "warn"])
        cls.gateway = subprocess.Popen([f"{BIN}/cuview-gateway", "--log-level", "warn"])
        cls.url = "unix:" + os.path.join(cls.rt.name, "cuview", ".gateway", "gateway.sock")
        step_paused_daemon(BIN, "pyr", 200, remote=cls.url)

    @classmethod
    def tearDownClass(cls):
        cls.gateway.terminate()
        cls.gateway.wait(30)
        cls.daemon.terminate()
        cls.daemon.wait(30)
        cls.rt.cleanup()

    def local_field(self, name):
        """Field `name` of the newest frame, as a local client reads it."""
        with cuview.attach("pyr") as sim:
            with sim.next_frame(timeout=2) as frame:
                return frame.step, np.array(frame[name])

    def test_a_remote_host_lists_its_publishers(self):
        listed = cuview.list(remote=self.url)
        entry = next(p for p in listed if p["name"] == "pyr")
        self.assertEqual(entry["dims"], [H, W])
        self.assertEqual(entry["backend"], "host")
        self.assertIn("pyr", [p["name"] for p in cuview.list()])  # this host's, by name

    def test_a_fetch_is_the_published_field_exactly(self):
        step, u = self.local_field("u")
        with cuview.attach("pyr", remote=self.url) as sim:
            self.assertEqual(sim.remote, self.url)
            self.assertEqual(sim.fields, ["u", "v"])
            whole = sim.fetch("u")
            self.assertEqual(whole.shape, (H, W))
            self.assertEqual(whole.dtype, np.float32)
            self.assertEqual(whole.step, step)
            np.testing.assert_array_equal(whole, u)
            part = sim.fetch("u", x=10, y=5, w=20, h=7)
            self.assertEqual((part.x, part.y), (10, 5))
            np.testing.assert_array_equal(part, u[5:12, 10:30])
            with self.assertRaises(cuview.CuviewError) as e:
                sim.fetch("u", x=90, y=0, w=20, h=1)
            self.assertEqual(e.exception.code, "out_of_range")

    def test_a_volume_is_viewed_a_plane_at_a_time_and_fetched_as_a_box(self):
        daemon = subprocess.Popen([f"{BIN}/cuview-compute", "--name", "pyv", "--backend", "host", "--sim", "grayscott3d",
                                   "--size", "24x16x12", "--paused", "--log-level", "warn"])
        try:
            deadline = time.time() + 20
            while True:
                try:
                    sim = cuview.attach("pyv", control_only=True)
                    break
                except cuview.CuviewError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.05)
            with sim:
                sim.step(30)
                while sim.status()["step"] != 30:
                    self.assertLess(time.time(), deadline, "the volume did not reach step 30")
                    time.sleep(0.025)
            with cuview.attach("pyv") as local:
                with local.next_frame(timeout=2) as frame:
                    u = np.array(frame["u"])
            self.assertEqual(u.shape, (12, 16, 24))
            with cuview.attach("pyv", remote=self.url) as sim:
                np.testing.assert_array_equal(sim.fetch("u"), u)
                box = sim.fetch("u", x=2, y=3, z=4, w=10, h=6, d=5)
                self.assertEqual(box.z, 4)
                np.testing.assert_array_equal(box, u[4:9, 3:9, 2:12])
                # The plane y = 5: columns x, rows z, one sample per cell.
                view = sim.view("u", axis="y", index=5, encoding="f32", timeout=10)
                self.assertEqual(view.shape, (12, 24))
                np.testing.assert_array_equal(view.values, u[:, 5, :])
                with sim.next_frame(timeout=10) as frame:
                    np.testing.assert_array_equal(np.array(frame["u"]), u)
                with self.assertRaises(cuview.CuviewError) as e:
                    sim.view("u", axis="w", index=0)
                self.assertIn("x, y or z", str(e.exception))
        finally:
            daemon.terminate()
            daemon.wait(30)

    def assert_view_matches(self, view, truth):
        """Every sample of `view` is its cell's true value within the view's error bound; NaN
        exactly where it shows no cell."""
        rows, cols = view.values.shape
        shown = 0
        for r in range(rows):
            for c in range(cols):
                cell = view.cell_of(r, c)
                value = view.values[r, c]
                if cell is None:
                    self.assertTrue(math.isnan(value), f"sample ({r}, {c}) outside the grid is {value}")
                    continue
                x, y = cell
                shown += 1
                self.assertLessEqual(abs(float(value) - float(truth[y, x])), view.error_bound * (1 + 1e-6) + 1e-7,
                                     f"sample ({r}, {c}) of cell ({x}, {y}), {view.encoding}")
        self.assertGreater(shown, 0)

    def test_views_in_each_pinned_encoding_are_within_their_error_bound(self):
        with cuview.attach("pyr", remote=self.url) as sim:
            truth = sim.fetch("v")
            self.assertGreater(float(truth.max()), 0.0)  # the seeds are in it, not only zeros
            bounds = {}
            for encoding in ("u8", "u16", "f32"):
                view = sim.view("v", width=48, height=40, encoding=encoding, timeout=5)
                self.assertIsNotNone(view, f"no {encoding} view within 5 s")
                self.assertEqual(view.encoding, encoding)
                self.assertEqual(view.values.shape, (40, 48))
                self.assertEqual(view.values.dtype, np.float32)
                self.assertEqual(view.step, truth.step)
                self.assert_view_matches(view, truth)
                bounds[encoding] = view.error_bound
            self.assertEqual(bounds["f32"], 0.0)
            self.assertLess(bounds["u16"], bounds["u8"])
            auto = sim.view("v", width=48, height=40, timeout=5)
            self.assertIn(auto.encoding, ("u8", "u16", "f32"))
            self.assert_view_matches(auto, truth)

    def test_a_zoomed_view_shows_nan_outside_the_grid(self):
        with cuview.attach("pyr", remote=self.url) as sim:
            truth = sim.fetch("u")
            view = sim.view("u", width=64, height=64, zoom=2, center=(0, 0), encoding="f32", timeout=5)
            self.assertTrue(np.isnan(view.values[0, 0]))  # up and left of cell (0, 0)
            self.assertFalse(np.isnan(view.values[-1, -1]))
            self.assert_view_matches(view, truth)

    def test_control_calls_work_remotely(self):
        with cuview.attach("pyr", remote=self.url) as sim:
            self.assertTrue(sim.status()["paused"])
            before = sim.status()["step"]
            sim.resume()
            try:
                self.assertFalse(sim.status()["paused"])
                deadline = time.time() + 10
                while sim.status()["step"] == before and time.time() < deadline:
                    time.sleep(0.01)
            finally:
                sim.pause()
            status = sim.status()
            self.assertTrue(status["paused"])
            self.assertGreater(status["step"], before)
            # Fixed again for the other tests: a step while paused publishes its frame.
            sim.step(1)
            self.wait_for_frame_of_step(lambda: sim.status()["step"])

    def wait_for_frame_of_step(self, step_now):
        """Waits until the newest frame is of the step the paused publisher says it is at."""
        deadline = time.time() + 10
        seen = []
        with cuview.attach("pyr") as sim:
            while time.time() < deadline:
                frame = sim.next_frame(timeout=0.1)
                if frame is not None:
                    with frame:
                        seen.append(frame.step)
                if seen and seen[-1] == step_now():
                    return
        raise AssertionError(f"the newest frame stays at step {seen[-1:]}, the publisher at {step_now()}")

    def test_steering_is_checked_remotely_by_the_publisher(self):
        with cuview.attach("pyr", remote=self.url) as sim:
            sim.set(F=0.031)
            self.assertEqual(sim.status()["params"]["F"], 0.031)
            with self.assertRaises(cuview.CuviewError) as e:
                sim.set(F=5)
            self.assertEqual(e.exception.code, "out_of_range")  # the publisher's own refusal

    def test_an_unknown_field_is_refused_naming_the_fields(self):
        with cuview.attach("pyr", remote=self.url) as sim:
            for call in (lambda: sim.view("w"), lambda: sim.fetch("w")):
                with self.assertRaises(cuview.CuviewError) as e:
                    call()
                self.assertEqual(e.exception.code, "bad_value")
                self.assertIn("'w'", str(e.exception))
                self.assertIn("u, v", str(e.exception))

    def test_a_script_written_for_a_local_publisher_runs_unchanged_remote(self):
        def script(**where):
            # Attach, take the next frame, read a field: the same lines locally and remotely.
            with cuview.attach("pyr", **where) as sim:
                with sim.next_frame(timeout=5) as frame:
                    return type(sim), frame.step, np.array(frame["u"]), np.array(frame["v"])
        local, remote = script(), script(remote=self.url)
        self.assertIs(remote[0], local[0])
        self.assertEqual(remote[1], local[1])  # the daemon is paused at one step
        np.testing.assert_array_equal(remote[2], local[2])
        np.testing.assert_array_equal(remote[3], local[3])
        with cuview.attach("pyr", control_only=True) as sim:
            with self.assertRaises(cuview.CuviewError) as e:
                sim.view("u")
            self.assertEqual(e.exception.code, "unsupported")

    def test_an_unreachable_gateway_is_a_clear_error(self):
        missing = "unix:" + os.path.join(self.rt.name, "nowhere.sock")
        with self.assertRaises(cuview.CuviewError) as e:
            cuview.attach("pyr", remote=missing, timeout=1)
        self.assertIn("nowhere.sock", str(e.exception))


def _mpirun():
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        if os.access(os.path.join(d, "mpirun"), os.X_OK):
            return os.path.join(d, "mpirun")
    return None


@unittest.skipIf(_mpirun() is None, "mpirun is not installed (Debian: openmpi-bin): no run of parts to watch")
class PythonRemoteGroup(unittest.TestCase):
    """A 2-rank run over two "hosts" (mpirun, one runtime directory and gateway each) seen through
    both gateways as one picture, equal to the picture of the same grid run by one process."""

    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()
        cls.addClassCleanup(cls.rt.cleanup)
        cls.procs = []
        cls.addClassCleanup(cls.stop_all)
        hosts = [os.path.join(cls.rt.name, h) for h in ("host-a", "host-b")]
        for h in hosts:
            os.makedirs(h, mode=0o700)
        args = ["--name", "slabs", "--backend", "host", "--sim", "lbm", "--size", "160x64", "--paused",
                "--log-level", "warn"]
        mpi = [_mpirun(), "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        for k, h in enumerate(hosts):
            if k:
                mpi.append(":")
            mpi += ["-n", "1", "/usr/bin/env", f"XDG_RUNTIME_DIR={h}", f"CUVIEW_HOST=host-{k}",
                    f"{BIN}/cuview-compute"] + args
        cls.procs.append(subprocess.Popen(mpi, start_new_session=True))
        cls.procs.append(subprocess.Popen([f"{BIN}/cuview-compute", "--name", "one", "--backend", "host", "--sim",
                                           "lbm", "--size", "160x64", "--paused", "--log-level", "warn"]))
        # A volume in two z-slabs, one per host, and the same volume run by one process.
        vol = ["--backend", "host", "--sim", "lbm3d", "--size", "24x16x12", "--paused", "--log-level", "warn"]
        mpi = [_mpirun(), "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        for k, h in enumerate(hosts):
            mpi += ([":"] if k else []) + ["-n", "1", "/usr/bin/env", f"XDG_RUNTIME_DIR={h}", f"CUVIEW_HOST=host-{k}",
                                           f"{BIN}/cuview-compute", "--name", "vol"] + vol
        cls.procs.append(subprocess.Popen(mpi, start_new_session=True))
        cls.procs.append(subprocess.Popen([f"{BIN}/cuview-compute", "--name", "vol1"] + vol))
        # And a 2-rank run on one host (the third gateway's), reached by that gateway's URL alone.
        pair = [_mpirun(), "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        pair += ["-n", "2", f"{BIN}/cuview-compute", "--name", "pair", "--backend", "host", "--sim", "lbm",
                 "--size", "96x48", "--paused", "--log-level", "warn"]
        cls.procs.append(subprocess.Popen(pair, start_new_session=True))
        cls.urls = []
        for h in hosts + [cls.rt.name]:
            cls.procs.append(subprocess.Popen([f"{BIN}/cuview-gateway", "--log-level", "warn"],
                                              env=dict(os.environ, XDG_RUNTIME_DIR=h)))
            cls.urls.append("unix:" + os.path.join(h, "cuview", ".gateway", "gateway.sock"))
        deadline = time.time() + 60
        while True:
            try:
                cls.group = cuview.attach("slabs", remote=cls.urls[:2])
                cls.one = cuview.attach("one", remote=cls.urls[2])
                cls.pair = cuview.attach("pair", remote=cls.urls[2])
                cls.vol = cuview.attach("vol", remote=cls.urls[:2])
                cls.vol1 = cuview.attach("vol1", remote=cls.urls[2])
                break
            except cuview.CuviewError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        # Both at step 300, paused: one picture to compare.
        cls.group.step(300)
        cls.one.step(300)
        cls.vol.step(20)
        cls.vol1.step(20)
        while (cls.group.status()["step"] != 300 or cls.one.status()["step"] != 300 or
               cls.vol.status()["step"] != 20 or cls.vol1.status()["step"] != 20):
            if time.time() > deadline:
                raise AssertionError("the runs did not reach step 300")
            time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        for c in (cls.group, cls.one, cls.pair, cls.vol, cls.vol1):
            c.shutdown()
            c.close()

    @classmethod
    def stop_all(cls):
        for p in reversed(cls.procs):
            if p.poll() is None:
                p.terminate()
            p.wait(30)

    def test_the_run_is_one_group_with_a_part_on_each_host(self):
        self.assertIsInstance(self.group, cuview.Group)
        self.assertTrue(self.group.decomposed)
        self.assertEqual(self.group.shape, (64, 160))
        self.assertEqual([p["host"] for p in self.group.parts_info], ["host-0", "host-1"])
        self.assertEqual([p["offset"][0] for p in self.group.parts_info], [0, 32])

    def test_its_picture_equals_the_one_process_run_exactly(self):
        for field in ("speed", "vorticity", "density"):
            a = self.group.view(field, encoding="f32", timeout=10)
            b = self.one.view(field, encoding="f32", timeout=10)
            self.assertIsNotNone(a, field)
            self.assertIsNotNone(b, field)
            self.assertEqual((a.step, a.encoding, a.error_bound), (300, "f32", 0))
            self.assertEqual(a.shape, (64, 160))
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=field)
        # Zoomed onto the border of the two parts: the same samples as the one-process run's.
        a = self.group.view("vorticity", 90, 50, zoom=3, center=(80, 32), encoding="f32", timeout=10)
        b = self.one.view("vorticity", 90, 50, zoom=3, center=(80, 32), encoding="f32", timeout=10)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))

    def test_a_volume_in_slabs_is_viewed_plane_by_plane_as_the_one_process_volume(self):
        self.assertEqual(self.vol.shape, (12, 16, 24))
        self.assertEqual([p["offset"] for p in self.vol.parts_info], [(0, 0, 0), (6, 0, 0)])
        # Planes across every axis, in either slab and across both, equal the one-process run's.
        for axis, index, shape in (("z", 2, (16, 24)), ("z", 9, (16, 24)), ("y", 7, (12, 24)), ("x", 20, (12, 16))):
            a = self.vol.view("speed", axis=axis, index=index, encoding="f32", timeout=10)
            b = self.vol1.view("speed", axis=axis, index=index, encoding="f32", timeout=10)
            self.assertIsNotNone(a, (axis, index))
            self.assertIsNotNone(b, (axis, index))
            self.assertEqual((a.step, a.error_bound, a.shape), (20, 0, shape))
            self.assertTrue(np.isfinite(np.asarray(a)).all(), (axis, index))
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=f"{axis} = {index}")
        # Zoomed onto the slabs' border in a y-plane: the same samples too.
        a = self.vol.view("vorticity", 40, 30, zoom=2, center=(12, 6), axis="y", index=3, encoding="f32", timeout=10)
        b = self.vol1.view("vorticity", 40, 30, zoom=2, center=(12, 6), axis="y", index=3, encoding="f32", timeout=10)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        # A plane past the volume is refused by name.
        with self.assertRaises(cuview.CuviewError) as e:
            self.vol.view("speed", axis="z", index=12, timeout=2)
        self.assertIn("z-plane 12", str(e.exception))

    def test_a_volume_in_slabs_is_fetched_whole(self):
        frame = self.vol.next_frame(timeout=10)
        self.assertIsNotNone(frame)
        whole = frame.assemble("velocity", host=True)
        self.assertEqual(whole.shape, (12, 16, 24, 3))
        box = self.vol1.fetch("velocity")
        np.testing.assert_array_equal(whole, box)

    def test_a_missing_gateway_is_named(self):
        for remote in (self.urls[:1], self.urls[0]):  # a list of one gateway, or its URL alone
            with self.assertRaises(cuview.CuviewError) as e:
                cuview.attach("slabs", remote=remote, timeout=2)
            self.assertEqual(e.exception.code, "no_daemon")
            self.assertIn("part 1 of 'slabs'", str(e.exception))

    def test_one_gateways_url_gives_the_run_on_its_host_as_a_group(self):
        self.assertIsInstance(self.pair, cuview.Group)
        self.assertEqual(self.pair.shape, (48, 96))
        self.assertEqual([p["offset"][0] for p in self.pair.parts_info], [0, 24])
        view = self.pair.view("density", encoding="f32", timeout=10)
        self.assertIsNotNone(view)
        self.assertEqual(view.shape, (48, 96))
        self.assertTrue(np.isfinite(np.asarray(view)).all())

    def test_a_whole_publisher_attach_of_parts_says_what_a_remote_client_does(self):
        with self.assertRaises(cuview.CuviewError) as e:
            cuview.Client("pair", "test", True, 2.0, self.urls[2])
        self.assertEqual(e.exception.code, "bad_value")
        for words in ("'pair' runs as 2 parts", "attach to it remotely as a group", "cuview_group_attach_remote",
                      "'pair/part-K'"):
            self.assertIn(words, str(e.exception))


if __name__ == "__main__":
    sys.exit(unittest.main())
