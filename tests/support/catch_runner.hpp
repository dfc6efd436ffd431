// The test programs' way into Catch2, whose implementation (catch_runner.cpp) is compiled once.
#pragma once

namespace cuview::test {
/// Catch::Session().run(argc, argv): the tests the command line selects, their exit code.
int run_catch(int argc, char** argv);
}  // namespace cuview::test
