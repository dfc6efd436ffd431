"""The frozen protocol-7 client (protocol7_client.py) against today's cuview-compute and
cuview-gateway, on the host backend: a session, the ring, steering, refusals, and the same through
a gateway. This harness starts the programs and may follow their command lines; the client may not
change (see its header)."""
import os
import subprocess
import sys
import time
import unittest

import msgpack
import numpy as np
import zmq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from private_runtime import private_runtime_dir  # noqa: E402
from protocol7_client import (GatewayClient, LocalClient, ProtocolError, expect_keys, f32_planes,  # noqa: E402
                              DESCRIBE_KEYS, FRAME_NOTICE_KEYS, GATEWAY_HELLO_KEYS, LIST_ENTRY_KEYS, FETCH_KEYS)

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
NAME, W, H = "compat7", 64, 48


def wait_for(what, check, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
            if value:
                return value
        except (ProtocolError, zmq.ZMQError, AssertionError, OSError):
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


class Protocol7(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()
        cls.daemon = subprocess.Popen([f"{BIN}/cuview-compute", "--name", NAME, "--backend", "host", "--size",
                                       f"{W}x{H}", "--paused", "--log-level", "warn"])
        cls.gateway = subprocess.Popen([f"{BIN}/cuview-gateway", "--log-level", "warn"])
        cls.gateway_socket = os.path.join(cls.rt.name, "cuview", ".gateway", "gateway.sock")

        def hello():
            c = LocalClient(NAME)
            try:
                return c.hello()
            finally:
                c.close()
        wait_for("the daemon answers", hello)
        wait_for("the gateway's socket", lambda: os.path.exists(cls.gateway_socket))

    @classmethod
    def tearDownClass(cls):
        for p in (cls.gateway, cls.daemon):
            p.terminate()
            p.wait(30)
        cls.rt.cleanup()

    def setUp(self):
        self.c = LocalClient(NAME)
        self.addCleanup(self.c.close)

    def test_a_session_describes_the_run_and_its_figures(self):
        hello = self.c.hello()
        self.assertEqual(hello["name"], NAME)
        self.assertEqual(hello["backend"], "host")
        d = self.c.describe()
        self.assertEqual(d["dims"], [H, W])
        self.assertEqual([f["name"] for f in d["fields"]], ["u", "v"])
        for f in d["fields"]:
            self.assertEqual((f["dtype"], f["shape"], f["strides"]), ("float32", [H, W], [4 * W, 4]))
        self.assertIn("F", [p["name"] for p in d["params"]])
        s = self.c.stats()
        self.assertTrue(s["paused"])
        self.assertEqual(s["dims"], [H, W])

    def test_frames_are_read_from_the_ring_intact_and_follow_steering(self):
        self.c.hello()
        d = self.c.describe()
        self.c.open_ring()
        seq, step, values = self.c.take_frame(d)
        self.assertTrue(np.all(np.isfinite(values["u"])))
        self.c.request("step", {"n": 10})
        seq2, step2, values2 = self.c.take_frame(d)
        while step2 < step + 10:
            seq2, step2, values2 = self.c.take_frame(d)
        self.assertEqual(step2, step + 10)
        self.assertGreater(seq2, seq)
        self.assertFalse(np.array_equal(values["v"], values2["v"]))
        # A SUB socket hears only what is published once it is connected: step until it hears one.
        notices = self.c.subscribe_frames()
        self.addCleanup(notices.close)
        for _ in range(60):
            self.c.request("step", {"n": 1})
            if notices.poll(1000):
                break
        self.assertTrue(notices.poll(0), "no frame notice after 60 steps")
        topic, body = notices.recv_multipart()
        self.assertEqual(topic, b"frame")
        notice = msgpack.unpackb(body, raw=False)
        expect_keys("frame notice", notice, FRAME_NOTICE_KEYS)
        self.assertGreater(notice["step"], step2)
        step2 = self.c.stats()["step"]

        self.c.request("set", {"params": {"F": 0.031}})
        self.assertAlmostEqual(self.c.stats()["params"]["F"], 0.031)
        self.c.request("resume")
        wait_for("the run steps once resumed", lambda: self.c.stats()["step"] > step2)
        self.c.request("pause")
        self.assertTrue(self.c.stats()["paused"])

    def test_refusals_keep_their_codes(self):
        with self.assertRaises(ProtocolError) as e:
            self.c.request("stats")
        self.assertIn(e.exception.code, ("missing_field", "not_attached"))
        self.c.hello()
        with self.assertRaises(ProtocolError) as e:
            self.c.request("frobnicate")
        self.assertEqual(e.exception.code, "unknown_op")
        with self.assertRaises(ProtocolError) as e:
            self.c.request("step", {"n": 0})
        self.assertEqual(e.exception.code, "out_of_range")
        with self.assertRaises(ProtocolError) as e:
            self.c.request("set", {"params": {"no_such_parameter": 1}})
        self.assertEqual(e.exception.code, "bad_value")
        old = LocalClient(NAME, version=4)
        self.addCleanup(old.close)
        with self.assertRaises(ProtocolError) as e:
            old.hello()
        self.assertEqual(e.exception.code, "version_mismatch")
        self.assertIn("protocol 4", e.exception.message)

    def test_through_a_gateway_the_same_session_views_and_fetches(self):
        g = GatewayClient(self.gateway_socket)
        self.addCleanup(g.close)
        hello = g.gateway("hello", {"client": "protocol-7 client"})
        expect_keys("gateway hello", hello, GATEWAY_HELLO_KEYS)
        self.assertEqual(hello["protocol"], 1)
        self.assertGreaterEqual(hello["local_protocol"], 7)

        def listed():
            entries = [p for p in g.gateway("list", {})["publishers"] if p["name"] == NAME]
            return entries[0] if entries else None
        entry = wait_for("the gateway lists the run", listed)
        expect_keys("list entry", entry, LIST_ENTRY_KEYS)

        self.assertEqual(g.publisher(NAME, "hello", {"client": "protocol-7 client", "pid": os.getpid()})["name"], NAME)
        d = g.publisher(NAME, "describe")
        expect_keys("describe through the gateway", d, DESCRIBE_KEYS)
        self.assertTrue(g.publisher(NAME, "stats")["paused"])
        entry = wait_for("the gateway lists the run it attached to", lambda: listed() if listed()["sim"] else None)
        self.assertEqual((entry["sim"], entry["width"], entry["height"]), ("grayscott", W, H))

        # The run is paused: the ring's frame, a view and a fetch all show one step.
        self.c.hello()
        desc = self.c.describe()
        self.c.open_ring()
        _, step, values = self.c.take_frame(desc)
        g.gateway("view", {"name": NAME, "field": "u", "view_w": W, "view_h": H, "center_x": W / 2,
                           "center_y": H / 2, "pixels_per_cell": 1.0, "encoding": "f32", "credits": 1})
        view, raw = g.next_view()
        self.assertEqual((view["field"], view["encoding"], view["step"]), ("u", "f32", step))
        self.assertEqual(view["error_bound"], 0)
        np.testing.assert_array_equal(f32_planes(raw, W * H).reshape(H, W), values["u"])
        g.gateway("stop", {"name": NAME})

        fetched = g.gateway("fetch", {"name": NAME, "field": "v", "x": 8, "y": 4, "w": 20, "h": 10})
        expect_keys("fetch", fetched, FETCH_KEYS)
        self.assertEqual(fetched["step"], step)
        got = np.frombuffer(g.unzstd(fetched["data"], fetched["raw_bytes"]), dtype="<f4").reshape(10, 20)
        np.testing.assert_array_equal(got, values["v"][4:14, 8:28])
        g.publisher(NAME, "detach")


if __name__ == "__main__":
    unittest.main(verbosity=2)
