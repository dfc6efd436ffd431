"""cuview.Publisher: a Python program's arrays published to viewers. A 3-D field's element
[z, y, x] is what readers (this process and cuview-ctl, another) see at cell (x, y, z); steering
arrives as plain values; refusals name the field and what to do. Backend from CUVIEW_TEST_BACKEND
(host: NumPy, in CI; cuda: CuPy and PyTorch arrays, each sharing mechanism through CUVIEW_SHARING,
copied on the GPU with no host round trip, and the caller's GPU left as it was). Run by CTest
(python-publisher) with PYTHONPATH=python."""
import json
import os
import subprocess
import sys
import threading
import time
import unittest

import numpy as np

import cuview
from private_runtime import private_runtime_dir

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
BACKEND = os.environ.get("CUVIEW_TEST_BACKEND", "host")
SHARING = os.environ.get("CUVIEW_SHARING") or "auto"
D, H, W = 4, 5, 6


def volume(sign=1.0):
    z, y, x = np.meshgrid(np.arange(D), np.arange(H), np.arange(W), indexing="ij")
    return (sign * (100 * z + 10 * y + x)).astype(np.float32)


def first_frame(pub, sim, arrays, step=0):
    """Publishes (a new step each call) until `sim` has a frame; returns it and the step."""
    for _ in range(400):
        step += 1
        published = pub.publish(step, 0.5 * step, arrays)
        frame = sim.next_frame(timeout=1.0 if published else 0.01)
        if frame is not None:
            return frame, step
    raise AssertionError("no frame reached the reader")


class PublisherTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()

    @classmethod
    def tearDownClass(cls):
        cls.rt.cleanup()

    def publisher(self, name, fields, **kw):
        kw.setdefault("fps", 0)
        kw.setdefault("max_cost", 1)
        return cuview.Publisher(name, fields=fields, backend=BACKEND, sharing=SHARING, **kw)

    def saved(self, name, step_at_least=0):
        """Field 0 of `name`'s current frame as cuview-ctl (another process) saves it."""
        path = os.path.join(self.rt.name, f"{name}.bin")
        subprocess.run([f"{BIN}/cuview-ctl", "--name", name, "attach", "--frames", "1", "--save", path, "--verify"],
                       check=True, capture_output=True, timeout=60)
        return np.fromfile(path, dtype=np.float32)[:D * H * W].reshape(D, H, W)

    def test_a_numpy_volume_reaches_readers_cell_for_cell(self):
        T = volume()
        with self.publisher("vol", {"T": T}, params={"alpha": (0.1, 0, 1)}, title="python test") as pub, \
                cuview.attach("vol") as sim:
            self.assertEqual(pub.backend, BACKEND)
            info = sim.description["fields"][0]
            self.assertEqual((info["name"], info["dtype"], info["shape"][:3]), ("T", "float32", [D, H, W]))
            frame, step = first_frame(pub, sim, {"T": T})
            with frame as f:
                f.verify()
                self.assertEqual(f.step, step)
                self.assertEqual(f.time, 0.5 * step)
                got = np.asarray(f["T"]) if BACKEND == "host" else __import__("cupy").asnumpy(f["T"])
                np.testing.assert_array_equal(got, T)
                self.assertEqual(float(got[3, 4, 5]), 345.0)  # cell x=5, y=4, z=3
            # A sequence in the fields' order does the same; a reader in another process sees it.
            U = volume(-1.0)
            pub.publish(step + 1, 0.0, [U])
            np.testing.assert_array_equal(self.saved("vol"), U)

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
            self.publisher("bad", {"T": {"shape": (4, 4), "dtype": "float64"}})
        self.assertIn("'float64' is not a dtype", str(e.exception))
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

    def closed_publish(self, pub):
        try:
            pub.publish(2, 0.0, [volume(), volume()])
        except cuview.CuviewError as e:
            return e
        self.fail("a closed publisher published")

    def test_a_failing_program_tells_its_viewers_why(self):
        T = volume()
        sim = None
        try:
            with self.publisher("fails", {"T": T}) as pub:
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
class GpuArrays(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()

    @classmethod
    def tearDownClass(cls):
        cls.rt.cleanup()

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
                cuview.attach("gpu") as sim:
            self.assertEqual(sim.sharing, "legacy" if SHARING == "auto" else SHARING)
            step = 0
            for array, expected in [(T, volume()), (tt, volume(-1.0))]:
                cupy.ndarray.get = cupy.ndarray.__array__ = refuse
                torch.Tensor.cpu = torch.Tensor.numpy = refuse
                try:
                    frame, step = first_frame(pub, sim, {"T": array}, step)
                finally:
                    cupy.ndarray.get, cupy.ndarray.__array__, torch.Tensor.cpu, torch.Tensor.numpy = saved
                with frame as f:
                    f.verify()
                    np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(f["T"])), expected)
            # On a stream of the caller's: the copy is ordered after the work that wrote the array.
            s = cupy.cuda.Stream(non_blocking=True)
            with s:
                U = cupy.full((D, H, W), 7.0, dtype=cupy.float32)
                for _ in range(400):
                    step += 1
                    if pub.publish(step, 0.0, {"T": U}, stream=s):
                        break
            with sim.next_frame(timeout=5) as f:
                self.assertEqual(float(cupy.from_dlpack(f["T"]).max()), 7.0)

    def test_the_callers_gpu_is_left_as_it_was(self):
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 2:
            self.skipTest("one GPU here: the 2-GPU machine runs this")
        with cupy.cuda.Device(0):
            T = cupy.asarray(volume())
        cupy.cuda.Device(1).use()
        try:
            with cuview.Publisher("two", fields={"T": T}, backend="cuda", device=0, fps=0, max_cost=1) as pub, \
                    cuview.attach("two") as sim:
                self.assertEqual(cupy.cuda.runtime.getDevice(), 1)
                frame, _ = first_frame(pub, sim, {"T": T})
                self.assertEqual(cupy.cuda.runtime.getDevice(), 1)
                with frame as f:
                    self.assertEqual(f.device, 0)
                pub.poll()
            self.assertEqual(cupy.cuda.runtime.getDevice(), 1)
        finally:
            cupy.cuda.Device(0).use()


if __name__ == "__main__":
    sys.exit(unittest.main())
