#!/usr/bin/env bash
# Runs the commands README.md prints under "### Your own simulation" exactly as printed, as a
# newcomer pastes them: in a copy of the source tree whose build directory is build/ (the tested
# build), with HOME a scratch directory, so that ~/.local is a scratch prefix. A line ending in `&`
# starts a program in the background: it must answer `status` and serve verified frames, and it is
# shut down at the end (exit status 0). A viewer line runs offscreen until it attaches (where the
# viewer is built); the command after "# or:" on a line runs too. Any other line must succeed.
# Every shell command docs/sdk.md prints must be one of these, so neither document can drift from
# what runs here.
#   tests/install/check-readme-sdk.sh BUILD_DIR
set -euo pipefail
source=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
scratch=$(mktemp -d /tmp/cuview-readme-XXXXXX)
checkout=$scratch/checkout
export HOME=$scratch/home XDG_RUNTIME_DIR=$scratch/run XDG_STATE_HOME=$scratch/state
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME
mkdir -p "$HOME" "$checkout"
# `python3` is Debian's, which scripts/install-deps.sh gives NumPy (a pyenv or venv python3 first
# on PATH may lack it), as on the newcomer's Debian machine the README addresses.
if [[ -x /usr/bin/python3 ]]; then
  mkdir -p "$scratch/bin" && ln -s /usr/bin/python3 "$scratch/bin/python3" && export PATH=$scratch/bin:$PATH
fi
mkdir -m 700 "$XDG_RUNTIME_DIR"
# mpirun as root (CI runs as root) wants Open MPI's consent, and 2 ranks may outnumber the cores:
# the environment gives both, so that README.md's mpirun line runs as printed.
export OMPI_MCA_rmaps_base_oversubscribe=1
if (($(id -u) == 0)); then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
pids=() names=()
cleanup() {
  for p in "${pids[@]}"; do { kill "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "check-readme-sdk: $*" >&2; exit 1; }
ctl() { "$build/bin/cuview-ctl" "$@"; }

# sh_commands FILE [HEADING]: the lines of FILE's ```sh blocks, only those under HEADING (up to the
# next heading of its level or above) when given.
sh_commands() {
  awk -v heading="${2-}" '
    BEGIN { inside = heading == "" }
    /^```/ { if (fence) { fence = 0 } else { fence = 1; sh = $0 == "```sh" } next }
    fence { if (sh && inside) print; next }
    /^#+ / && heading != "" {
      if ($0 == heading) { inside = 1; level = index($0, " ") }
      else if (inside && index($0, " ") <= level) inside = 0
    }' "$1"
}
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$1"; }
# The command of a line (its comment dropped), and the one its comment offers after "or:".
command_of() { trim "${1%%#*}"; }
alternative_of() { if [[ $1 == *"# or: "* ]]; then trim "${1#*# or: }"; fi; }

mapfile -t lines < <(sh_commands "$source/README.md" "### Your own simulation")
((${#lines[@]} > 0)) || fail "README.md has no \`\`\`sh block under '### Your own simulation'"
declare -A printed=()
for line in "${lines[@]}"; do
  for c in "$(command_of "$line")" "$(alternative_of "$line")"; do [[ -n $c ]] && printed[$c]=1; done
done
while IFS= read -r line; do
  for c in "$(command_of "$line")" "$(alternative_of "$line")"; do
    [[ -z $c || -n ${printed[$c]-} ]] ||
      fail "docs/sdk.md prints '$c', which README.md's 'Your own simulation' does not, so no test runs it"
  done
done < <(sh_commands "$source/docs/sdk.md")

# The source tree as a clone has it, with the tested build as its build/.
tar -C "$source" --exclude=./.git --exclude='./build*' --exclude=./.cache --exclude=./.device -cf - . |
  tar -C "$checkout" -xf -
ln -s "$build" "$checkout/build"
cd "$checkout"

# foreground COMMAND: runs it to its end; it must succeed.
foreground() {
  local log=$scratch/command.log rc=0
  timeout 300 bash -c "$1" >"$log" 2>&1 || rc=$?
  ((rc != 124)) || fail "'$1' did not finish within 300 s (a program that keeps running needs & in README.md)"
  ((rc == 0)) || { cat "$log" >&2; fail "README.md's '$1' failed with exit status $rc"; }
}

# name_in COMMAND: the value of its --name.
name_in() { sed -n 's/.*--name \([^ ]*\).*/\1/p' <<<"$1"; }

# background COMMAND: starts the program; it must answer status and serve verified frames.
background() {
  local name log
  name=$(name_in "$1")
  [[ -n $name ]] || fail "'$1' names no publisher (--name): the test cannot reach it"
  log=$scratch/$name.log
  # `env`: a line may begin with VAR=value (PYTHONPATH=python python3 …), which exec alone cannot run.
  bash -c "exec env $1" >"$log" 2>&1 &
  pids+=($!) names+=("$name")
  for _ in $(seq 300); do
    ctl --name "$name" status >/dev/null 2>&1 && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$log" >&2; fail "README.md's '$1' exited"; }
    sleep 0.1
  done
  ctl --name "$name" attach --frames 10 --verify >/dev/null ||
    { cat "$log" >&2; fail "README.md's '$1' does not serve verified frames (cuview-ctl attach --verify)"; }
}

# viewer COMMAND: the viewer, offscreen, must attach to the publisher it names and keep running.
viewer() {
  local name pid attached=""
  if [[ ! -x build/bin/cuview-gui ]]; then
    echo "check-readme-sdk: '$1' not run: this build has no viewer"
    return
  fi
  name=$(name_in "$1")
  QT_QPA_PLATFORM=offscreen bash -c "exec $1" >"$scratch/viewer.log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do
    kill -0 "$pid" 2>/dev/null || { cat "$scratch/viewer.log" >&2; fail "README.md's '$1' exited"; }
    ctl --name "$name" status --json | grep -q '"clients": [1-9]' && { attached=yes; break; }
    sleep 0.1
  done
  kill "$pid"
  wait "$pid" || true
  [[ -n $attached ]] || { cat "$scratch/viewer.log" >&2; fail "README.md's '$1' did not attach within 20 s"; }
}

for line in "${lines[@]}"; do
  cmd=$(command_of "$line")
  alt=$(alternative_of "$line")
  [[ -n $cmd ]] || continue
  echo "check-readme-sdk: \$ $cmd"
  if [[ $cmd == *'&' ]]; then
    background "$(trim "${cmd%&}")"
  elif [[ ${cmd%% *} == */cuview-gui ]]; then
    viewer "$cmd"
  else
    foreground "$cmd"
  fi
  if [[ -n $alt ]]; then
    echo "check-readme-sdk: \$ $alt"
    foreground "$alt"
  fi
done

# Each program the README started stops cleanly when asked.
for i in "${!names[@]}"; do
  ctl --name "${names[$i]}" shutdown >/dev/null || fail "cuview-ctl --name ${names[$i]} shutdown failed"
  rc=0
  wait "${pids[$i]}" || rc=$?
  ((rc == 0)) || { cat "$scratch/${names[$i]}.log" >&2; fail "'${names[$i]}' exited with status $rc after shutdown"; }
done
pids=()

# fenced FILE HEADING LANG: the ```LANG blocks of FILE under HEADING, as printed.
fenced() {
  awk -v heading="$2" -v lang="$3" '
    /^```/ { if (fence) { fence = 0 } else { fence = 1; want = inside && $0 == "```" lang } next }
    fence { if (want) print; next }
    /^#+ / { if ($0 == heading) { inside = 1; level = index($0, " ") } else if (inside && index($0, " ") <= level) inside = 0 }
    ' "$1"
}
# docs/sdk.md's Fortran-only project, its CMakeLists.txt and program exactly as printed, against the
# package README.md's first line installed into ~/.local: `project(x LANGUAGES Fortran)` must find
# cuview, and the program's stdout must hold none of the library's log lines (they go to stderr).
fortran_heading="### A Fortran-only CMake project"
if grep -q 'cuview::fortran' "$HOME"/.local/lib*/cmake/cuview/cuviewTargets.cmake 2>/dev/null; then
  project=$scratch/fortran-only
  mkdir -p "$project"
  fenced "$source/docs/sdk.md" "$fortran_heading" cmake >"$project/CMakeLists.txt"
  fenced "$source/docs/sdk.md" "$fortran_heading" fortran >"$project/myheat.f90"
  [[ -s $project/CMakeLists.txt && -s $project/myheat.f90 ]] ||
    fail "docs/sdk.md has no \`\`\`cmake and \`\`\`fortran block under '$fortran_heading'"
  echo "check-readme-sdk: docs/sdk.md's '$fortran_heading', as printed"
  foreground "cd '$project' && cmake -S . -B build -DCMAKE_PREFIX_PATH=~/.local && cmake --build build"
  (cd "$project" && build/myheat >stdout 2>stderr) || { cat "$project/stderr" >&2; fail "docs/sdk.md's myheat failed"; }
  [[ ! -s $project/stdout ]] || fail "docs/sdk.md's myheat printed on stdout: $(cat "$project/stdout")"
else
  echo "check-readme-sdk: '$fortran_heading' not built: the package has no Fortran module (no Fortran compiler)"
fi
echo "check-readme-sdk: README.md's ${#lines[@]} SDK command lines ran as printed, from a scratch HOME: ok"
