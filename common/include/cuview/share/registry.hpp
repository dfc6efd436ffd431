// Every sharing mechanism by name, each with its two halves side by side (cuda-api-wrappers'
// paired export_/import): the publisher makes its slots through export_, a client maps them
// through import. Adding a mechanism is a folder in common/src/share/ with both halves, and its
// line in registry.cpp (docs/sharing.md, "Adding a mechanism").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuview/frame_layout.hpp"
#include "cuview/share/imported_slots.hpp"
#include "cuview/share/slot_memory.hpp"

namespace cuview::share {

/// Which backend a mechanism serves: the host backend has exactly one (chosen by "auto"); a
/// CUDA publisher chooses among the CUDA ones with `--sharing`.
enum class Backend { host, cuda };

/// CUDA: why a mechanism cannot share memory of `device` here (a sentence naming the missing
/// capability), or nothing when it can. Never throws.
using Unsupported = std::optional<std::string>(int device) noexcept;
/// The export half: `slots` slots of `layout.slot_bytes` at `place`, zeroed. Throws Error(cuda |
/// system | unsupported) naming the call and the object.
using ExportHalf = std::unique_ptr<SlotMemory>(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place);
/// The import half: maps what `source.handles` describes. Throws Error(bad_message) for handles
/// that do not fit, Error(cuda | system) naming the call.
using ImportHalf = std::unique_ptr<ImportedSlots>(const ImportSource& source);

struct Mechanism {
  std::string_view name;  ///< as `--sharing`, the `handles` reply and `stats` give it
  Backend backend;
  std::string_view made_with;  ///< a few words for messages: "cudaIpcGetMemHandle"
  Unsupported* unsupported;    ///< null for the host mechanism
  ExportHalf* export_;
  ImportHalf* import;
};

/// The mechanisms this build knows, host first. In a build without CUDA the CUDA ones are listed
/// (their names stay known, for messages) with null halves.
std::span<const Mechanism> mechanisms() noexcept;
/// The mechanism named `name`, or null.
const Mechanism* find_mechanism(std::string_view name) noexcept;
/// What `--sharing` accepts: "auto", then the CUDA mechanisms' names.
std::vector<std::string> sharing_choices();
/// The same in words for help and messages: "auto, legacy (cudaIpcGetMemHandle), ... or pool (an
/// IPC memory pool)".
std::string sharing_choices_text();

/// Throws what make_slot_memory would for `sharing` ("auto" or a CUDA mechanism's name) at
/// `place`, without allocating anything: Error(bad_value) for an unknown name, Error(unsupported)
/// naming why it cannot work here and what would. `who` names the publisher in messages.
void check_sharing(const std::string& sharing, const SlotPlace& place, const std::string& who);
/// Slots at `place` shared by `sharing` ("auto": legacy on CUDA, shm on the host), after
/// check_sharing.
std::unique_ptr<SlotMemory> make_slot_memory(const SlotLayout& layout, std::uint32_t slots, const std::string& sharing,
                                             const SlotPlace& place, const std::string& who);
/// A client's import of the slots `source.handles` describes, by the mechanism it names. Throws
/// Error(bad_message) for a mechanism this client does not know or one of the other backend.
std::unique_ptr<ImportedSlots> import_slots(const ImportSource& source);

}  // namespace cuview::share
