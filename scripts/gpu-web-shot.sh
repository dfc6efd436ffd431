#!/usr/bin/env bash
# The README's picture of the web page on a GPU flow: Debian's chromium-headless-shell (GPU hosts
# have no browser) opens the URL a gateway printed, shows a CUDA lbm3d run's volume (the mode given,
# emission by default: scripts/gpu-web-shot.sh mip) and saves the page. The browser travels in two device calls (the carry limit is 64 MiB a call):
#   1. carry .hs (hs.xz: the shell, xz -9e), and run: mkdir -p /tmp/hsbin && xz -dc .hs/hs.xz >/tmp/hsbin/chromium-headless-shell
#   2. carry .device and .hs2 (hs2.txz: its libraries, NSS modules, resources), and run this script.
# Making the two, here (a Debian 12 machine with the shell installed: apt-get install chromium-headless-shell):
#   mkdir -p .hs .hs2/s/lib .hs2/s/chromium && xz -9e -c /usr/lib/chromium/chromium-headless-shell >.hs/hs.xz
#   ldd /usr/lib/chromium/chromium-headless-shell | awk '/=> \//{print $3}' | grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*|libgcc_s|libstdc\+\+)\.so' | xargs -I{} cp -L {} .hs2/s/lib/
#   cp -L /usr/lib/x86_64-linux-gnu/nss/*.so .hs2/s/lib/; cp /usr/lib/chromium/{icudtl.dat,headless_*.pak,*.bin} .hs2/s/chromium/
#   tar cJf .hs2/hs2.txz -C .hs2/s . && rm -rf .hs2/s      (and /.hs/ /.hs2/ in .git/info/exclude)
# The device tool keeps /tmp between calls while the machine is warm (30 s idle): call 2 soon after 1.
# Writes $out/screenshot-web-gpu.png.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh
export PYTHONPATH=$PWD/.device/py:$PWD/tests/python${PYTHONPATH:+:$PYTHONPATH}
export XDG_RUNTIME_DIR=$(mktemp -d) && chmod 700 "$XDG_RUNTIME_DIR"
hs=/tmp/hsbin
mkdir -p /tmp/hs2 && tar xJf .hs2/hs2.txz -C /tmp/hs2 && cp /tmp/hs2/chromium/* "$hs/" && chmod +x "$hs/chromium-headless-shell"
cat >"$hs/run-headless-shell" <<EOS
#!/usr/bin/env bash
export LD_LIBRARY_PATH=/tmp/hs2/lib:\$LD_LIBRARY_PATH
exec "$hs/chromium-headless-shell" "\$@"
EOS
chmod +x "$hs/run-headless-shell"
export CUVIEW_CHROMIUM=$hs/run-headless-shell
start_web_flow || exit 1
sleep 3
python3 - "$url" "$out/screenshot-web-gpu.png" "${1:-emission}" <<'PY' 2>&1 | tee -a "$out/summary.txt"
import sys, time
from devtools import Browser
url, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
b = Browser()
try:
    b.call("Page.enable")
    b.call("Page.navigate", url=url + "&name=flow")
    b.wait_for("document.getElementById('status').textContent.includes('flow · step')", timeout=60)
    b.js("(() => { for (const [id, v] of [['field', 'speed'], ['mode', '" + mode + "']]) { const s = document.getElementById(id); "
         "s.value = v; s.dispatchEvent(new Event('input')); } })()")
    b.wait_for(f"state.shown && state.shown.view.mode === '{mode}'", timeout=60)
    time.sleep(8)  # live plots fill a little, new pictures come
    r = b.rect("picture")
    b.mouse("mouseMoved", r["x"] + r["width"] * 0.55, r["y"] + r["height"] * 0.5)
    time.sleep(1)
    b.screenshot(path)
    print("gpu-web-shot: saved", path, "-", b.js("document.getElementById('status').textContent"))
finally:
    b.close()
PY
kill $gateway $daemon; wait
