// Runs the tests of decomposed runs (mpirun -n N cuview-compute). When the selection asks for
// [gpu] tests and this machine has no usable CUDA device, exits 77 (CTest: skipped).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "process.hpp"

int main(int argc, char** argv) {
  if (auto skip = cuview::test::skip_without_gpu(argc, argv)) return *skip;
  return Catch::Session().run(argc, argv);
}
