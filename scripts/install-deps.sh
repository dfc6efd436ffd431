#!/usr/bin/env bash
# Installs cuview's build and test dependencies from Debian's packages (Debian 12 or newer).
# Safe to run again: it installs only what is missing. Needs root or sudo.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libzmq3-dev cppzmq-dev          # control and frame-notice sockets
  libmsgpack-cxx-dev              # wire format of every protocol message
  libspdlog-dev libfmt-dev        # levelled log lines on stderr
  libcli11-dev                    # daemon and ctl command lines
  nlohmann-json3-dev              # `cuview-ctl status --json`
  catch2                          # unit and integration tests
  qt6-base-dev libgl-dev          # the viewer
  libxcb1-dev                     # the viewer asks whether the X display answers before Qt aborts on it
  xvfb xauth xdotool x11-utils    # its real-window tests: a private X server, real input through it
  desktop-file-utils              # the install test validates the desktop entry
  clang libclang-rt-dev           # libFuzzer, ASan and UBSan for the fault campaign's fuzzer
  procps util-linux passwd        # pgrep; setpriv and useradd for the campaign's second user
  python3-numpy                   # the Python package's tests (host backend)
  python3-zmq python3-msgpack     # the frozen protocol-7 client (tests/compat), written without cuview's code
  gfortran                        # the Fortran module (cuview::fortran) and examples/fortran-heat
  libhdf5-dev libxxhash-dev       # checkpoints: HDF5 files, XXH3 checksums
  python3-h5py hdf5-tools         # checkpoint tests read them as a user would (h5py, h5dump)
  libzstd-dev libsodium-dev       # the gateway: compressed views; CURVE keys (libzmq's, through libsodium)
  libwebp-dev                     # the gateway: pictures cast by the run, lossless WebP
  libboost-dev                    # the gateway's web viewer: Boost.Beast (header-only) serves its page
  chromium python3-websocket      # the web viewer's test drives a real headless browser over DevTools
  python3-pil                     # ... and reads the page's pixels from its screenshots
  libpng-dev                      # cuview-bench measures PNG against the gateway's picture codecs
  openssh-client openssh-server   # ssh:// remote viewers; the tests start a real sshd on loopback
  iproute2                        # the remote benchmark limits a link with tc's tbf in a network namespace
  openmpi-bin libopenmpi-dev      # runs decomposed over ranks: mpirun -n N cuview-compute
  libsystemd-dev systemd          # the user service: sd_notify; systemd-analyze verifies the unit
  lintian python3-venv python3-pip # the package test: lintian on the .deb, `pip install ./python` in a venv
  mmdebstrap systemd-container curl # package-clean-root: a clean Debian 12 booted by systemd-nspawn
  stress-ng                       # reliability: the timing-sensitive tests, 30 runs each beside `stress-ng --cpu 2`
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
