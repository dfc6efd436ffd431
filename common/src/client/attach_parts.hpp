// Attaching the parts of a run after part 0 (run.hpp): every part checked against part 0 (one
// run, one grid, the same fields), retried while it is not up yet or still one of an earlier run,
// and attached in parallel. For both kinds of part connection: Client (local), RemoteClient.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include "client/run_state.hpp"
#include "cuview/attachment.hpp"

namespace cuview::detail {

/// Parts attached at once while a run attaches: enough to hide each attach's round trips, few
/// enough that a run of hundreds of ranks does not start hundreds of threads.
inline constexpr std::size_t kAttachThreads = 16;

/// Throws Error(bad_value) naming part k when it does not fit with part 0: every part must
/// declare the same fields on the same backend, inside the same global grid.
inline void check_fits(const std::string& name, std::uint32_t k, const proto::DescribeResult& d0,
                const proto::DescribeResult& dk) {
  const auto& p0 = *d0.part;
  const auto& pk = *dk.part;
  const std::string who = part_who(name, k);
  auto refuse = [&](const std::string& what) {
    throw Error(Errc::bad_value, who + " " + what + "; every part of a run must declare the same fields on one " +
                                     "backend and the same global grid: check the program's PartOptions and fields");
  };
  if (dk.backend != d0.backend) refuse("runs on backend " + dk.backend + ", part 0 on " + d0.backend);
  if (pk.global_dims != p0.global_dims)
    refuse("says the global grid is " + Extent{pk.global_dims}.text() + ", part 0 says " + Extent{p0.global_dims}.text());
  if (const Block block{pk.offset, dk.dims}; !block.inside(pk.global_dims))
    refuse("has a block of " + Extent{block.dims}.text() + " at " + position_text(block.offset) +
           " outside the global grid of " + Extent{pk.global_dims}.text());
  if (dk.fields.size() != d0.fields.size())
    refuse("declares " + std::to_string(dk.fields.size()) + " fields, part 0 " + std::to_string(d0.fields.size()));
  for (std::size_t i = 0; i < dk.fields.size(); ++i) {
    const auto& a = d0.fields[i];
    const auto& b = dk.fields[i];
    if (a.name != b.name || a.dtype != b.dtype || a.components != b.components)
      refuse("declares field " + std::to_string(i) + " as '" + b.name + "' (" + b.dtype + " x" +
             std::to_string(b.components) + "), part 0 as '" + a.name + "' (" + a.dtype + " x" +
             std::to_string(a.components) + ")");
  }
}

/// Attaches part k of the run part 0 belongs to, retrying a part that is not up yet or is still
/// one of another run until `deadline`.
template <class Part>
Part attach_part(const AttachOptions& base, std::uint32_t k, const proto::DescribeResult& d0,
                 std::chrono::steady_clock::time_point deadline, const std::vector<std::string>& gateways) {
  auto o = base;
  o.part = k;
  if (!gateways.empty()) o.remote = gateways[k];
  const auto& p0 = *d0.part;
  for (;;) {
    std::optional<Error> problem;
    try {
      auto c = Part::attach(o);
      const auto& d = c.description();
      const std::string who = part_who(base.name, k), pid = "pid " + std::to_string(c.hello().daemon_pid);
      if (!d.part) {
        problem.emplace(Errc::bad_message, who + " (" + pid + ") describes no part; is it from an older cuview?");
      } else if (d.part->group != p0.group) {
        problem.emplace(Errc::stale_session,
                        who + " is from another run (" + pid + ", group id '" + d.part->group + "'; part 0's is '" +
                            p0.group + "'): a part of an earlier run is still up, or two runs use one name; wait "
                            "for it to end, or give each run its own --name");
      } else if (d.part->index != k || d.part->count != p0.count) {
        problem.emplace(Errc::bad_message, who + " (" + pid + ") says it is part " + std::to_string(d.part->index) +
                                               " of " + std::to_string(d.part->count) + ", part 0 says the run has " +
                                               std::to_string(p0.count) + " parts");
      } else {
        check_fits(base.name, k, d0, d);
        return c;
      }
    } catch (const Error& e) {
      // Not up yet, or going away (a part of the previous run): both may change within the wait.
      if (e.code() != Errc::no_daemon && e.code() != Errc::daemon_gone) throw;
      problem.emplace(e.code(), e.what());
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw Error(problem->code(), std::string(problem->what()) + " (tried for " +
                                       std::to_string(base.timeout.count()) + " ms while attaching the group)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

/// Parts first..count-1 (`first`: 1, or 0 to attach part 0 again with the others), attached in
/// parallel (through gateways[k] when given); the first failure (in part order) is thrown.
template <class Part>
std::vector<Part> attach_others(const AttachOptions& base, const proto::DescribeResult& d0,
                                std::chrono::steady_clock::time_point deadline, const std::vector<std::string>& gateways,
                                std::uint32_t first = 1) {
  const std::uint32_t count = d0.part->count;
  std::vector<std::optional<Part>> attached(count);
  std::vector<std::exception_ptr> failed(count);
  std::atomic<std::uint32_t> next{first};
  auto worker = [&] {
    for (std::uint32_t k; (k = next.fetch_add(1)) < count;) {
      try {
        attached[k].emplace(attach_part<Part>(base, k, d0, deadline, gateways));
      } catch (...) {
        failed[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < std::min<std::size_t>(count - first, kAttachThreads); ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  std::vector<Part> out;
  for (std::uint32_t k = first; k < count; ++k) out.push_back(std::move(*attached[k]));
  return out;
}

}  // namespace cuview::detail
