// A host loop compiled once per x86-64 instruction set (GCC's target attribute), and the choice of
// the widest this CPU runs, or the one $CUVIEW_HOST_ISA names (the tests run each). Every build
// does the same operations per cell, none fused (-ffp-contract=off): the same bits.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/error.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define CUVIEW_HOST_ISAS 1
#endif

namespace cuview::sim {

/// One build of a host loop: the instruction set's name, the loop, whether this CPU runs it.
template <class Fn>
struct IsaBuild {
  const char* name;
  Fn fn;
  bool (*usable)();
};

/// The names of `builds` this CPU runs, in their order (widest first).
template <class Fn, std::size_t N>
std::vector<std::string> usable_isas(const IsaBuild<Fn> (&builds)[N]) {
  std::vector<std::string> out;
  for (const auto& b : builds)
    if (b.usable()) out.emplace_back(b.name);
  return out;
}

/// The first of `builds` (widest first) this CPU runs, or $CUVIEW_HOST_ISA's; an unknown or
/// missing one is an error naming `what` and the ones there are.
template <class Fn, std::size_t N>
Fn pick_isa(const IsaBuild<Fn> (&builds)[N], const std::string& what) {
  const char* want = std::getenv("CUVIEW_HOST_ISA");
  const bool any = want == nullptr || *want == '\0';
  for (const auto& b : builds)
    if ((any || b.name == std::string_view(want)) && b.usable()) return b.fn;
  std::string names;
  for (const auto& n : usable_isas(builds)) names += (names.empty() ? "" : ", ") + n;
  throw Error(Errc::bad_value, std::string("CUVIEW_HOST_ISA=") + want + ": " + what +
                                   " is not built for it or this CPU lacks it; this CPU runs: " + names +
                                   " (unset CUVIEW_HOST_ISA to take the widest)");
}

}  // namespace cuview::sim
