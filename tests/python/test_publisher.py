"""cuview.Publisher: a Python program's arrays published to viewers. A 3-D field's element
[z, y, x] is what readers (this process and cuview-ctl, another) see at cell (x, y, z); steering
arrives as plain values; refusals name the field and what to do. Backend from CUVIEW_TEST_BACKEND
(host: NumPy, in CI; cuda: CuPy and PyTorch arrays, each sharing mechanism through CUVIEW_SHARING,
copied on the GPU with no host round trip, and the caller's GPU left as it was). Run by CTest
(python-publisher) with PYTHONPATH=python."""
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import unittest

import numpy as np

import cuview
from private_runtime import PrivateRuntimeTest

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
BACKEND = os.environ.get("CUVIEW_TEST_BACKEND", "host")
SHARING = os.environ.get("CUVIEW_SHARING") or "auto"
D, H, W = 4, 5, 6


def volume(sign=1.0):
    z, y, x = np.meshgrid(np.arange(D), np.arange(H), np.arange(W), indexing="ij")
    return (sign * (100 * z + 10 * y + x)).astype(np.float32)


def with_halo(interior, halo, ghost=-7):
    """An array of `interior`'s dtype `halo` cells larger on every side, its ghost cells `ghost`,
    and the view of its interior (a[h:-h, h:-h, h:-h]), which holds `interior`'s values."""
    padded = np.full(tuple(n + 2 * halo for n in interior.shape), ghost, dtype=interior.dtype)
    inside = padded[(slice(halo, -halo),) * interior.ndim]
    inside[...] = interior
    return padded, inside


def exact64():
    """A float64 volume no float32 holds (a third in every cell) and an int64 one beyond 2^53."""
    return volume().astype(np.float64) + 1 / 3, 2 ** 62 + volume().astype(np.int64) * 1001


def first_frame(pub, sim, arrays, step=0):
    """Publishes (a new step each call) until `sim` has a frame; returns it and the step."""
    for _ in range(400):
        step += 1
        published = pub.publish(step, 0.5 * step, arrays)
        frame = sim.next_frame(timeout=1.0 if published else 0.01)
        if frame is not None:
            return frame, step
    raise AssertionError("no frame reached the reader")


def read_elsewhere(pub, arrays, rt, stream=None, step=0, dtype=np.float32):
    """Field 0 of one frame of `pub` (of `dtype`) as cuview-ctl, another process, saves it (CUDA
    IPC opens only in another process) while this one publishes `arrays`, a new step each call."""
    path = os.path.join(rt, f"{pub.name}.bin")
    if os.path.exists(path):
        os.unlink(path)
    reader = subprocess.Popen([f"{BIN}/cuview-ctl", "--name", pub.name, "attach", "--frames", "1", "--save", path,
                               "--verify"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while reader.poll() is None:
        if time.time() > deadline:
            reader.kill()
            raise AssertionError("cuview-ctl never got a frame")
        step += 1
        pub.publish(step, 0.5 * step, arrays, stream=stream)
        time.sleep(0.005)
    out = reader.stdout.read()
    assert reader.returncode == 0, out
    assert "1 verified intact" in out, out
    return np.fromfile(path, dtype=dtype)[:D * H * W].reshape(D, H, W), step


class PublisherTest(PrivateRuntimeTest):

    def publisher(self, name, fields, **kw):
        kw.setdefault("fps", 0)
        kw.setdefault("max_cost", 1)
        return cuview.Publisher(name, fields=fields, backend=BACKEND, sharing=SHARING, **kw)

    def test_a_numpy_volume_reaches_readers_cell_for_cell(self):
        T = volume()
        with self.publisher("vol", {"T": T}, params={"alpha": (0.1, 0, 1)}, title="python test") as pub, \
                cuview.attach("vol", control_only=True) as sim:
            self.assertEqual(pub.backend, BACKEND)
            info = sim.description["fields"][0]
            self.assertEqual((info["name"], info["dtype"], info["shape"][:3]), ("T", "float32", [D, H, W]))
            got, step = read_elsewhere(pub, {"T": T}, self.rt.name)
            np.testing.assert_array_equal(got, T)
            self.assertEqual(float(got[3, 4, 5]), 345.0)  # cell x=5, y=4, z=3
            # A sequence in the fields' order does the same.
            U = volume(-1.0)
            got, _ = read_elsewhere(pub, [U], self.rt.name, step=step)
            np.testing.assert_array_equal(got, U)
        if BACKEND == "host":  # and a reader in this process (CUDA IPC opens only in another)
            with self.publisher("vol", {"T": T}) as pub, cuview.attach("vol") as sim:
                frame, step = first_frame(pub, sim, {"T": T})
                with frame as f:
                    f.verify()
                    self.assertEqual((f.step, f.time), (step, 0.5 * step))
                    np.testing.assert_array_equal(np.asarray(f["T"]), T)

    def test_steering_arrives_as_plain_values(self):
        T = volume()
        with self.publisher("steer", {"T": T}, params={"alpha": (0.1, 0, 1), "n": {"value": 2, "min": 0, "max": 9,
                                                                                     "integer": True}},
                            presets={"hot": {"alpha": 0.9, "n": 5}}, inputs=["heat"]) as pub, \
                cuview.attach("steer", control_only=True) as sim:
            self.assertEqual(pub.params, {"alpha": 0.9, "n": 5.0})  # the first preset is where a run starts
            sim.set(alpha=0.5)
            sim.reset()
            sim.draw("heat", 2, 3, radius=1.5, z=1)
            s = pub.poll()
            self.assertEqual(s.params, {"alpha": 0.5, "n": 5.0})
            self.assertTrue(s.reset)
            self.assertEqual(s.strokes, [{"input": "heat", "x": 2.0, "y": 3.0, "z": 1.0, "radius": 1.5, "value": 1}])
            self.assertFalse(s.shutdown)
            self.assertEqual(pub.params["alpha"], 0.5)
            sim.set(n=1)
            sim.set(preset="hot")
            self.assertEqual(pub.poll().params, {"alpha": 0.9, "n": 5.0})
            again = pub.poll()
            self.assertEqual((again.params, again.reset, again.strokes), ({}, False, []))
            sim.pause()
            pub.poll()
            self.assertTrue(pub.paused)
            self.assertEqual(pub.steps_allowed(8), 0)
            sim.step(3)
            pub.wait(2.0)
            pub.poll()
            self.assertEqual(pub.steps_allowed(8), 3)
            # A checkpoint asked for by a viewer, answered by the program.
            pub.enable_checkpoints(self.rt.name)
            answer = {}
            asker = threading.Thread(target=lambda: answer.update(r=sim.checkpoint("/tmp/py-pub.h5", timeout=20)))
            asker.start()
            for _ in range(400):
                pub.wait(0.05)
                asked = pub.poll().checkpoints
                if asked:
                    break
            self.assertEqual(len(asked), 1)
            ticket, path = asked[0]
            self.assertEqual(path, "/tmp/py-pub.h5")
            pub.checkpoint_written(ticket, path, 7, 1.5, 1024)
            asker.join(30)
            self.assertEqual(answer.get("r"), ("/tmp/py-pub.h5", 7))
            sim.shutdown()
            self.assertTrue(pub.poll().shutdown)

    def test_refusals_name_the_field_and_what_to_do(self):
        T = volume()
        with self.assertRaises(cuview.CuviewError) as e:
            self.publisher("bad", {"T": T}, fps="fast")
        self.assertIn("fps", str(e.exception))
        with self.assertRaises(cuview.CuviewError) as e:
            self.publisher("bad", {"T": {"shape": (2, 2, 2, 2)}})
        self.assertIn("4 axes", str(e.exception))
        with self.assertRaises(cuview.CuviewError) as e:
            self.publisher("bad", {"T": {"shape": (4, 4), "dtype": "complex64"}})
        self.assertIn("'complex64' is not a dtype; use float32, float16, int32, uint8, float64, int64 or bfloat16",
                      str(e.exception))
        with self.assertRaises(cuview.CuviewError) as e:
            self.publisher("bad", {"T": T}, params={"alpha": (2, 0, 1)})
        self.assertIn("alpha", str(e.exception))
        with self.publisher("bad", {"T": T, "S": {"shape": (D, H, W)}}) as pub:
            for arrays, words in [
                ({"T": T}, "no array for S"),
                ({"T": T, "S": T, "Q": T}, "Q is not a field"),
                ([T], "1 arrays for 2 fields"),
                ({"T": T.astype(np.float64), "S": T}, "field 'T': the array is float64"),
                ({"T": T[:, :, :3], "S": T}, "field 'T': the array is float32 (4, 5, 3)"),
                ({"T": np.asfortranarray(T), "S": T}, "not contiguous"),
                ({"T": [1, 2], "S": T}, "list is not an array"),
            ]:
                with self.assertRaises((cuview.CuviewError, TypeError), msg=words) as e:
                    pub.publish(1, 0.0, arrays)
                self.assertIn(words, str(e.exception))
            with self.assertRaises(KeyError):
                pub.params["beta"]
        self.assertIn("closed", str(self.closed_publish(pub)))

    @unittest.skipUnless(BACKEND == "host", "a reader in this process: host memory (GpuArrays: CuPy on CUDA)")
    def test_float64_and_int64_volumes_with_ghost_cells_are_read_in_place_cell_for_cell(self):
        T, N = exact64()
        for halo in (1, 2):
            with self.subTest(halo=halo):
                padded_t, inside_t = with_halo(T, halo)
                padded_n, inside_n = with_halo(N, halo)
                self.assertFalse(inside_t.flags.c_contiguous)  # the program's own array, not a copy
                with self.publisher(f"halo{halo}", {"T": inside_t, "N": inside_n}) as pub, \
                        cuview.attach(f"halo{halo}") as sim:
                    fields = {f["name"]: (f["dtype"], f["shape"]) for f in sim.description["fields"]}
                    self.assertEqual(fields, {"T": ("float64", [D, H, W]), "N": ("int64", [D, H, W])})
                    frame, step = first_frame(pub, sim, {"T": inside_t, "N": inside_n})
                    with frame as f:
                        got_t, got_n = np.asarray(f["T"]), np.asarray(f["N"])
                        self.assertEqual((got_t.dtype, got_n.dtype), (np.float64, np.int64))
                        np.testing.assert_array_equal(got_t, T)  # exact: no float32 on the way
                        np.testing.assert_array_equal(got_n, N)
                        self.assertEqual(int(got_n[3, 4, 5]), 2 ** 62 + 345 * 1001)  # cell x=5, y=4, z=3
                        np.testing.assert_array_equal(np.from_dlpack(f["T"]), T)
                    # The next step, written into the same array by the program, is what readers see.
                    inside_t *= -2
                    inside_n -= 5
                    frame, _ = first_frame(pub, sim, {"T": inside_t, "N": inside_n}, step)
                    with frame as f:
                        np.testing.assert_array_equal(np.asarray(f["T"]), -2 * T)
                        np.testing.assert_array_equal(np.asarray(f["N"]), N - 5)
                    self.assertTrue((padded_t[:halo] == -7).all())  # the ghost cells untouched

    def test_the_grids_coordinates_reach_readers(self):
        T = volume()
        grid = cuview.Grid(origin=(0.0, -1.0, -2.5), spacing=(0.5, 0.25, 0.125), units="m")
        with self.publisher("coords", {"T": T}, grid=grid) as pub, \
                cuview.attach("coords", control_only=True) as sim:
            g = sim.grid("T")
            self.assertEqual((g.name, g.shape, g.origin, g.spacing, g.units, g.axes),
                             ("grid", (D, H, W), (0.0, -1.0, -2.5), (0.5, 0.25, 0.125), "m", ("z", "y", "x")))
            self.assertEqual(sim.description["grids"][0]["spacing"], [0.5, 0.25, 0.125])
            self.assertEqual(sim.grids, {"grid": g})
            self.assertEqual(pub.grid, g)
            z, y, x = g.coordinates()
            self.assertEqual((z[3], y[4], x[5]), (1.5, 0.0, -1.875))  # the centre of cell x=5, y=4, z=3
        if BACKEND == "host":
            with self.publisher("coords", {"T": T}, grid=cuview.Grid(spacing=0.1, units="km")) as pub, \
                    cuview.attach("coords") as sim:
                frame, _ = first_frame(pub, sim, {"T": T})
                with frame as f:
                    self.assertEqual(f.grid("T").spacing, (0.1, 0.1, 0.1))  # one number: every axis
                    self.assertEqual(f["T"].grid, f.grid("T"))
                    self.assertEqual((f.grid().origin, f.grid().units), ((0.0, 0.0, 0.0), "km"))
        with self.publisher("cells", {"T": T}) as pub, cuview.attach("cells", control_only=True) as sim:
            g = sim.grid()  # no grid given: cell indices
            self.assertEqual((g.shape, g.origin, g.spacing, g.units), ((D, H, W), (0.0,) * 3, (1.0,) * 3, ""))

    def test_fields_on_several_grids_keep_their_own_shapes_and_coordinates(self):
        T = volume().astype(np.float64) + 1 / 3
        _, inside = with_halo(T, 1)
        S = np.arange(H * W, dtype=np.float32).reshape(H, W) - 7
        P = 2 ** 40 + np.arange(10, dtype=np.int64)
        grids = [cuview.Grid(name="volume", spacing=(2.0, 1.0, 1.0), units="mm"),
                 cuview.Grid(name="surface", origin=(0.0, 10.0), units="mm"),
                 cuview.Grid(name="probe", spacing=0.5, units="mm")]
        arrays = {"T": inside, "S": S, "P": P}
        with self.publisher("grids", arrays, grid=grids) as pub, \
                cuview.attach("grids", control_only=True) as sim:
            self.assertEqual(list(sim.grids), ["volume", "surface", "probe"])
            self.assertEqual(list(pub.grids), ["volume", "surface", "probe"])
            self.assertEqual([f["grid"] for f in sim.description["fields"]], ["volume", "surface", "probe"])
            self.assertEqual([f["shape"] for f in sim.description["fields"]], [[D, H, W], [H, W], [10]])
            self.assertEqual((sim.grid("S").shape, sim.grid("S").origin), ((H, W), (0.0, 10.0)))
            self.assertEqual((sim.grid("P").shape, sim.grid("P").spacing), ((10,), (0.5,)))
            self.assertEqual(sim.description["dims"], [D, H, W])  # the run's own grid: the first
        if BACKEND == "host":  # each field read back on its own grid, exact
            with self.publisher("grids", arrays, grid=grids) as pub, cuview.attach("grids") as sim:
                frame, _ = first_frame(pub, sim, arrays)
                with frame as f:
                    np.testing.assert_array_equal(np.asarray(f["T"]), T)
                    np.testing.assert_array_equal(np.asarray(f["S"]), S)
                    np.testing.assert_array_equal(np.asarray(f["P"]), P)
                    self.assertEqual((f["S"].shape, f["P"].shape), ((H, W), (10,)))
                    self.assertEqual(f["P"].grid.name, "probe")
        # With no grid given, fields of several shapes lie on grids of their own, in cell indices.
        with self.publisher("shapes", {"T": volume(), "S": S}) as pub, \
                cuview.attach("shapes", control_only=True) as sim:
            self.assertEqual({n: g.shape for n, g in sim.grids.items()}, {"grid": (D, H, W), "grid2": (H, W)})
            self.assertEqual(sim.grid("S").spacing, (1.0, 1.0))

    def test_a_pytorch_bfloat16_tensor_is_published_as_it_is(self):
        try:
            import torch
        except ImportError:
            self.skipTest("PyTorch is not installed (the GPU hosts have it)")
        device = "cuda" if BACKEND == "cuda" else "cpu"
        T = (torch.arange(D * H * W, dtype=torch.float32, device=device).reshape(D, H, W) - 60.5).to(torch.bfloat16)
        bits = T.view(torch.int16).cpu().numpy().view(np.uint16)
        with self.publisher("bf16", {"T": T}) as pub, cuview.attach("bf16", control_only=True) as sim:
            self.assertEqual(sim.description["fields"][0]["dtype"], "bfloat16")
            got, _ = read_elsewhere(pub, {"T": T}, self.rt.name, dtype=np.uint16)
            np.testing.assert_array_equal(got, bits)  # bit for bit, read by cuview-ctl in another process
        if BACKEND == "host":  # and a reader in this process, through DLPack
            with self.publisher("bf16", {"T": T}) as pub, cuview.attach("bf16") as sim:
                frame, _ = first_frame(pub, sim, {"T": T})
                with frame as f:
                    self.assertTrue(torch.equal(torch.from_dlpack(f["T"]), T))
                    with self.assertRaises(TypeError) as e:
                        np.asarray(f["T"])
                    self.assertIn("torch.from_dlpack(frame['T'])", str(e.exception))

    def test_layouts_a_publisher_cannot_read_in_place_are_refused_by_name(self):
        T = np.zeros((D + 2, H + 2, W + 2), np.float64)
        inside = T[1:-1, 1:-1, 1:-1]
        for array in (T[:, :, ::2], np.asfortranarray(volume())):
            with self.assertRaises(cuview.CuviewError) as e:
                self.publisher("gather", {"T": array})
            self.assertIn("field 'T' has strides", str(e.exception))
            self.assertIn("the fastest axis's stride must be one cell's size", str(e.exception))
        with self.assertRaises(cuview.CuviewError) as e:
            self.publisher("axes", {"T": inside}, grid=cuview.Grid(origin=(0, 0)))
        self.assertIn("origin has 2 values for 3 axes; give one per axis, slowest first (z, y, x)", str(e.exception))
        with self.assertRaises(cuview.CuviewError) as e:
            self.publisher("noshape", {"T": inside, "S": np.zeros((H, W))}, grid=[cuview.Grid(name="volume")])
        self.assertIn("field 'S' of 'noshape' is (5, 6) cells, and no grid given has that shape", str(e.exception))
        with self.publisher("layout", {"T": inside}) as pub:
            for arrays, words in [
                ({"T": np.zeros((D, H, W))}, "the array's strides are C order (bytes), but the field was declared "
                                             "with (448, 64, 8)"),
                ({"T": np.zeros((D + 4, H + 4, W + 4))[2:-2, 2:-2, 2:-2]}, "declared with (448, 64, 8)"),
                ({"T": inside.astype(np.float32)}, "the array is float32"),
            ]:
                with self.assertRaises(cuview.CuviewError, msg=words) as e:
                    pub.publish(1, 0.0, arrays)
                self.assertIn(words, str(e.exception))

    def test_refusals_name_the_python_arguments_that_fix_them(self):
        T = volume()

        def refusal(name="words", **kw):
            with self.assertRaises(cuview.CuviewError) as e:
                self.publisher(name, **{"fields": {"T": T}, **kw}).close()
            message = str(e.exception)
            for cpp_or_c in ("add_field", "add_preset", "publish()", "cuview_publisher", "FieldWriter", "--name"):
                self.assertNotIn(cpp_or_c, message.replace("cuview-ctl --name", ""))
            return message

        self.assertIn("give cuview.Publisher at least one array in fields={...}", refusal(fields={}))
        self.assertIn("no preset 'cold'; give it in cuview.Publisher(presets={...})", refusal(preset="cold"))
        self.assertIn("cuview.Publisher's log=loud is not a log level", refusal(log="loud"))
        with self.publisher("taken", {"T": T}):
            self.assertIn("give cuview.Publisher another name", refusal(name="taken"))

    def test_the_librarys_log_goes_to_stderr_at_the_level_asked_for(self):
        program = ("import sys, numpy, cuview\n"
                   "level = sys.argv[1] or None\n"
                   "with cuview.Publisher('logged', fields={'T': numpy.zeros((4, 4), numpy.float32)}, backend='host',"
                   " log=level):\n"
                   "    print('the program says this')\n")

        def run(level, env_level=None):
            env = {k: v for k, v in os.environ.items() if k != "CUVIEW_LOG"}
            if env_level:
                env["CUVIEW_LOG"] = env_level
            r = subprocess.run([sys.executable, "-c", program, level], capture_output=True, text=True, env=env,
                               timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "the program says this\n")  # none of the library's lines
            return r.stderr

        self.assertIn("[cuview] [info] publisher 'logged' session", run(""))  # info by default
        self.assertIn("[cuview] [info] publisher 'logged' session", run("info"))
        self.assertNotIn("[info]", run("error"))
        self.assertIn("[cuview] [info]", run("error", env_level="info"))  # the environment wins
        self.assertNotIn("[info]", run("", env_level="warn"))

    def closed_publish(self, pub):
        try:
            pub.publish(2, 0.0, [volume(), volume()])
        except cuview.CuviewError as e:
            return e
        self.fail("a closed publisher published")

    @contextlib.contextmanager
    def through_a_gateway(self, pub, arrays, polled=lambda steering: None):
        """A remote client of `pub` through a cuview-gateway of this test's runtime, while the
        program's loop — a thread of its own, the only one calling pub — publishes `arrays` and
        hands what each poll() returns to `polled`."""
        gateway = subprocess.Popen([f"{BIN}/cuview-gateway", "--log-level", "warn"])
        url = "unix:" + os.path.join(self.rt.name, "cuview", ".gateway", "gateway.sock")
        stop = threading.Event()

        def loop():
            step = 0
            while not stop.is_set():
                step += 1
                pub.publish(step, 0.0, arrays)
                polled(pub.poll())
                time.sleep(0.01)
        program = threading.Thread(target=loop)
        program.start()
        try:
            deadline, remote = time.time() + 30, None
            while remote is None:
                try:
                    remote = cuview.attach(pub.name, remote=url)
                except cuview.CuviewError:
                    self.assertLess(time.time(), deadline, f"the gateway never served '{pub.name}'")
                    time.sleep(0.1)
            with remote:
                yield remote
        finally:
            stop.set()
            program.join(30)
            gateway.terminate()
            gateway.wait(30)

    def test_through_a_gateway_a_remote_reader_sees_the_volume_and_steers(self):
        T = volume()
        seen = []
        with self.publisher("remote-vol", {"T": T}, params={"alpha": (0.1, 0, 1)}) as pub, \
                self.through_a_gateway(pub, {"T": T}, lambda s: seen.append(s.params.get("alpha"))) as remote:
            region = remote.fetch("T", 0, 0, z=0, d=D)
            np.testing.assert_array_equal(np.asarray(region), T)  # exact, the whole box
            remote.set(alpha=0.5)
            deadline = time.time() + 30
            while 0.5 not in seen:
                self.assertLess(time.time(), deadline, "the remote change never reached poll()")
                time.sleep(0.05)

    def test_through_a_gateway_float64_int64_and_coordinates_arrive_exact(self):
        T, N = exact64()
        _, inside = with_halo(T, 1)
        arrays = {"T": inside, "N": N}
        with self.publisher("remote64", arrays, grid=cuview.Grid(spacing=(1, 2, 3), units="m")) as pub, \
                self.through_a_gateway(pub, arrays) as remote:
            g = remote.grid("T")
            self.assertEqual((g.shape, g.spacing, g.units), ((D, H, W), (1.0, 2.0, 3.0), "m"))
            deadline, frame = time.time() + 30, None
            while frame is None:
                self.assertLess(time.time(), deadline, "no frame came through the gateway")
                frame = remote.next_frame(timeout=1.0)
            with frame as f:
                got_t, got_n = np.asarray(f["T"]), np.asarray(f["N"])
                self.assertEqual((got_t.dtype, got_n.dtype), (np.float64, np.int64))
                np.testing.assert_array_equal(got_t, T)  # exact, as published
                np.testing.assert_array_equal(got_n, N)

    def test_a_volume_is_seen_whole_as_a_picture(self):  # on the host: a reader in this process
        n, r = 48, 9
        z, y, x = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
        c = (n - 1) / 2
        ball = (((x - c - 10) ** 2 + (y - c) ** 2 + (z - c) ** 2) <= r * r).astype(np.float32)  # right of centre
        with cuview.Publisher("ball", fields={"b": ball}, backend="host", fps=0, max_cost=1) as pub, \
                cuview.attach("ball") as sim:
            frame, _ = first_frame(pub, sim, {"b": ball})
            with frame as f:
                size = (240, 240)
                s = 240 / (n * np.sqrt(3))  # pixels per cell at zoom 1

                def disc(v):
                    shown = v.values > 0.5 if v.mode == "mip" else ~np.isnan(v.values)
                    ys, xs = np.nonzero(shown)
                    return xs.mean() + 0.5, ys.mean() + 0.5, shown.sum()

                mip = f.view("b", size=size)
                self.assertEqual(mip.image.shape, (240, 240, 3))
                cx, cy, area = disc(mip)
                self.assertAlmostEqual(cx, 120 + 10 * s, delta=1.5)  # where geometry puts the ball
                self.assertAlmostEqual(cy, 120, delta=1.5)
                self.assertAlmostEqual(area, np.pi * (r * s) ** 2, delta=0.15 * np.pi * (r * s) ** 2)
                side = f.view("b", camera={"azimuth": 90}, size=size)
                self.assertAlmostEqual(disc(side)[0], 120, delta=1.5)  # 90°: the x offset is depth
                iso = f.view("b", mode="isosurface", level=0.5, size=size)
                self.assertAlmostEqual(disc(iso)[2], area, delta=0.1 * area)  # the silhouette
                bright = f.view("b", mode="emission", colormap="grayscale", size=size)
                self.assertGreater(int(bright.image[int(cy), int(cx)].max()), 0)
                self.assertEqual(int(bright.image[5, 5].max()), 0)  # empty space stays black
                # auto: the zeros most cells hold are clear, the ball opaque (the viewer's default)
                auto = f.view("b", mode="emission", opacity="auto", size=size)
                self.assertGreater(float(np.nanmax(auto.values)), 0.5)
                self.assertLess(float(np.nanmin(auto.values)), 0.01)
                with self.assertRaises(cuview.CuviewError) as e:
                    f.view("b", mode="xray")
                self.assertIn("'xray' is none of mip, emission, isosurface", str(e.exception))

    def test_the_run_casts_a_picture_of_every_cell_for_python(self):  # Group.picture: `render`, on the host
        n, r = 48, 9
        z, y, x = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
        c = (n - 1) / 2
        ball = (((x - c - 10) ** 2 + (y - c) ** 2 + (z - c) ** 2) <= r * r).astype(np.float32)  # right of centre
        with cuview.Publisher("ball", fields={"b": ball}, backend="host", fps=0, max_cost=1) as pub, \
                cuview.attach_group("ball", control_only=True) as g:
            size = (240, 240)
            s = 240 / (n * np.sqrt(3))  # pixels per cell at zoom 1
            with self.assertRaises(cuview.CuviewError) as e:
                g.picture("b", size=size)
            self.assertIn("range=(lo, hi)", str(e.exception))
            pictures = {}
            for step in range(1, 400):
                pub.publish(step, 0.5 * step, {"b": ball})
                for mode in ("mip", "isosurface"):
                    if pictures.get(mode) is None:
                        pictures[mode] = g.picture("b", mode=mode, size=size, range=(0, 1), level=0.5, timeout=0)
                if all(pictures.get(m) is not None for m in ("mip", "isosurface")):
                    break
            mip, iso = pictures["mip"], pictures["isosurface"]
            self.assertIsNotNone(mip, "the run cast no picture within 400 steps")
            self.assertEqual(mip.image.shape, (240, 240, 3))
            self.assertEqual((mip.stride, mip.brick), (1, (n, n, n)))  # every cell of the grid
            self.assertGreater(mip.step, 0)
            shown = mip.values > 0.5
            ys, xs = np.nonzero(shown)
            self.assertAlmostEqual(xs.mean() + 0.5, 120 + 10 * s, delta=1.5)  # where geometry puts the ball
            self.assertAlmostEqual(ys.mean() + 0.5, 120, delta=1.5)
            area = np.pi * (r * s) ** 2
            self.assertAlmostEqual(shown.sum(), area, delta=0.15 * area)
            self.assertAlmostEqual(int((~np.isnan(iso.values)).sum()), area, delta=0.15 * area)  # the silhouette
            self.assertEqual(int(mip.image[5, 5].max()), 0)  # empty space stays black
            with self.assertRaises(cuview.CuviewError) as e:
                g.picture("b", mode="xray", range=(0, 1))
            self.assertIn("xray", str(e.exception))

    def test_a_failing_program_tells_its_viewers_why(self):  # on the host: a reader in this process
        T = volume()
        sim = None
        try:
            with cuview.Publisher("fails", fields={"T": T}, backend="host", fps=0, max_cost=1) as pub:
                sim = cuview.attach("fails")
                first_frame(pub, sim, {"T": T})[0].release()
                raise RuntimeError("the solver diverged")
        except RuntimeError:
            pass
        with self.assertRaises(cuview.CuviewError) as e:
            for _ in range(50):
                sim.next_frame(timeout=0.1)
        self.assertEqual(e.exception.code, "daemon_gone")
        self.assertIn("the solver diverged", str(e.exception))
        sim.close()


@unittest.skipUnless(BACKEND == "cuda", "GPU arrays are a CUDA matter (CUVIEW_TEST_BACKEND=cuda runs this)")
class GpuArrays(PrivateRuntimeTest):

    def test_cupy_and_torch_arrays_are_copied_on_the_gpu_with_no_host_round_trip(self):
        import cupy  # both are on the GPU hosts: a missing one fails, never skips
        import torch
        T = cupy.asarray(volume())
        tt = torch.as_tensor(volume(-1.0), device="cuda")
        # No host copy: every way out of the GPU into host memory refuses while publishing.
        def refuse(*a, **k):
            raise AssertionError("publish copied a GPU array through host memory")
        saved = (cupy.ndarray.get, cupy.ndarray.__array__, torch.Tensor.cpu, torch.Tensor.numpy)
        with cuview.Publisher("gpu", fields={"T": T}, backend="cuda", sharing=SHARING, fps=0, max_cost=1) as pub, \
                cuview.attach("gpu", control_only=True) as sim:
            self.assertIn(SHARING if SHARING != "auto" else "legacy", json.dumps(sim.status()))
            step = 0
            for array, expected in [(T, volume()), (tt, volume(-1.0))]:
                cupy.ndarray.get = cupy.ndarray.__array__ = refuse
                torch.Tensor.cpu = torch.Tensor.numpy = refuse
                try:
                    got, step = read_elsewhere(pub, {"T": array}, self.rt.name, step=step)
                finally:
                    cupy.ndarray.get, cupy.ndarray.__array__, torch.Tensor.cpu, torch.Tensor.numpy = saved
                np.testing.assert_array_equal(got, expected)
            # On a stream of the caller's: the copy is ordered after the work that wrote the array.
            s = cupy.cuda.Stream(non_blocking=True)
            with s:
                U = cupy.full((D, H, W), 7.0, dtype=cupy.float32)
                got, step = read_elsewhere(pub, {"T": U}, self.rt.name, stream=s, step=step)
            np.testing.assert_array_equal(got, np.full((D, H, W), 7.0, np.float32))

    def test_cupy_and_torch_float64_and_int64_interiors_are_copied_in_place_on_the_gpu(self):
        import cupy
        import torch
        T, N = exact64()
        step = 0
        for halo in (1, 2):
            padded, _ = with_halo(T, halo)
            on_gpu = cupy.asarray(padded)
            inside = on_gpu[halo:-halo, halo:-halo, halo:-halo]
            as_torch = torch.as_tensor(padded, device="cuda")[halo:-halo, halo:-halo, halo:-halo]
            padded_n, _ = with_halo(N, halo)
            inside_n = cupy.asarray(padded_n)[halo:-halo, halo:-halo, halo:-halo]
            for array, expected, dtype in [(inside, T, np.float64), (as_torch, T, np.float64),
                                           (inside_n, N, np.int64)]:
                with self.subTest(halo=halo, array=type(array).__module__, dtype=dtype.__name__), \
                        cuview.Publisher(f"gpu-halo{halo}", fields={"T": array}, backend="cuda", sharing=SHARING,
                                         fps=0, max_cost=1) as pub:
                    got, step = read_elsewhere(pub, {"T": array}, self.rt.name, step=step, dtype=dtype)
                    np.testing.assert_array_equal(got, expected)

    def test_the_callers_gpu_is_left_as_it_was(self):
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 2:
            self.skipTest("one GPU here: the 2-GPU machine runs this")
        with cupy.cuda.Device(0):
            T = cupy.asarray(volume())
        cupy.cuda.Device(1).use()
        try:
            with cuview.Publisher("two", fields={"T": T}, backend="cuda", device=0, fps=0, max_cost=1) as pub:
                self.assertEqual(cupy.cuda.runtime.getDevice(), 1)
                got, _ = read_elsewhere(pub, {"T": T}, self.rt.name)
                self.assertEqual(cupy.cuda.runtime.getDevice(), 1)
                np.testing.assert_array_equal(got, volume())
                self.assertIn("GPU 0", pub.device)
                pub.poll()
            self.assertEqual(cupy.cuda.runtime.getDevice(), 1)
        finally:
            cupy.cuda.Device(0).use()


if __name__ == "__main__":
    sys.exit(unittest.main())
