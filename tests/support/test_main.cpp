// The main of the unit, integration and parts tests. When the selection asks for [gpu] tests and
// this machine has no usable CUDA device, exits 77, which CTest reports as *skipped* (never as
// passed).
#include "catch_runner.hpp"
#include "process.hpp"

int main(int argc, char** argv) {
  if (auto skip = cuview::test::skip_without_gpu(argc, argv)) return *skip;
  return cuview::test::run_catch(argc, argv);
}
