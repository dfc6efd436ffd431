// Choosing the GPU with --device: refused where it cannot be honoured, and on a CUDA machine each
// GPU runs the daemon and is named by its PCI id.
#include <signal.h>

#include <catch2/catch.hpp>
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <optional>
#include <string>

#include "backend_test.hpp"
#include "cuview/client.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;

TEST_CASE("--device names the GPU; on the host backend, or with no usable GPU, asking for one is refused",
          "[integration][device][host]") {
  RuntimeDir rt;
  ChildProcess host({bin("cuview-compute"), "--name", "d", "--backend", "host", "--device", "1"});
  auto code = host.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(host.err(), Catch::Contains("GPU 1") && Catch::Contains("host backend runs on the CPU"));
  std::string why;
  if (!cuda_usable(&why)) {  // CI: auto must not quietly run on the CPU when a GPU was asked for
    ChildProcess gpu({bin("cuview-compute"), "--name", "d", "--device", "0"});
    code = gpu.wait_for(30s);
    REQUIRE(code);
    CHECK(*code == 1);
    CHECK_THAT(gpu.err(), Catch::Contains("GPU 0"));
  }
  auto bad = ChildProcess({bin("cuview-compute"), "--name", "d", "--device", "-1"});
  code = bad.wait_for(30s);
  REQUIRE(code);
  CHECK(*code != 0);
}

#ifdef CUVIEW_HAVE_CUDA
TEST_CASE("--device N runs on GPU N, named with its PCI id; a GPU that does not exist is refused naming those that do",
          "[integration][device][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  ChildProcess none({bin("cuview-compute"), "--name", "d", "--backend", "cuda", "--device", "99"});
  auto code = none.wait_for(30s);
  REQUIRE(code);
  CHECK(*code == 1);
  CHECK_THAT(none.err(), Catch::Contains("no GPU 99") && Catch::Contains("0 (") && Catch::Contains("PCI"));
  int gpus = 0;
  REQUIRE(cudaGetDeviceCount(&gpus) == cudaSuccess);
  for (int n = 0; n < gpus; ++n) {
    const std::string gpu = "GPU " + std::to_string(n) + ": ";
    INFO(gpu);
    auto daemon = start_daemon("d", Backend::cuda, {"--device", std::to_string(n)}, "64x64");
    auto st = ctl("d", {"status"});
    CHECK_THAT(st.out, Catch::Contains(gpu) && Catch::Contains("(PCI "));
    auto c = attach("d");
    CHECK_THAT(c.description().device, Catch::Contains(gpu));
    auto f = c.next_frame(10s);
    REQUIRE(f);
    CHECK_FALSE(f->verify());
    const std::string& named = c.description().device;
    const auto pci = named.find("PCI ") + 4;
    int here = -1;  // the frame's GPU in this process, found by the PCI id the daemon named
    REQUIRE(cudaDeviceGetByPCIBusId(&here, named.substr(pci, named.find(')', pci) - pci).c_str()) == cudaSuccess);
    CHECK(f->device() == here);
    f.reset();
    daemon.signal(SIGTERM);
    CHECK(daemon.wait_for(30s) == 0);
    CHECK_THAT(daemon.err(), Catch::Contains(gpu));  // the log names it too
  }
}
#endif

#ifdef CUVIEW_HAVE_CUDA
TEST_CASE("a fresh viewer gets frame after frame where the driver compiles the run's kernels for its GPU",
          "[integration][device][gpu]") {
  require_backend(Backend::cuda);
  RuntimeDir rt;
  std::optional<ChildProcess> daemon;
  {
    // As on a GPU the build has no code for (a package made for older GPUs): the driver compiles
    // each module of kernels from its PTX as it loads it, with no cache to remember it. Loaded at
    // their first launch (CUDA's lazy loading, kept here: cuview-compute's own choice of eager
    // loading would hide what the library does for a program that embeds it), the frame
    // kernels' compile was timed as the first frame's cost, and the budget then held the next
    // frames back for it: at 0.1 %, a thousand times as long.
    ScopedEnv jit("CUDA_FORCE_PTX_JIT", "1"), no_cache("CUDA_CACHE_DISABLE", "1"), lazy("CUDA_MODULE_LOADING", "LAZY");
    daemon.emplace(start_daemon("j", Backend::cuda, {"--sim", "lbm3d", "--max-cost", "0.1%"}, "64x64x64"));
  }
  auto r = ctl("j", {"attach", "--frames", "5", "--verify", "--frame-timeout", "20"});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("received 5 frames") && Catch::Contains("5 verified intact"));
  daemon->signal(SIGTERM);
  CHECK(daemon->wait_for(60s) == 0);
}
#endif
