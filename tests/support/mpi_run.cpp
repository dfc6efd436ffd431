#include "mpi_run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cuview/client.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview::test {
using namespace std::chrono_literals;

std::string mpirun_path() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    const auto colon = std::min(dirs.find(':', at), dirs.size());
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(at, colon - at)) / "mpirun";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    at = colon + 1;
  }
  return {};
}

namespace {
/// mpirun and the options of the whole launch: as root --allow-run-as-root, --oversubscribe for a
/// 2-core machine, the test's environment to every rank.
std::vector<std::string> mpirun_launch() {
  std::vector<std::string> argv{mpirun_path(), "--oversubscribe"};
  if (::geteuid() == 0) argv.insert(argv.begin() + 1, "--allow-run-as-root");
  for (const char* var : {"XDG_RUNTIME_DIR", "XDG_STATE_HOME", "LD_LIBRARY_PATH", "CUVIEW_SHARING", "CUVIEW_HOST",
                          "NCCL_NVLS_ENABLE", "NVSHMEM_DISABLE_NVLS", "CUDA_VISIBLE_DEVICES"})
    if (std::getenv(var) != nullptr) argv.insert(argv.end(), {"-x", var});
  return argv;
}
}  // namespace

std::vector<std::string> mpirun_argv(int ranks, const std::string& program, const std::vector<std::string>& args) {
  auto argv = mpirun_launch();
  argv.insert(argv.end(), {"-n", std::to_string(ranks), program});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

ChildProcess start_parts(const std::string& name, int ranks, Backend backend, std::vector<std::string> extra,
                         const std::string& size) {
  std::vector<std::string> args{"--name", name, "--backend", to_string(backend), "--size", size};
  args.insert(args.end(), extra.begin(), extra.end());
  return start_program_parts(name, ranks, "cuview-compute", args);
}

ChildProcess start_program_parts(const std::string& name, int ranks, const std::string& program,
                                 const std::vector<std::string>& args) {
  if (mpirun_path().empty()) fail("mpirun is not installed (Debian: openmpi-bin)");
  ChildProcess run(mpirun_argv(ranks, bin(program), args), -1, /*own_group=*/true);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    if (running_parts(name) == static_cast<std::uint32_t>(ranks)) {
      try {  // every part answers once rank 0 is past the barrier that follows every start
        auto part0 = Client::attach({.name = name, .client = "test: start_parts", .import = Import::control_only, .part = 0});
        (void)part0.stats();
        return run;
      } catch (const Error&) {
        // not answering yet
      }
    }
    if (!run.running())
      fail("mpirun -n " + std::to_string(ranks) + " " + program + " " + name + " exited:\n" + run.out() + run.err());
    if (std::chrono::steady_clock::now() > deadline)
      fail("mpirun -n " + std::to_string(ranks) + " " + program + " " + name + " did not start within 60 s:\n" +
           run.err());
    std::this_thread::sleep_for(50ms);
  }
}

ChildProcess start_parts_on_hosts(const std::string& name, const std::vector<std::filesystem::path>& hosts,
                                  Backend backend, std::vector<std::string> extra, const std::string& size) {
  if (mpirun_path().empty()) fail("mpirun is not installed (Debian: openmpi-bin)");
  std::vector<std::string> args{"--name", name, "--backend", to_string(backend), "--size", size};
  args.insert(args.end(), extra.begin(), extra.end());
  // One application context per rank (mpirun's "A : B" form), each under its own environment.
  auto argv = mpirun_launch();
  for (std::size_t k = 0; k < hosts.size(); ++k) {
    if (k > 0) argv.push_back(":");
    argv.insert(argv.end(), {"-n", "1", "/usr/bin/env", "XDG_RUNTIME_DIR=" + hosts[k].string(),
                             "CUVIEW_HOST=host-" + std::to_string(k), bin("cuview-compute")});
    argv.insert(argv.end(), args.begin(), args.end());
  }
  ChildProcess run(argv, -1, /*own_group=*/true);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    try {  // every part answers once rank 0 is past the barrier that follows every start
      on_host(hosts[0], [&] {
        return Client::attach({.name = name, .client = "test: start_parts_on_hosts", .import = Import::control_only,
                               .part = 0})
            .stats();
      });
      return run;
    } catch (const Error&) {
      // not answering yet
    }
    if (!run.running()) fail("mpirun cuview-compute " + name + " over " + std::to_string(hosts.size()) + " hosts exited:\n" + run.out() + run.err());
    if (std::chrono::steady_clock::now() > deadline)
      fail("mpirun cuview-compute " + name + " over " + std::to_string(hosts.size()) + " hosts did not start within 60 s:\n" + run.err());
    std::this_thread::sleep_for(50ms);
  }
}

}  // namespace cuview::test
