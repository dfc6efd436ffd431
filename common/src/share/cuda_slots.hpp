// What the CUDA mechanisms share. On the export side: one interprocess event per slot, recorded
// after the slot is sealed and waited on before it is written again, and the device's identity
// for the client. A mechanism adds only where the slots' memory comes from and how it is
// exported. Handles are made once, on the thread that creates the slots: fill_handles (the
// control thread) only copies bytes and makes no CUDA call. Only built with CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <vector>

#include "cuview/cuda/event.hpp"
#include "cuview/frame_layout.hpp"
#include "cuview/share/imported_slots.hpp"
#include "cuview/share/slot_memory.hpp"

namespace cuview::share {

class CudaSlots : public SlotMemory {
 public:
  std::uint32_t count() const override { return static_cast<std::uint32_t>(events_.size()); }
  void before_write(std::uint32_t i, cuda::StreamRef stream) override;
  void written(std::uint32_t i, cuda::StreamRef stream) override;

 protected:
  /// Creates `slots` interprocess events on `place.device`, each recorded once (by
  /// zero_and_record) so that a client waiting on a never-written slot does not block.
  CudaSlots(const SlotPlace& place, std::uint32_t slots);
  /// Zeroes the slots and records the events' first time, on the place's stream; waits.
  void zero_and_record(const SlotLayout& layout);
  /// device_pci, and the events into `h.slots` (which must already hold count() entries).
  void fill_common(proto::HandlesResult& h) const;

  int device_;
  cuda::StreamRef stream_;  // the publisher's executor's: it outlives the slots
  std::string pci_;
  std::vector<cuda::Event> events_;
  std::vector<std::vector<char>> event_handles_;  // cudaIpcEventHandle_t of each event
};

/// Why no CUDA mechanism can work on `device` (no interprocess events), else what
/// `mechanism_check` says about the mechanism itself; a failing query (it may throw) becomes the
/// reason too. For the mechanisms' `unsupported`; never throws.
std::optional<std::string> cuda_unsupported(int device,
                                            std::optional<std::string> (*mechanism_check)(int device)) noexcept;
/// cudaDeviceGetAttribute of `device`; throws Error(cuda).
int device_attribute(cudaDeviceAttr attribute, int device);

/// The one descriptor a mechanism that travels as a descriptor imports (source.fetch_fds), or
/// Error(bad_message) naming how many the publisher sent.
UniqueFd single_fd(const ImportSource& source);

}  // namespace cuview::share
