// Declares one integration test twice: on the host backend, and tagged [gpu] on CUDA.
#pragma once

#include <catch2/catch.hpp>

#include "process.hpp"

namespace cuview::test {
/// Fails (never passes silently) when a [gpu] test runs where CUDA cannot.
inline void require_backend(Backend b) {
  std::string reason;
  if (b == Backend::cuda && !cuda_usable(&reason))
    FAIL("this [gpu] test needs a usable CUDA device (" << reason
                                                         << "); run it on a GPU machine or exclude it with ~[gpu]");
}
}  // namespace cuview::test

#define CUVIEW_BACKEND_TEST_IMPL(fn, name, tags)                                           \
  static void fn(cuview::test::Backend backend);                                           \
  TEST_CASE(name " (host)", tags "[host]") { fn(cuview::test::Backend::host); }            \
  TEST_CASE(name " (cuda)", tags "[gpu]") {                                                \
    cuview::test::require_backend(cuview::test::Backend::cuda);                            \
    fn(cuview::test::Backend::cuda);                                                       \
  }                                                                                        \
  static void fn([[maybe_unused]] cuview::test::Backend backend)
#define CUVIEW_CAT2(a, b) a##b
#define CUVIEW_CAT(a, b) CUVIEW_CAT2(a, b)
#define BACKEND_TEST(name, tags) CUVIEW_BACKEND_TEST_IMPL(CUVIEW_CAT(backend_test_, __LINE__), name, tags)
