"""The web viewer in a real browser (issue 56): Debian's chromium, headless, driven over the DevTools
protocol (python3-websocket; nothing downloaded). It opens the URL cuview-gateway --http printed,
sees the run, reads a known cell's value by moving the mouse over it, steps the paused run with a
click and changes a parameter, each seen in `cuview-ctl status`; orbits a volume of a known ball with
the mouse and finds its disc where geometry puts it in the page's pixels (a screenshot), reads a cell's
place on the program's grid under the pointer; closes the
tab and sees the gateway's connection leave the run. With CUVIEW_WEB_SCREENSHOT set it
saves the page there (the README's picture). A host-backend daemon and a gateway in a private
XDG_RUNTIME_DIR. Run by CTest (web-browser) with PYTHONPATH=python."""
import json
import os
import subprocess
import threading
import time
import unittest

import numpy as np

import cuview
from devtools import Browser
from private_runtime import private_runtime_dir, start_web_run

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")
D, H, W = 64, 64, 64  # a cube: its seed grows a pattern (on a thin grid it fades)
STEPS = 300


def ctl_status(name):
    out = subprocess.run([f"{BIN}/cuview-ctl", "--name", name, "status", "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


class WebViewerInChromium(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rt = private_runtime_dir()
        cls.daemon, cls.gateway, cls.url = start_web_run(BIN, f"{W}x{H}x{D}", STEPS)
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.gateway.terminate()
        cls.gateway.wait(30)
        cls.daemon.terminate()
        cls.daemon.wait(30)
        cls.rt.cleanup()

    def test_the_page_shows_the_run_reads_a_cell_and_steers_it(self):
        b = self.browser
        b.call("Page.enable")
        b.call("Page.navigate", url=self.url + "&name=web")
        # The only run opens at once: its middle z-plane, at the step the run is at.
        b.wait_for(f"document.getElementById('status').textContent.includes('step {STEPS}')")
        b.wait_for("document.getElementById('picture').width > 0")
        self.assertIn(f"grayscott3d {W}×{H}×{D}", b.js("document.getElementById('info').textContent"))
        # The mouse over the middle plane's (z D/2) smallest value, found in the frame a local client reads:
        # the page says that value, and that cell.
        with cuview.attach("web") as sim:
            with sim.next_frame(timeout=5) as frame:
                plane = np.array(frame["u"])[D // 2]
        cy, cx = np.unravel_index(np.argmin(plane), plane.shape)
        want = float(plane[cy, cx])
        img = json.loads(b.js("JSON.stringify((() => { const i = document.getElementById('picture'); const r = "
                              "i.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height, "
                              "nw: i.width, nh: i.height}; })())"))
        s = min(img["nw"] / W, img["nh"] / H)  # the plane fitted whole into the picture
        px = img["nw"] / 2 + (cx + 0.5 - W / 2) * s
        py = img["nh"] / 2 + (cy + 0.5 - H / 2) * s
        x, y = img["x"] + px * img["w"] / img["nw"], img["y"] + py * img["h"] / img["nh"]
        for _ in range(2):  # the first move fetches the picture's values
            b.mouse("mouseMoved", x, y)
            time.sleep(0.3)
        shown = b.wait_for(f"(t => t.includes(' at cell ({cx}, {cy}, {D // 2})') && t)"
                           "(document.getElementById('readout').textContent)")
        value = float(shown.split(" = ")[1].split(" ")[0])
        self.assertAlmostEqual(value, want, delta=1e-5 * max(1.0, abs(want)), msg=shown)
        self.assertLess(want, float(plane.max()) - 0.1)  # a cell that stands out, not the background
        if os.environ.get("CUVIEW_WEB_SCREENSHOT"):
            b.screenshot(os.environ["CUVIEW_WEB_SCREENSHOT"])
        # A click on Step: the paused run takes one step, as cuview-ctl sees it, and the page shows it.
        b.click("step")
        deadline = time.time() + 20
        while ctl_status("web")["step"] != STEPS + 1 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(ctl_status("web")["step"], STEPS + 1)
        b.wait_for(f"document.getElementById('status').textContent.includes('step {STEPS + 1}')")
        # A parameter changed in the page reaches the run.
        b.js("(() => { const i = [...document.querySelectorAll('#params label')].find(l => l.firstChild.textContent "
             "=== 'F').querySelector('input'); i.value = '0.033'; i.dispatchEvent(new Event('change')); })()")
        while ctl_status("web")["params"]["F"] != 0.033 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(ctl_status("web")["params"]["F"], 0.033)
        # The tab closed: the gateway lets the run go (its connection leaves the publisher's clients).
        watching = ctl_status("web")["clients"]
        self.assertGreaterEqual(watching, 2)  # the gateway's for the page, and this cuview-ctl
        b.call("Page.navigate", url="about:blank")
        deadline = time.time() + 60
        while ctl_status("web")["clients"] != watching - 1 and time.time() < deadline:
            time.sleep(0.2)
        self.assertEqual(ctl_status("web")["clients"], watching - 1)


    def test_orbiting_a_volume_moves_a_known_balls_disc_where_geometry_puts_it(self):
        # A ball of radius r, 10 cells right of the centre of an n³ cube, published from this process.
        n, r = 48, 9
        z, y, x = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
        c = (n - 1) / 2
        ball = (((x - c - 10) ** 2 + (y - c) ** 2 + (z - c) ** 2) <= r * r).astype(np.float32)
        ready, done = threading.Event(), threading.Event()

        def publish():
            grid = cuview.Grid(origin=(2.0, -1.0, 0.25), spacing=0.5, units="m")  # z, y, x: where the program's cells lie
            with cuview.Publisher("ball", fields={"b": ball}, backend="host", fps=0, max_cost=1, grid=grid) as pub:
                step = 0
                while not done.is_set():
                    step += 1
                    pub.publish(step, 0.1 * step, {"b": ball})
                    ready.set()
                    time.sleep(0.02)
        publisher = threading.Thread(target=publish)
        publisher.start()
        try:
            self.assertTrue(ready.wait(30))
            b = self.browser
            b.call("Page.enable")
            b.call("Page.navigate", url=self.url + "&name=ball")
            b.wait_for("document.getElementById('status').textContent.includes('ball ·')")
            b.js("(() => { for (const [id, v] of [['mode', 'mip'], ['colormap', 'grayscale']]) { "
                 "const s = document.getElementById(id); s.value = v; s.dispatchEvent(new Event('input')); } })()")
            # The page opens a volume at azimuth 35°, elevation 25°; a drag of half a degree a pixel
            # turns it to face the ball's offset (0°, 0°), then a quarter turn further (90°).
            for dx, dy, azimuth in ((-70, -50, 0), (180, 0, 90)):
                v = b.rect("view")
                b.drag(v["x"] + v["width"] / 2, v["y"] + v["height"] / 2, dx, dy)
                b.wait_for(f"state.shown && state.shown.view.mode === 'mip' && Math.abs(state.shown.view.azimuth - "
                           f"{azimuth}) < 1 && Math.abs(state.shown.view.elevation) < 1 && "
                           "state.shown.view.colormap === 'grayscale'")
                w, h, azimuth = b.js("[state.shown.w, state.shown.h, state.shown.view.azimuth]")
                shot = b.pixels("picture", w)
                self.assertEqual(shot.shape[:2], (h, w))
                disc = shot.mean(axis=2) > 128  # the ball white, the rest black (or the page behind)
                ys, xs = np.nonzero(disc)
                s = min(w, h) / (n * np.sqrt(3))  # pixels per cell: the cube's diagonal spans the shorter side
                want_x = w / 2 + 10 * s * np.cos(np.radians(azimuth))
                self.assertAlmostEqual(xs.mean() + 0.5, want_x, delta=2, msg=f"azimuth {azimuth}")
                self.assertAlmostEqual(ys.mean() + 0.5, h / 2, delta=2, msg=f"azimuth {azimuth}")
                self.assertAlmostEqual(disc.sum(), np.pi * (r * s) ** 2, delta=0.15 * np.pi * (r * s) ** 2)
            # Its middle plane: the pointer over a cell reads the cell and its place on the program's grid.
            b.js("(() => { const s = document.getElementById('mode'); s.value = 'plane'; s.dispatchEvent(new Event('input')); })()")
            b.wait_for("state.shown && state.shown.view.mode === 'plane'")
            pic = b.rect("picture")
            for _ in range(2):  # the first move fetches the picture's values
                b.mouse("mouseMoved", pic["x"] + pic["width"] * 0.6, pic["y"] + pic["height"] * 0.5)
                time.sleep(0.3)
            shown = b.wait_for("(t => t.includes(' m') && t)(document.getElementById('readout').textContent)")
            cell = [int(v) for v in shown.split("at cell (")[1].split(")")[0].split(", ")]
            place = [float(v) for v in shown.split(", at (")[1].split(")")[0].split(", ")]
            self.assertEqual(cell[2], n // 2, shown)  # the middle z-plane
            for got, c, origin in zip(place, cell, (0.25, -1.0, 2.0)):  # x, y, z
                self.assertAlmostEqual(got, origin + 0.5 * c, places=3, msg=shown)
        finally:
            done.set()
            publisher.join(30)

if __name__ == "__main__":
    unittest.main(verbosity=2)
