"""cuview-gateway --http (issue 56, first part): the web viewer's server, as a browser and a stranger
meet it. The URL the gateway prints opens the page; without its token, with a wrong one, under
another Host name or from another Origin nothing is served; the API lists the runs and describes
one; a picture is the run's own plane, its values those of the frame a local client reads. Malformed
and oversized requests are refused and the server goes on. The page's live connection (a WebSocket,
/api/live) is held to the same rules, describes the run, sends its figures and pictures, steers it,
answers a malformed message with what was wrong and refuses a huge one, the run unaffected. A host-backend daemon and a gateway in a
private XDG_RUNTIME_DIR. Run by CTest (python-web) with PYTHONPATH=python."""
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import unittest
import urllib.parse
from contextlib import closing

import numpy as np
import websocket

import cuview
from private_runtime import mpirun_argv, private_runtime_dir, start_web_run, step_paused_daemon

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
D, H, W = 16, 40, 48


def webp_size(data):
    """Width and height of a lossless WebP (RIFF, VP8L: 14 bits each after the signature byte)."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP" and data[12:16] == b"VP8L", data[:16]
    bits = struct.unpack("<I", data[21:25])[0]
    return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1


class LivePage:
    """The page's live connection, for a test class with `port` and `token`."""

    def live(self, name="web", token=True, origin=None):
        """The page's live connection to `name`, as the page opens it (the token as its cookie)."""
        headers = [f"Cookie: cuview_token={self.token}"] if token else []
        return closing(websocket.create_connection(f"ws://127.0.0.1:{self.port}/api/live?name={name}", timeout=30,
                                                   header=headers, origin=origin or f"http://127.0.0.1:{self.port}"))

    @staticmethod
    def receive(ws, want):
        """The next message holding `want` (text: its object; binary: (header, payload))."""
        for _ in range(200):
            opcode, data = ws.recv_data()
            if opcode == websocket.ABNF.OPCODE_BINARY:
                n = struct.unpack("<I", data[:4])[0]
                head = json.loads(data[4:4 + n])
                if head["kind"] == want:
                    return head, data[4 + n:]
            else:
                m = json.loads(data)
                if want in m:
                    return m
        raise AssertionError(f"no message with {want!r} came")


class WebViewer(unittest.TestCase, LivePage):
    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()
        cls.daemon, cls.gateway, cls.url = start_web_run(BIN, f"{W}x{H}x{D}", 100)
        parts = urllib.parse.urlsplit(cls.url)
        cls.port = parts.port
        cls.token = urllib.parse.parse_qs(parts.query)["token"][0]

    @classmethod
    def tearDownClass(cls):
        cls.gateway.terminate()
        cls.gateway.wait(30)
        cls.daemon.terminate()
        cls.daemon.wait(30)
        cls.rt.cleanup()

    def get(self, path, headers=None, token=True):
        """(status, headers, body) of GET path (the token added unless told not to)."""
        if token:
            path += ("&" if "?" in path else "?") + "token=" + self.token
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, dict(r.getheaders()), body

    def test_the_printed_url_opens_the_page_and_sets_its_cookie(self):
        self.assertTrue(self.url.startswith("http://127.0.0.1:"), self.url)
        self.assertEqual(len(self.token), 48)
        status, headers, body = self.get("/")
        self.assertEqual(status, 200)
        self.assertIn(b"<title>cuview</title>", body)
        cookie = headers["Set-Cookie"]
        self.assertIn("HttpOnly", cookie)
        self.assertIn("SameSite=Strict", cookie)
        # The cookie alone serves the API from then on (the page's own requests carry no token).
        status, _, body = self.get("/api/runs", {"Cookie": cookie.split(";")[0]}, token=False)
        self.assertEqual(status, 200)
        self.assertIn({"name": "web", "parts": 1}, json.loads(body)["runs"])

    def test_without_the_token_nothing_is_served(self):
        for path, token, words in (("/", False, b"needs the token"), ("/api/runs", False, b"needs the token"),
                                   ("/api/runs?token=0123", False, b"does not match")):
            status, _, body = self.get(path, token=token)
            self.assertEqual(status, 403, path)
            self.assertIn(words, body)
            self.assertNotIn(b"web", body.replace(b"open the URL", b""))  # no run's name leaks

    def test_another_host_name_or_origin_is_refused(self):
        status, _, body = self.get("/api/runs", {"Host": f"evil.example:{self.port}"})
        self.assertEqual(status, 403)
        self.assertIn(b"ssh -L", body)
        status, _, body = self.get("/api/runs", {"Origin": "http://evil.example"})
        self.assertEqual(status, 403)
        self.assertIn(b"http://evil.example", body)
        status, _, _ = self.get("/api/runs", {"Origin": f"http://127.0.0.1:{self.port}"})
        self.assertEqual(status, 200)

    def test_a_run_is_described_with_its_fields_and_grid(self):
        status, _, body = self.get("/api/describe?name=web")
        self.assertEqual(status, 200)
        d = json.loads(body)
        self.assertEqual(d["dims"], [D, H, W])
        self.assertEqual([f["name"] for f in d["fields"]], ["u", "v"])
        status, _, body = self.get("/api/describe?name=nobody")
        self.assertEqual(status, 404)
        self.assertIn(b"nobody", body)

    def test_a_picture_is_the_runs_own_plane_of_the_frame(self):
        # One pixel a cell: the z-plane at 5, its own size.
        status, headers, body = self.get(f"/api/picture?name=web&field=u&mode=plane&axis=z&index=5&width={W}&height={H}")
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["Content-Type"], "image/webp")
        self.assertEqual(webp_size(body), (W, H))
        self.assertEqual(headers["X-Cuview-Step"], "100")
        lo, hi = map(float, headers["X-Cuview-Range"].split())
        with cuview.attach("web") as sim:
            with sim.next_frame(timeout=5) as frame:
                plane = np.array(frame["u"])[5]
        self.assertAlmostEqual(lo, float(plane.min()), places=5)
        self.assertAlmostEqual(hi, float(plane.max()), places=5)
        # A volume mode: the whole grid cast, another picture of the same size.
        status, headers, body = self.get(f"/api/picture?name=web&field=u&mode=mip&width=120&height=90&azimuth=30")
        self.assertEqual(status, 200, body)
        self.assertEqual(webp_size(body), (120, 90))

    def test_the_values_under_the_pointer_are_the_frames_cell_for_cell(self):
        status, headers, _ = self.get(f"/api/picture?name=web&field=v&axis=y&index=7&width={W}&height={D}")
        self.assertEqual(status, 200)
        step = headers["X-Cuview-Step"]
        status, headers, body = self.get(f"/api/values?name=web&field=v&axis=y&index=7&width={W}&height={D}&step={step}")
        self.assertEqual(status, 200)
        self.assertEqual(headers["X-Cuview-Step"], step)
        values = np.frombuffer(body, "<f4").reshape(D, W)  # a y-plane: rows z, columns x
        with cuview.attach("web") as sim:
            with sim.next_frame(timeout=5) as frame:
                self.assertEqual(str(frame.step), step)
                np.testing.assert_array_equal(values, np.array(frame["v"])[:, 7, :])

    def post(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("POST", path + ("&" if "?" in path else "?") + "token=" + self.token)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body

    def test_steering_from_the_page_is_what_cuview_ctl_sees(self):
        def status():
            out = subprocess.run([f"{BIN}/cuview-ctl", "--name", "web", "status", "--json"], check=True,
                                 capture_output=True, text=True).stdout
            return json.loads(out)
        before = status()["step"]
        self.assertEqual(self.post("/api/control?name=web&op=step&n=3"), (200, b"{}"))
        deadline = time.time() + 20
        while status()["step"] != before + 3 and time.time() < deadline:
            time.sleep(0.02)
        self.assertEqual(status()["step"], before + 3)
        self.assertEqual(self.post("/api/control?name=web&op=set&F=0.031")[0], 200)
        while status()["params"]["F"] != 0.031 and time.time() < deadline:
            time.sleep(0.02)
        self.assertEqual(status()["params"]["F"], 0.031)
        # Refused by the run, in its own words; a GET never steers.
        code, body = self.post("/api/control?name=web&op=set&nonsense=1")
        self.assertEqual(code, 400)
        self.assertIn(b"nonsense", body)
        self.assertEqual(self.get("/api/control?name=web&op=resume")[0], 405)
        self.assertTrue(status()["paused"])

    def test_bad_requests_are_refused_by_name_and_the_server_goes_on(self):
        status, _, body = self.get("/api/picture?name=web&field=nope")
        self.assertEqual(status, 400)
        self.assertIn(b"no field 'nope'", body)
        status, _, body = self.get("/api/picture?name=web&field=u&zoom=lots")
        self.assertEqual(status, 400)
        self.assertIn(b"'zoom' is 'lots', not a number", body)
        status, _, body = self.get("/api/nothing")
        self.assertEqual(status, 404)
        # A header far larger than the page ever sends; bytes that are not HTTP; a request cut short.
        status, _, body = self.get("/api/runs", {"X-Padding": "x" * 40000})
        self.assertEqual(status, 413)
        for junk in (b"\x00\xff" * 100 + b"\r\n\r\n", b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1"):
            with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
                s.recv(4096)  # whatever it says (or nothing), the connection ends
        self.assertEqual(self.post("/api/runs")[0], 405)
        status, _, _ = self.get("/api/runs")
        self.assertEqual(status, 200)


    def test_the_live_connection_describes_sends_figures_and_pictures_and_steers(self):
        with self.live() as ws:
            d = self.receive(ws, "describe")["describe"]
            self.assertEqual(d["dims"], [D, H, W])
            stats = self.receive(ws, "stats")["stats"]
            self.assertEqual(stats[0]["name"], "web")
            self.assertGreaterEqual(stats[0]["clients"], 1)  # this page's own connection
            ws.send(json.dumps({"view": {"field": "u", "width": 96, "height": 80, "axis": "z", "index": D // 2,
                                         "colormap": "grayscale"}, "id": 7}))
            head, body = self.receive(ws, "picture")
            self.assertEqual((head["id"], head["width"], head["height"]), (7, 96, 80))
            self.assertEqual(webp_size(body), (96, 80))
            self.assertEqual(len(head["lut"]), 256)  # the colour bar's colours, with the first picture of a colormap
            self.assertLessEqual(head["range"][0], head["mean"])
            self.assertLessEqual(head["mean"], head["range"][1])
            # The same view again of the paused run: no new picture, and nothing sent again but a word.
            ws.send(json.dumps({"view": {"field": "u", "width": 96, "height": 80, "axis": "z", "index": D // 2,
                                         "colormap": "grayscale"}, "id": 70}))
            self.assertEqual(self.receive(ws, "unchanged"), {"unchanged": True, "reply": 70})
            ws.send(json.dumps({"values": {"field": "u", "width": 96, "height": 80, "axis": "z", "index": D // 2,
                                           "step": head["step"]}, "id": 8}))
            vhead, values = self.receive(ws, "values")
            self.assertEqual((vhead["id"], vhead["step"], len(values)), (8, head["step"], 96 * 80 * 4))
            before = self.status()["step"]
            ws.send(json.dumps({"control": {"op": "step", "n": 2}, "id": 9}))
            self.assertEqual(self.receive(ws, "reply")["reply"], 9)
            deadline = time.time() + 20
            while self.status()["step"] != before + 2 and time.time() < deadline:
                time.sleep(0.02)
            self.assertEqual(self.status()["step"], before + 2)
            # The run refuses in its own words; the page hears them.
            ws.send(json.dumps({"control": {"op": "set", "nonsense": 1}, "id": 10}))
            refused = self.receive(ws, "error")
            self.assertEqual(refused["reply"], 10)
            self.assertIn("nonsense", refused["error"])

    def test_the_live_connection_refuses_strangers_and_bad_messages(self):
        for kwargs, why in (({"token": False}, "403"), ({"origin": "http://evil.example"}, "403")):
            with self.assertRaises(websocket.WebSocketBadStatusException) as e:
                self.live(**kwargs)
            self.assertIn(why, str(e.exception))
        with self.live() as ws:
            self.receive(ws, "describe")
            for bad, says in (("{not json", "one JSON object"), ("[1, 2]", "one JSON object"),
                              (json.dumps({"hello": 1}), "one of view, values or control"),
                              (json.dumps({"view": {"field": {"deep": 1}}}), "'field' holds object"),
                              (json.dumps({"view": {"field": "nope"}}), "no field 'nope'"),
                              (json.dumps({"control": {"op": "explode"}}), "no control op 'explode'")):
                ws.send(bad)
                self.assertIn(says, self.receive(ws, "error")["error"], bad)
            ws.send_binary(b"\x00\x01")
            self.assertIn("text messages", self.receive(ws, "error")["error"])
            # Still the page's connection: a picture comes.
            ws.send(json.dumps({"view": {"field": "u", "width": 32, "height": 32}, "id": 1}))
            self.assertEqual(self.receive(ws, "picture")[0]["id"], 1)
        # A message far larger than the page ever sends: the connection is closed as too big (1009).
        with self.live() as ws:
            self.receive(ws, "describe")
            ws.send("x" * 200000)
            code = None
            for _ in range(200):
                f = ws.recv_frame()  # as it came: the server's close frame, not answered
                if f.opcode == websocket.ABNF.OPCODE_CLOSE:
                    code = struct.unpack("!H", f.data[:2])[0]
                    break
            self.assertEqual(code, 1009)
        # The run and the gateway go on.
        self.assertTrue(self.status()["paused"])
        self.assertEqual(self.get("/api/runs")[0], 200)
        with self.live() as ws:
            self.assertEqual(self.receive(ws, "describe")["describe"]["dims"], [D, H, W])

    def test_a_checkpoint_asked_from_the_page_is_written(self):
        with self.live() as ws:
            self.receive(ws, "describe")
            ws.send(json.dumps({"control": {"op": "checkpoint"}, "id": 3}))
            ticket = self.receive(ws, "ticket")["ticket"]
            deadline = time.time() + 60
            while self.status()["checkpoint"]["answered"] < ticket and time.time() < deadline:
                time.sleep(0.05)
            cp = self.status()["checkpoint"]
            self.assertGreaterEqual(cp["answered"], ticket)
            self.assertEqual(cp["error"], "")
            self.assertTrue(os.path.exists(cp["path"]), cp)
            self.assertEqual(cp["step"], self.status()["step"])  # the paused run's step

    def test_a_preset_chosen_in_the_page_sets_its_values(self):
        with self.live() as ws:
            presets = self.receive(ws, "describe")["describe"]["presets"]
            self.assertTrue(presets)
            p = presets[-1]
            ws.send(json.dumps({"control": {"op": "set", "preset": p["name"]}, "id": 6}))
            self.assertEqual(self.receive(ws, "reply")["reply"], 6)
            deadline = time.time() + 20
            while any(self.status()["params"][k] != v for k, v in p["values"].items()) and time.time() < deadline:
                time.sleep(0.05)
            for k, v in p["values"].items():
                self.assertEqual(self.status()["params"][k], v, k)

    def test_a_live_connection_to_no_run_says_so(self):
        with self.live("nobody-here") as ws:
            m = self.receive(ws, "error")
            self.assertIn("nobody-here", m["error"])
            self.assertTrue(m["gone"])

    def status(self):
        out = subprocess.run([f"{BIN}/cuview-ctl", "--name", "web", "status", "--json"], check=True,
                             capture_output=True, text=True).stdout
        return json.loads(out)

class WebViewerOfParts(unittest.TestCase, LivePage):
    """A run of two parts (mpirun -n 2) is one picture in the page: its plane is the one-process
    run's value for value, its MIP within a colour step; a ball drawn from the page lands in the
    part that holds it."""
    ARGS = ["--backend", "host", "--sim", "lbm3d", "--size", "24x20x16", "--paused", "--no-final-checkpoint",
            "--log-level", "warn"]

    @classmethod
    def setUpClass(cls):
        if shutil.which("mpirun") is None:
            raise unittest.SkipTest("mpirun is not installed (Debian: openmpi-bin): runs of parts are not tested here")
        cls.rt = private_runtime_dir()
        cls.whole = subprocess.Popen([f"{BIN}/cuview-compute", "--name", "one"] + cls.ARGS)
        cls.mpirun = subprocess.Popen(mpirun_argv(2, f"{BIN}/cuview-compute", ["--name", "two"] + cls.ARGS),
                                      start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.gateway = None
        try:
            for name in ("one", "two"):
                step_paused_daemon(BIN, name, 60, timeout=60)
            cls.gateway = subprocess.Popen([f"{BIN}/cuview-gateway", "--http", "127.0.0.1:0", "--log-level", "warn"],
                                           stdout=subprocess.PIPE, text=True)
            url = urllib.parse.urlsplit(cls.gateway.stdout.readline().strip())
            cls.port, cls.token = url.port, urllib.parse.parse_qs(url.query)["token"][0]
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.gateway:
            cls.gateway.terminate()
            cls.gateway.wait(30)
            cls.gateway.stdout.close()
        try:
            os.killpg(cls.mpirun.pid, signal.SIGTERM)
            cls.mpirun.wait(30)
        except ProcessLookupError:
            pass
        cls.whole.terminate()
        cls.whole.wait(30)
        cls.rt.cleanup()

    def get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.request("GET", path + "&token=" + self.token)
        r = c.getresponse()
        body = r.read()
        c.close()
        self.assertEqual(r.status, 200, body[:300])
        return body

    def test_a_run_of_parts_is_one_picture_and_is_steered_as_one(self):
        two = json.loads(self.get("/api/describe?name=two"))
        self.assertEqual((two["parts"], two["dims"]), (2, [16, 20, 24]))
        for view in ("mode=plane&axis=y&index=10", "mode=mip&azimuth=30&elevation=20"):
            q = f"&field=speed&width=72&height=60&lo=0&hi=0.1&{view}"
            one_values = np.frombuffer(self.get("/api/values?name=one" + q), np.float32).reshape(60, 72)
            two_values = np.frombuffer(self.get("/api/values?name=two" + q), np.float32).reshape(60, 72)
            self.assertGreater(np.count_nonzero(~np.isnan(one_values)), 500, view)  # the picture shows the grid
            # The same step, the same picture: the parts' blocks composited, no seam between them. A
            # plane is its cells, exactly; a part's rays sample its own block from where they enter it,
            # so a MIP's samples lie a fraction of a step apart from the whole run's: within a
            # colour step of the range (1/256), never a different picture.
            np.testing.assert_array_equal(np.isnan(two_values), np.isnan(one_values), err_msg=view)
            if view.startswith("mode=plane"):
                np.testing.assert_array_equal(two_values, one_values, err_msg=view)
            else:
                np.testing.assert_allclose(two_values, one_values, rtol=0, atol=0.1 / 256, err_msg=view)
        # Then the same ball drawn from the page into the whole run and, through part 0, into the run
        # of parts (its cell lies in part 1's block), and 8 steps each: the flow stops there, in both
        # alike. (After the MIPs above: near a sharp obstacle the parts' samples differ by more than
        # a colour step.)
        for name in ("one", "two"):
            with self.live(name) as ws:
                self.assertEqual(self.receive(ws, "describe")["describe"]["inputs"][0]["name"], "obstacles")
                ws.send(json.dumps({"control": {"op": "draw", "x": 12.5, "y": 10.5, "z": 11.5, "radius": 2}, "id": 4}))
                self.assertEqual(self.receive(ws, "reply")["reply"], 4)
                ws.send(json.dumps({"control": {"op": "step", "n": 8}, "id": 5}))
                self.assertEqual(self.receive(ws, "reply")["reply"], 5)
        deadline = time.time() + 60
        while time.time() < deadline:
            steps = [p["step"] for name in ("one", "two") for p in json.loads(self.get(f"/api/stats?name={name}"))]
            if steps == [68, 68, 68]:
                break
            time.sleep(0.05)
        self.assertEqual(steps, [68, 68, 68])
        q = "&field=speed&width=72&height=60&lo=0&hi=0.1&mode=plane&axis=z&index=11&step=68"  # 3 pixels a cell
        for name in ("one", "two"):
            deadline = time.time() + 30
            while True:  # the picture of step 68, once the run has cast it
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                c.request("GET", f"/api/values?name={name}{q}&token={self.token}")
                r = c.getresponse()
                speed, at = np.frombuffer(r.read(), np.float32).reshape(60, 72), r.getheader("X-Cuview-Step")
                c.close()
                if at == "68" or time.time() > deadline:
                    break
                time.sleep(0.05)
            self.assertEqual(at, "68", name)
            self.assertEqual(float(speed[3 * 10 + 1, 3 * 12 + 1]), 0.0, name)  # cell (12, 10, 11): solid
            self.assertGreater(float(speed[3 * 10 + 1, 3 * 4 + 1]), 0.0, name)  # cell (4, 10, 11): fluid



if __name__ == "__main__":
    unittest.main(verbosity=2)
