// Checkpoints of a decomposed run: each rank writes its own part into its own directory
// (part-K), marked with the ranks that wrote it, and `--restore latest` finds the newest step that
// every rank has. (The turn that tells every rank to checkpoint the same step is the SDK's:
// cuview/mpi_turn.hpp.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <utility>

#include "checkpoint/checkpoint_file.hpp"
#include "parts/comm.hpp"

namespace cuview::parts {

/// The checkpoint metadata option that says which part of how many ranks wrote it: "N:K".
inline constexpr const char* kRanksOption = "ranks";

/// `--restore latest` of a decomposed run: the newest step for which every rank has a good
/// checkpoint in its own directory (`dir` is this rank's). Throws Error(bad_value) when the
/// checkpoints were written by another number of ranks (naming both counts), or none is common.
[[nodiscard]] std::pair<std::filesystem::path, checkpoint::Loaded> restore_latest(Comm& comm,
                                                                                 const std::filesystem::path& dir);

}  // namespace cuview::parts
