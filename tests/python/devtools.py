"""A headless Chromium driven over the DevTools protocol (python3-websocket; nothing downloaded): the
web viewer's browser test, scripts/web-bench.py --browser and the GPU host's screenshot of the page
(scripts/gpu-web.sh) use it. CUVIEW_CHROMIUM names the browser (default: Debian's chromium)."""
import base64
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket

CHROMIUM = os.environ.get("CUVIEW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


class Browser:
    """One headless chromium and its page's DevTools connection."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="cuview-chromium-")
        headless = [] if "headless-shell" in CHROMIUM else ["--headless=new"]  # the old shell is headless alone
        self.proc = subprocess.Popen([CHROMIUM, *headless, "--no-sandbox", "--disable-gpu",
                                      "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={self.profile}",
                                      "--remote-debugging-port=0", "--window-size=1100,700", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 60
        def active_port():
            if not os.path.exists(port_file):
                return None
            with open(port_file) as f:
                words = f.read().split()
            return int(words[0]) if words else None
        while (port := active_port()) is None:
            if time.time() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"{CHROMIUM} did not start its DevTools endpoint within 60 s")
            time.sleep(0.1)
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg["result"]

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return r["result"].get("value")

    def wait_for(self, expression, timeout=30):
        deadline = time.time() + timeout
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.time() > deadline:
                status = self.js("document.getElementById('status').textContent")
                raise AssertionError(f"the page never showed {expression!r}; its status line: {status!r}")
            time.sleep(0.1)

    def mouse(self, kind, x, y, **extra):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def click(self, element_id):
        r = self.js(f"JSON.stringify(document.getElementById('{element_id}').getBoundingClientRect())")
        rect = json.loads(r)
        x, y = rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)

    def drag(self, x, y, dx, dy):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        for k in range(1, 11):
            self.mouse("mouseMoved", x + dx * k / 10, y + dy * k / 10, button="left", buttons=1)
        self.mouse("mouseReleased", x + dx, y + dy, button="left", clickCount=1)

    def rect(self, element_id):
        return json.loads(self.js(f"JSON.stringify(document.getElementById('{element_id}').getBoundingClientRect())"))

    def pixels(self, element_id, width):
        """A screenshot of the element, `width` pixels across (its own pixels for a canvas), as RGB."""
        r = self.rect(element_id)
        shot = self.call("Page.captureScreenshot", format="png", clip={"x": r["x"], "y": r["y"], "width": r["width"],
                                                                        "height": r["height"], "scale": width / r["width"]})
        import numpy as np
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB"))

    def screenshot(self, path):
        """The whole page as a PNG file."""
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self):
        self.ws.close()
        self.proc.terminate()
        self.proc.wait(30)
        shutil.rmtree(self.profile, ignore_errors=True)
