// Checkpoint files: one HDF5 file per checkpoint (docs/checkpoints.md has the layout). Written
// atomically — a temporary file in the same directory, fsync, rename, fsync of the directory — so
// a crash mid-write leaves the previous checkpoint as it was; every dataset and the metadata carry
// an XXH3-64 checksum, so a torn or altered file is refused on reading.
//
// Threading: HDF5 (Debian's serial build) is not thread-safe; every call here takes one process-wide
// lock, so the writer thread and the main thread may both use these functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuview/extent.hpp"
#include "sims/simulation.hpp"

namespace cuview::checkpoint {

inline constexpr std::uint32_t kFormat = 1;  ///< the layout's version (root attribute `format`)

/// Everything a checkpoint says besides the state's bytes.
struct Meta {
  std::string simulation;               ///< the built-in's name, or the plugin's
  std::uint32_t state_version = 1;      ///< Simulation::state_version()
  /// The grid, slowest axis first. In the file: attributes `width`, then `height` (2 or 3 axes),
  /// then `depth` (3 axes), its sides fastest first.
  Axes dims;
  std::uint64_t step = 0;
  double sim_time = 0;
  std::map<std::string, std::string> options;  ///< --sim-option KEY=VALUE
  std::map<std::string, double> params;        ///< every parameter in effect
  std::string backend;                         ///< where it ran ("cuda", "host"): informative
  std::string cuview_version;                  ///< of the writer
  std::string written_utc;                     ///< ISO 8601
};

/// One state buffer: what it is, and its bytes (spec.bytes() of them).
struct Block {
  sim::StateSpec spec;
  std::shared_ptr<std::byte> data;
};

/// --sim-option values as the file's `options` attribute holds them: "KEY=VALUE KEY=VALUE", by key.
[[nodiscard]] std::string join_options(const std::map<std::string, std::string>& options);

/// Writes `meta` and `blocks` to `path` atomically. Throws Error(system) naming the file and what
/// failed (the temporary file is removed).
void write(const std::filesystem::path& path, const Meta& meta, const std::vector<Block>& blocks);

struct Loaded {
  Meta meta;
  std::vector<Block> blocks;  ///< in the file's order
  std::uint64_t bytes = 0;    ///< the state's bytes
};

/// Reads and verifies a whole checkpoint (format, checksums of the metadata and of every
/// dataset). Throws Error(bad_value) "checkpoint FILE ...: what is wrong; what to do" for a
/// missing, unreadable, truncated, altered or foreign file.
[[nodiscard]] Loaded read(const std::filesystem::path& path);

/// Why `loaded` cannot continue a run of `meta` (simulation, version, grid, options) whose state
/// is `state`; empty when it can. Parameters are not compared: the checkpoint's are restored.
[[nodiscard]] std::string mismatch(const Loaded& loaded, const Meta& meta, const std::vector<sim::StateSpec>& state);

/// The checkpoints of a directory (files named step-NNNNNNNNNNNN.h5), newest step last.
[[nodiscard]] std::vector<std::filesystem::path> list(const std::filesystem::path& dir);
/// The file name a checkpoint of `step` gets in a checkpoint directory.
[[nodiscard]] std::string file_name(std::uint64_t step);

}  // namespace cuview::checkpoint
