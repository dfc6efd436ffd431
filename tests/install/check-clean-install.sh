#!/usr/bin/env bash
# The issue's "done when", on a clean Debian 12 booted with systemd as PID 1:
#   sudo apt install ./build/cuview_*.deb           (README, as printed: apt pulls the dependencies)
#   systemctl --user start cuview-compute@run1      (README's "Run it as a service", as printed)
#   cuview-gui --name run1                          (in a real X window: Xvfb, xcb)
#   systemctl --user restart cuview-compute@run1    (continues from its checkpoint; the viewer re-attaches)
#   pip install ./python in a venv                  (README's lines), python3 -m cuview status run1
#   sudo apt remove cuview                          (everything it installed goes)
# The root is made by mmdebstrap from the Debian mirror apt uses here (minbase plus systemd, dbus-user-session,
# sudo and xvfb), booted by systemd-nspawn; clean-root/inside.sh runs there as a boot service.
# Needs root, mmdebstrap and systemd-nspawn (scripts/install-deps.sh) and the Debian mirror;
# without them it says what is missing and exits 77 (CTest: skipped).
#   tests/install/check-clean-install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "check-clean-install: skipped: $*" >&2; exit 77; }
fail() { echo "check-clean-install: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || skip "mmdebstrap and systemd-nspawn need root"
for tool in mmdebstrap systemd-nspawn; do
  command -v $tool >/dev/null || skip "$tool is not installed (scripts/install-deps.sh installs it)"
done
# The mirror this machine's apt uses (deb822 or one-line sources), else Debian's own.
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1 || true)
[[ -n $mirror ]] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
  /etc/apt/sources.list 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
curl -fsS --max-time 20 -o /dev/null "$mirror/dists/bookworm/Release" 2>/dev/null ||
  skip "Debian's mirror $mirror cannot be reached: a clean root needs it"
work=$(mktemp -d /var/tmp/cuview-clean-XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- the .deb, as README makes it
deb=$("$src/tests/install/make-deb.sh" "$build" "$work/out") || fail "the .deb could not be made"

# ---- a clean Debian 12 with systemd. The host's apt cache (if any) seeds the root's, so apt
# downloads only what the host lacks; apt checks every cached file against the mirror's hashes.
root=$work/root
started=$SECONDS
mmdebstrap --variant=minbase --include=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,sudo,xvfb,procps \
  --aptopt='Acquire::Retries "3"' --skip=cleanup/apt/lists --skip=cleanup/apt/cache \
  --setup-hook='mkdir -p "$1/var/cache/apt/archives"; find /var/cache/apt/archives -maxdepth 1 -name "*.deb" -exec cp -l -t "$1/var/cache/apt/archives" {} + 2>/dev/null || true' \
  bookworm "$root" "$mirror" </dev/null >"$work/mmdebstrap.log" 2>&1 ||
  { tail -30 "$work/mmdebstrap.log" >&2; fail "mmdebstrap could not make a clean Debian 12 root"; }
echo "check-clean-install: clean Debian 12 root in $((SECONDS - started)) s"
find /var/cache/apt/archives -maxdepth 1 -name "*.deb" -exec cp -l -n -t "$root/var/cache/apt/archives" {} + 2>/dev/null || true

systemd-nspawn --quiet --register=no --keep-unit -D "$root" /bin/true </dev/null >"$work/nspawn.log" 2>&1 ||
  { cat "$work/nspawn.log" >&2; skip "systemd-nspawn cannot run a container on this machine (see above)"; }

# The source tree a user has: README, python/ and the built .deb.
mkdir -p "$root/srv/cuview/build"
cp "$src/README.md" "$root/srv/cuview/"
cp -r "$src/python" "$root/srv/cuview/python"
find "$root/srv/cuview/python" -name __pycache__ -prune -exec rm -rf {} +
cp "$deb" "$root/srv/cuview/build/"
install -m 755 "$src/tests/install/clean-root/inside.sh" "$root/usr/local/sbin/cuview-clean-test"
cat >"$root/etc/systemd/system/cuview-clean-test.service" <<'EOF'
[Unit]
Description=cuview on a clean Debian 12 (README's commands)
After=multi-user.target
[Service]
Type=simple
ExecStart=/usr/local/sbin/cuview-clean-test
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -s ../cuview-clean-test.service "$root/etc/systemd/system/multi-user.target.wants/"

# ---- boot it; inside.sh powers it off
started=$SECONDS
rc=0
timeout 900 systemd-nspawn --quiet --register=no --keep-unit --machine=cuview-clean -D "$root" --boot \
  >"$work/boot.log" 2>&1 </dev/null || rc=$?
echo "check-clean-install: booted, tested and powered off in $((SECONDS - started)) s (nspawn exit $rc)"
log=$root/root/clean-test.log
result=$(cat "$root/root/clean-test.result" 2>/dev/null || true)
if [[ $result != PASS ]]; then
  [[ -f $log ]] && cat "$log" >&2
  [[ -f $log ]] || tail -40 "$work/boot.log" >&2
  fail "${result:-the clean system gave no result (nspawn exit $rc)}"
fi
grep -E '^(\$ |ok: |clean-test:)' "$log"
echo "check-clean-install: $(basename "$deb") on a clean Debian 12: passed"
