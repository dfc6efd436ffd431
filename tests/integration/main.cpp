// Runs the integration tests. When the selection asks for [gpu] tests and this machine has no
// usable CUDA device, exits 77, which CTest reports as *skipped* (never as passed).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "process.hpp"

int main(int argc, char** argv) {
  bool wants_gpu = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.find("[gpu]") != std::string::npos && a.find("~[gpu]") == std::string::npos) wants_gpu = true;
  }
  std::string reason;
  if (wants_gpu && !cuview::test::cuda_usable(&reason)) {
    std::printf("SKIPPED: the [gpu] tests need a usable CUDA device: %s", reason.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
