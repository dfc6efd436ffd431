#include "parts/restore.hpp"

#include <spdlog/spdlog.h>

#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cuview/error.hpp"

namespace cuview::parts {
namespace {
std::uint64_t step_of(const std::filesystem::path& file) {
  // file_name(step): "step-<digits>.h5"
  const std::string n = file.filename().string();
  const auto dash = n.find('-'), dot = n.rfind('.');
  return std::stoull(n.substr(dash + 1, dot - dash - 1));
}
}  // namespace

std::pair<std::filesystem::path, checkpoint::Loaded> restore_latest(Comm& comm, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const int n = comm.size();
  // Checkpoints of parts this run does not have: written by more ranks.
  std::int64_t more[1] = {0};
  for (int k = n;; ++k) {
    const fs::path other = dir.parent_path() / ("part-" + std::to_string(k));
    if (!fs::exists(other) || checkpoint::list(other).empty()) break;
    more[0] = k + 1;
  }
  comm.max(more);
  if (more[0] > 0)
    throw Error(Errc::bad_value, "--restore latest: the checkpoints in " + dir.parent_path().string() +
                                     " were written by " + std::to_string(more[0]) + " ranks; this run has " +
                                     std::to_string(n) + ". Restart with `mpirun -n " + std::to_string(more[0]) +
                                     "` (a run continues only with the rank count that wrote it)");
  std::set<std::uint64_t> mine;
  for (const auto& f : checkpoint::list(dir)) try {
      mine.insert(step_of(f));
    } catch (const std::exception&) {
    }
  // Every rank's steps, as the bytes of its u64s (one program on one architecture).
  const std::vector<std::uint64_t> steps(mine.begin(), mine.end());
  const std::string packed(reinterpret_cast<const char*>(steps.data()), steps.size() * sizeof(std::uint64_t));
  std::set<std::uint64_t> common = mine;
  for (const auto& other : comm.allgather(packed)) {
    std::set<std::uint64_t> both;
    for (std::size_t at = 0; at + sizeof(std::uint64_t) <= other.size(); at += sizeof(std::uint64_t)) {
      std::uint64_t s = 0;
      std::memcpy(&s, other.data() + at, sizeof s);
      if (common.count(s)) both.insert(s);
    }
    common = std::move(both);
  }
  // Newest first; a step whose file is damaged on any rank is skipped by every rank.
  for (auto it = common.rbegin(); it != common.rend(); ++it) {
    const fs::path file = dir / checkpoint::file_name(*it);
    std::optional<checkpoint::Loaded> loaded;
    std::string why;
    try {
      loaded = checkpoint::read(file);
      const auto r = loaded->meta.options.find(kRanksOption);
      const std::string want = std::to_string(n) + ":" + std::to_string(comm.rank());
      if (r == loaded->meta.options.end() || r->second != want)
        why = file.string() + " was written by " +
              (r == loaded->meta.options.end() ? std::string("a single-process run")
                                               : "part " + r->second.substr(r->second.find(':') + 1) + " of a " +
                                                     r->second.substr(0, r->second.find(':')) + "-rank run") +
              ", not by part " + std::to_string(comm.rank()) + " of " + std::to_string(n);
    } catch (const Error& e) {
      spdlog::warn("skipping {}", e.what());
      loaded.reset();
    }
    std::int64_t bad[2] = {loaded ? 0 : 1, why.empty() ? 0 : 1};
    comm.max(bad);
    if (bad[1] != 0)
      throw Error(Errc::bad_value, "--restore latest: " +
                                       (why.empty() ? std::string("another rank's checkpoint of step ") +
                                                          std::to_string(*it) + " is from another decomposition"
                                                    : why) +
                                       "; restart with the rank count that wrote them");
    if (bad[0] == 0) return {file, std::move(*loaded)};
  }
  throw Error(Errc::bad_value, "--restore latest: no step has a good checkpoint on every rank in " +
                                   dir.parent_path().string() + (mine.empty() ? " (this rank has none)" : "") +
                                   "; give --checkpoint-dir where they are");
}

}  // namespace cuview::parts
