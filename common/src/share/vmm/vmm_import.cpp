// The import half of vmm: the ring's one descriptor mapped into this process; the descriptor
// closes as soon as the mapping holds its own reference.
#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"
#include "share/cuda_slots.hpp"
#include "share/vmm/vmm_allocation.hpp"

namespace cuview::share::vmm {
namespace {

class ImportedVmmSlots final : public ImportedSlots {
 public:
  explicit ImportedVmmSlots(const ImportSource& source) {
    const UniqueFd fd = single_fd(source);
    memory_ = cuda::VmmAllocation::import(fd.get(), source.handles.allocation_bytes, source.device);
    for (const auto& s : source.handles.slots) {
      if (s.offset + source.slot_bytes > memory_.size())
        throw Error(Errc::bad_message, "slot offset " + std::to_string(s.offset) +
                                           " lies outside the daemon's VMM allocation of " +
                                           std::to_string(memory_.size()) + " bytes");
      slots_.push_back(static_cast<const std::byte*>(memory_.get()) + s.offset);
    }
  }

 private:
  cuda::VmmAllocation memory_;
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) { return std::make_unique<ImportedVmmSlots>(source); }

}  // namespace cuview::share::vmm
