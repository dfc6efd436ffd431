// Every sharing mechanism by name, and its import half: how a client maps the slots a publisher
// shares (cuda-api-wrappers' paired export_/import). Each mechanism's folder in common/src/share/
// holds both halves side by side; the import half is built into the client library, the export
// half into the publisher library (common/src/share/exports.hpp: check_sharing, make_slot_memory).
// Adding a mechanism is a folder with both halves, and its line in registry.cpp and in exports.cpp
// (docs/sharing.md, "Adding a mechanism").
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/share/imported_slots.hpp"

namespace cuview::share {

/// Which backend a mechanism serves: the host backend has exactly one (chosen by "auto"); a
/// CUDA publisher chooses among the CUDA ones with `--sharing`.
enum class Backend { host, cuda };

/// The import half: maps what `source.handles` describes. Throws Error(bad_message) for handles
/// that do not fit, Error(cuda | system) naming the call.
using ImportHalf = std::unique_ptr<ImportedSlots>(const ImportSource& source);

struct Mechanism {
  std::string_view name;  ///< as `--sharing`, the `handles` reply and `stats` give it
  Backend backend;
  std::string_view made_with;  ///< a few words for messages: "cudaIpcGetMemHandle"
  ImportHalf* import;          ///< null for a CUDA mechanism in a build without CUDA
};

/// The mechanisms this build knows, host first. In a build without CUDA the CUDA ones are listed
/// (their names stay known, for messages) with null import halves.
std::span<const Mechanism> mechanisms() noexcept;
/// The mechanism named `name`, or null.
const Mechanism* find_mechanism(std::string_view name) noexcept;
/// What `--sharing` accepts: "auto", then the CUDA mechanisms' names.
std::vector<std::string> sharing_choices();
/// The same in words for help and messages: "auto, legacy (cudaIpcGetMemHandle), ... or pool (an
/// IPC memory pool)".
std::string sharing_choices_text();

/// A client's import of the slots `source.handles` describes, by the mechanism it names. Throws
/// Error(bad_message) for a mechanism this client does not know or one of the other backend.
std::unique_ptr<ImportedSlots> import_slots(const ImportSource& source);

}  // namespace cuview::share
