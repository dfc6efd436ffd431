#!/usr/bin/env bash
# Builds a Release tree for Hopper (build-gpu/) and bundles its programs and test binaries with
# the libraries a GPU host lacks into .device/runtime.txz (../shared/device/bundle-runtime.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON "-DCMAKE_CUDA_ARCHITECTURES=90" >/dev/null
cmake --build build-gpu --parallel "$(nproc)"
strip build-gpu/bin/* 2>/dev/null || true
# GPU hosts have no clang: carry the fault campaign's fuzzer prebuilt (ASan and UBSan are static).
flags=(-std=c++20 -O1 -g -DMSGPACK_NO_BOOST -Icommon/include common/src/protocol.cpp common/src/error.cpp)
clang++ "${flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  tests/fuzz/fuzz_protocol.cpp -o build-gpu/bin/cuview-fuzz-protocol
clang++ "${flags[@]}" tests/fuzz/make_seeds.cpp -o build-gpu/bin/cuview-fuzz-seeds
clang++ "${flags[@]}" common/src/remote/remote_protocol.cpp common/src/remote/value_codec.cpp common/src/remote/picture_codec.cpp \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined tests/fuzz/fuzz_remote.cpp -lzstd -lwebp \
  -o build-gpu/bin/cuview-fuzz-remote
clang++ "${flags[@]}" common/src/remote/remote_protocol.cpp common/src/remote/value_codec.cpp common/src/remote/picture_codec.cpp \
  tests/fuzz/make_remote_seeds.cpp -lzstd -lwebp -o build-gpu/bin/cuview-fuzz-remote-seeds
# The GPU hosts have no OpenSSH: the ssh:// tests and scripts/gpu-volume.sh carry Debian's; nor
# iproute2: scripts/gpu-pictures.sh limits a link with Debian's ip and tc.
../shared/device/bundle-runtime.sh build-gpu/bin /usr/sbin/sshd /usr/bin/ssh /usr/bin/ssh-keygen /usr/sbin/ip /usr/sbin/tc
