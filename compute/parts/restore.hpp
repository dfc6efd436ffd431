// One turn of a decomposed run: what rank 0 decided from its clients' requests, broadcast so
// that every rank applies the same changes before stepping from the same step. A `set` sent to
// part 0 (the only part that takes steering) is in the next turn of every rank.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "checkpoint/checkpoint_file.hpp"
#include "cuview/publisher.hpp"
#include "parts/comm.hpp"

namespace cuview::parts {

/// The checkpoint metadata option that says which part of how many ranks wrote it: "N:K".
inline constexpr const char* kRanksOption = "ranks";

struct Turn {
  Requests requests;          ///< rank 0's poll(): params, reset, strokes (checkpoint tickets stay on rank 0)
  std::uint32_t steps = 0;    ///< steps every rank takes this turn (0: paused)
  bool paused = false;
  bool stop = false;          ///< rank 0 was told to stop (signal or `shutdown`)
  bool checkpoint = false;    ///< every rank writes a checkpoint of this turn's step before stepping
};

[[nodiscard]] std::string encode(const Turn& t);
[[nodiscard]] Turn decode_turn(const std::string& bytes);

/// `--restore latest` of a decomposed run: the newest step for which every rank has a good
/// checkpoint in its own directory (`dir` is this rank's). Throws Error(bad_value) when the
/// checkpoints were written by another number of ranks (naming both counts), or none is common.
[[nodiscard]] std::pair<std::filesystem::path, checkpoint::Loaded> restore_latest(Comm& comm,
                                                                                 const std::filesystem::path& dir);

}  // namespace cuview::parts
