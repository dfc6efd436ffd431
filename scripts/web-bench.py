#!/usr/bin/env python3
"""The web viewer's figures (docs/benchmarks.md "The web viewer"): a gateway with --http in front of
a run the caller started, and the page's live connection (/api/live) opened as the page opens it.

  scripts/web-bench.py --url URL --name RUN [--field F] [--mode plane|mip|emission|isosurface]
                       [--seconds 10] [--size 1100x640] [--browser]

Without --browser a WebSocket client does what the page does (python3-websocket): first picture after
the connection opens, pictures a second with one in flight, bytes a picture, and the run's cost
(stats) while it is watched. With --browser Debian's chromium, headless, opens the URL itself: first
picture after the navigation starts, and pictures a second drawn in the page."""
import argparse
import json
import os
import statistics
import struct
import sys
import time
import urllib.parse

import websocket


def live(url, name, field, mode, size, seconds):
    parts = urllib.parse.urlsplit(url)
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    w, h = (int(v) for v in size.split("x"))
    t0 = time.perf_counter()
    ws = websocket.create_connection(f"ws://{parts.netloc}/api/live?name={name}", timeout=30,
                                     header=[f"Cookie: cuview_token={token}"], origin=f"http://{parts.netloc}")
    described = json.loads(ws.recv())["describe"]
    view = {"field": field or described["fields"][0]["name"], "mode": mode, "width": w, "height": h, "azimuth": 35,
            "elevation": 25, "lo": 0, "hi": 1}
    stats, sizes, first, count, ident, first_range = [], [], None, 0, 0, True
    ws.send(json.dumps({"view": view, "id": ident}))
    end = None
    while end is None or time.perf_counter() < end:
        opcode, data = ws.recv_data()
        if opcode == websocket.ABNF.OPCODE_TEXT:
            m = json.loads(data)
            if "stats" in m and first is not None:
                stats.append(m["stats"])
            if "error" in m and "ask again" in m["error"]:  # no picture within 3 s (the budget): ask again, as the page does
                time.sleep(1)
                ident += 1
                ws.send(json.dumps({"view": view, "id": ident}))
            elif "error" in m:
                sys.exit(f"web-bench: the gateway refused: {m['error']}")
            if m.get("unchanged"):  # no newer picture yet: ask again in 0.1 s, as the page does
                time.sleep(0.1)
                ident += 1
                ws.send(json.dumps({"view": view, "id": ident}))
            continue
        n = struct.unpack("<I", data[:4])[0]
        head = json.loads(data[4:4 + n])
        if first is None:
            first = time.perf_counter() - t0
            end = time.perf_counter() + seconds
            t_count = time.perf_counter()
        else:
            count += 1
        sizes.append(len(data) - 4 - n)
        if "range" in head and mode != "emission" and first_range:  # the page fits the colours once a view
            view["lo"], view["hi"] = head["range"]
            first_range = False
        ident += 1
        ws.send(json.dumps({"view": view, "id": ident}))
    elapsed = time.perf_counter() - t_count
    ws.close()
    costs = [max(p["cost"] for p in s) for s in stats[len(stats) // 2:]] or [0]  # the window after it settled
    return {"first_picture_ms": round(first * 1000, 1), "pictures_per_s": round(count / elapsed, 2),
            "bytes_per_picture_median": int(statistics.median(sizes)), "cost_while_watched": round(max(costs), 4),
            "budget": stats[-1][0]["max_cost"] if stats else None, "steps_per_s": stats[-1][0]["steps_per_second"] if stats else None}


def browser(url, name, field, mode, seconds):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
    from devtools import Browser  # the browser test's own DevTools driver

    b = Browser()
    try:
        b.call("Page.enable")
        t0 = time.perf_counter()
        b.call("Page.navigate", url=f"{url}&name={name}")
        b.wait_for("typeof state !== 'undefined' && state.shown", timeout=60)
        first = time.perf_counter() - t0
        if mode != "plane" or field:
            b.js(f"(() => {{ for (const [id, v] of [['field', '{field}'], ['mode', '{mode}']]) {{ if (!v) continue; "
                 "const s = document.getElementById(id); s.value = v; s.dispatchEvent(new Event('input')); } })()")
            b.wait_for(f"state.shown && state.shown.view.mode === '{mode}'", timeout=60)
        b.js("window.benchCount = 0; const draw0 = shown; shown = (h, body) => { window.benchCount++; "
             "return draw0(h, body); }")
        time.sleep(seconds)
        count = b.js("window.benchCount")
        return {"first_picture_after_navigation_ms": round(first * 1000, 1), "pictures_per_s_in_page": round(count / seconds, 2)}
    finally:
        b.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True, help="the URL cuview-gateway --http printed")
    ap.add_argument("--name", required=True)
    ap.add_argument("--field", default="")
    ap.add_argument("--mode", default="plane")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--size", default="1100x640", help="the picture's size, as the page's view asks it")
    ap.add_argument("--browser", action="store_true")
    a = ap.parse_args()
    result = browser(a.url, a.name, a.field, a.mode, a.seconds) if a.browser else \
        live(a.url, a.name, a.field, a.mode, a.size, a.seconds)
    print(json.dumps({"run": a.name, "mode": a.mode, **result}))


if __name__ == "__main__":
    main()
