// Catch2's implementation, compiled once for every test program: Catch2 2's single header makes
// it the heaviest translation unit of the build, and each program had a copy.
#define CATCH_CONFIG_RUNNER
#include "catch_runner.hpp"

#include <catch2/catch.hpp>

int cuview::test::run_catch(int argc, char** argv) { return Catch::Session().run(argc, argv); }
