// The export halves of the sharing mechanisms: how a publisher makes the slots it shares. Built
// into the publisher library only (a client never allocates slots); the names, and how a client
// maps the slots, are the registry's (cuview/share/registry.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cuview/frame_layout.hpp"
#include "cuview/share/registry.hpp"
#include "cuview/share/slot_memory.hpp"

namespace cuview::share {

/// CUDA: why a mechanism cannot share memory of `device` here (a sentence naming the missing
/// capability), or nothing when it can. Never throws.
using Unsupported = std::optional<std::string>(int device) noexcept;
/// The export half: `slots` slots of `layout.slot_bytes` at `place`, zeroed. Throws Error(cuda |
/// system | unsupported) naming the call and the object.
using ExportHalf = std::unique_ptr<SlotMemory>(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place);

/// A mechanism's export half, beside the registry's line of the same name.
struct Exporter {
  const Mechanism* mechanism;
  Unsupported* unsupported;  ///< null for the host mechanism
  ExportHalf* export_;       ///< null for a CUDA mechanism in a build without CUDA
};

/// One exporter per mechanism of the registry, in its order.
std::span<const Exporter> exporters() noexcept;
/// The exporter of the mechanism named `name`, or null.
const Exporter* find_exporter(std::string_view name) noexcept;

/// Throws what make_slot_memory would for `sharing` ("auto" or a CUDA mechanism's name) at
/// `place`, without allocating anything: Error(bad_value) for an unknown name, Error(unsupported)
/// naming why it cannot work here and what would. `who` names the publisher in messages.
void check_sharing(const std::string& sharing, const SlotPlace& place, const std::string& who);
/// Slots at `place` shared by `sharing` ("auto": legacy on CUDA, shm on the host), after
/// check_sharing.
std::unique_ptr<SlotMemory> make_slot_memory(const SlotLayout& layout, std::uint32_t slots, const std::string& sharing,
                                             const SlotPlace& place, const std::string& who);

}  // namespace cuview::share
