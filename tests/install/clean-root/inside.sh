#!/bin/bash
# Runs inside a freshly booted clean Debian 12 (systemd as PID 1, see ../check-clean-install.sh)
# as the unit cuview-clean-test.service, as root. A user, alice, does what README tells a newcomer:
# installs the .deb with apt, runs the daemon as a systemd user service, watches it in cuview-gui,
# restarts the service, installs the Python package with pip into a venv. The result goes to
# /root/clean-test.result (PASS or FAIL: why), the log to /root/clean-test.log; then it powers off.
#   /srv/cuview holds README.md, python/ and build/cuview_*.deb, as a source tree a user has.
set -uo pipefail
exec >/root/clean-test.log 2>&1
export SYSTEMD_PAGER="" PAGER=cat
finish() {
  echo "$1" >/root/clean-test.result
  echo "clean-test: $1"
  systemctl poweroff --no-block
  exit 0
}
fail() { finish "FAIL: $*"; }
step() { echo; echo "==== $*"; }
# as_alice CMD: CMD in a login shell of alice (PAM: pam_systemd sets XDG_RUNTIME_DIR and the bus),
# in the source tree.
as_alice() { runuser -l alice -c "cd /srv/cuview && $1"; }
# readme_line START [AFTER]: README's first line starting with START (after the line matching AFTER).
readme_line() {
  local text
  text=$(sed -n "/${2:-^}/,\$p" /srv/cuview/README.md | START=$1 awk 'index($0, ENVIRON["START"]) == 1 { print; exit }')
  [[ -n $text ]] ||
    fail "README.md has no line starting '$1'${2:+ after '$2'}"
  printf '%s\n' "$text"
}
ctl_json() { as_alice "cuview-ctl --name run1 status --json" 2>/dev/null; }
json_int() { sed -n "s/^  \"$1\": \([0-9]*\),*\$/\1/p"; }

step "boot"
for _ in $(seq 120); do
  state=$(systemctl is-system-running 2>/dev/null)
  [[ $state == running || $state == degraded ]] && break
  sleep 0.5
done
echo "system: $state"
[[ $state == running ]] || { systemctl --failed --no-pager; fail "the clean system did not boot cleanly: $state"; }
grep PRETTY_NAME /etc/os-release
echo 'debconf debconf/frontend select Noninteractive' | debconf-set-selections

step "a user with sudo, whose services keep running (README: loginctl enable-linger)"
useradd -m -s /bin/bash alice || fail "useradd alice failed"
echo 'alice ALL=(ALL) NOPASSWD: ALL' >/etc/sudoers.d/alice
chown -R alice:alice /srv/cuview
loginctl enable-linger alice || fail "loginctl enable-linger alice failed"
for _ in $(seq 100); do [[ -S /run/user/1000/systemd/private ]] && break; sleep 0.1; done
[[ -S /run/user/1000/systemd/private ]] || fail "alice's systemd user manager did not start"

step "README: install the .deb"
install=$(readme_line "sudo apt install ./build/cuview_*.deb")
echo "\$ $install"
as_alice "yes | $install" || fail "'$install' failed on a clean Debian 12"
dpkg-query -W -f '${Package} ${Version} ${Status}\n' cuview
dpkg-query -W -f '${Status}' cuview | grep -q "install ok installed" || fail "the cuview package is not installed after '$install'"
version=$(as_alice "cuview-gui --version") || fail "the installed cuview-gui --version failed"
echo "$version"
[[ $version == "cuview-gui "* ]] || fail "cuview-gui --version printed '$version'"

step "README: Run it as a service"
conf=$(readme_line "mkdir -p ~/.config/cuview && printf" "^### Run it as a service")
start=$(readme_line "systemctl --user start cuview-compute@run1" "^### Run it as a service")
gui=$(readme_line "cuview-gui --name run1" "^### Run it as a service")
restart="systemctl --user restart cuview-compute@run1"
grep -qF "\`$restart\`" /srv/cuview/README.md || fail "README.md no longer says \`$restart\`"
for line in "$conf" "$start"; do
  echo "\$ $line"
  as_alice "$line" || { as_alice "systemctl --user status --no-pager cuview-compute@run1"; fail "'$line' failed"; }
done
as_alice "systemctl --user is-active cuview-compute@run1" | grep -qx active || fail "cuview-compute@run1 is not active after '$start'"
as_alice "cuview-ctl --name run1 status" || fail "cuview-ctl cannot reach the service's daemon right after '$start' (Type=notify: it said READY=1)"

# The viewer, as printed, in a real X window (Xvfb stands in for alice's display).
as_alice "Xvfb :7 -screen 0 1280x800x24 -nolisten tcp >/tmp/xvfb.log 2>&1 &"
for _ in $(seq 50); do [[ -S /tmp/.X11-unix/X7 ]] && break; sleep 0.1; done
echo "\$ $gui"
as_alice "export DISPLAY=:7 QT_QPA_PLATFORM=xcb; $gui >/tmp/gui.log 2>&1 &"
# viewer_reads N: the daemon has a reader that takes frames (N published since it looked first).
# Two minutes is a failure guard only: under load the cost budget spaces a 1600x400 run's frames
# seconds apart (the user sees a viewer that reads, not a rate).
viewer_reads() {
  local first="" json readers published until=$((SECONDS + 120))
  while ((SECONDS < until)); do
    json=$(ctl_json)
    readers=$(json_int readers <<<"$json") published=$(json_int frames_published <<<"$json")
    if [[ ${readers:-0} -ge 1 && -n $published ]]; then
      [[ -z $first ]] && first=$published
      ((published - first >= $1)) && return 0
    fi
    sleep 0.1
  done
  return 1
}
viewer_reads 5 || { cat /tmp/gui.log; fail "'$gui' did not attach to run1 and read frames (2 minutes)"; }
pgrep -u alice -x cuview-gui >/dev/null || fail "cuview-gui is not running"
echo "ok: cuview-gui --name run1 reads frames of the service's daemon"

step "README: restart the service; it continues from its final checkpoint, the viewer re-attaches"
echo "\$ $restart"
as_alice "$restart" || fail "'$restart' failed"
journal=$(grep -o 'journalctl --user -u cuview-compute@run1' /srv/cuview/README.md | head -1)
[[ -n $journal ]] || fail "README.md no longer names 'journalctl --user -u cuview-compute@run1'"
echo "\$ $journal"
as_alice "$journal --no-pager" >/tmp/journal.txt 2>&1 || { cat /tmp/journal.txt; fail "'$journal' failed"; }
cat /tmp/journal.txt
final=$(sed -n 's/.*final checkpoint: .*step-0*\([0-9][0-9]*\)\.h5.*/\1/p' /tmp/journal.txt | tail -1)
[[ -n $final ]] || fail "the journal shows no final checkpoint (step-N.h5) after '$restart'"
grep -q "restored step $final " /tmp/journal.txt || fail "after '$restart' the daemon did not continue from step $final"
grep -q "no checkpoint in .* yet: starting from the initial state" /tmp/journal.txt || fail "the first start does not say it had no checkpoint"
! grep -q '<[0-7]>' /tmp/journal.txt || fail "journal lines show a literal <N> priority prefix (journald did not parse it)"
as_alice "$journal -p info..info --no-pager" | grep -q "ready: attach with" || fail "'ready' is not logged at priority info"
step_now=$(ctl_json | json_int step)
[[ ${step_now:-0} -ge $final ]] || fail "the restarted daemon is at step $step_now, before its checkpoint's $final"
viewer_reads 5 || { cat /tmp/gui.log; fail "cuview-gui did not re-attach by itself to the restarted service (2 minutes)"; }
pgrep -u alice -x cuview-gui >/dev/null || fail "cuview-gui exited when the service restarted"
echo "ok: restarted from its final checkpoint at step $final; the viewer re-attached by itself and reads frames (step $step_now)"

step "Restart=on-failure: a killed daemon is started again, from the newest checkpoint"
as_alice "systemctl --user kill -s KILL cuview-compute@run1" || fail "systemctl --user kill failed"
for _ in $(seq 100); do
  [[ $(as_alice "systemctl --user show -p NRestarts --value cuview-compute@run1") -ge 1 ]] &&
    as_alice "systemctl --user is-active -q cuview-compute@run1" && break
  sleep 0.1
done
as_alice "systemctl --user show -p NRestarts -p ActiveState cuview-compute@run1"
[[ $(as_alice "systemctl --user show -p NRestarts --value cuview-compute@run1") -ge 1 ]] || fail "systemd did not restart the killed daemon"
as_alice "$journal --no-pager" | grep -c "restored step" | grep -qx 2 || fail "the daemon restarted after a failure did not restore its newest checkpoint"
viewer_reads 5 || { cat /tmp/gui.log; fail "cuview-gui did not re-attach after the daemon was killed and restarted"; }
echo "ok: killed with SIGKILL, started again by systemd from the newest checkpoint; the viewer re-attached"

step "README: the Python package, Debian's python3 and pip install ./python"
as_alice "python3 -m cuview status run1" | grep "^run1: lbm 1600x400" || fail "Debian's python3 -m cuview status run1 (the .deb's package) failed"
py=$(sed -n '/^### Python/,/^### /p' /srv/cuview/README.md | sed -n '/^```sh/,/^```/p' | grep -v '^```' | grep -A3 '^sudo apt install python3-venv') ||
  fail "README's Python section has no block starting 'sudo apt install python3-venv'"
while IFS= read -r line; do
  [[ -z $line ]] && continue
  echo "\$ $line"
  out=$(as_alice "yes | $line" 2>&1) || { echo "$out"; fail "'$line' failed"; }
  echo "$out" | tail -3
done <<<"$py"
as_alice "~/venv/bin/python3 -m cuview status run1" | grep "^run1: lbm 1600x400" || fail "the venv's python3 -m cuview status run1 failed"
as_alice "cd ~ && ~/venv/bin/python3 -c 'import cuview, sys; print(cuview.__file__); sys.exit(\"/venv/\" not in cuview.__file__)'" ||
  fail "import cuview in the venv does not use the pip-installed package"
echo "ok: Debian's python3 and the venv's (pip install ./python) both show run1"

step "stop"
pkill -u alice -x cuview-gui
as_alice "systemctl --user stop cuview-compute@run1"
state=$(as_alice "systemctl --user show -p ActiveState --value cuview-compute@run1")
[[ $state == inactive ]] || fail "cuview-compute@run1 is '$state' after systemctl --user stop (expected inactive, not failed)"
echo "ok: systemctl --user stop leaves it inactive"

step "apt remove takes it all away"
as_alice "yes | sudo apt remove cuview" >/tmp/remove.log 2>&1 || { cat /tmp/remove.log; fail "sudo apt remove cuview failed"; }
for path in /usr/bin/cuview-compute /usr/bin/cuview-gui /usr/lib/systemd/user/cuview-compute@.service \
  /usr/share/applications/cuview-gui.desktop /usr/lib/python3/dist-packages/cuview; do
  [[ ! -e $path ]] || fail "$path is still there after apt remove cuview"
done
! ldconfig -p | grep -q libcuview || fail "ldconfig still lists libcuview after apt remove cuview"
echo "ok: sudo apt remove cuview removed the programs, the unit, the desktop entry, the Python package and the library"
finish PASS
