// The import half of vmm: the ring's one descriptor mapped into this process when a slot is first
// read (cuMemMap maps an allocation whole: every slot at once); the descriptor closes as soon as
// the mapping holds its own reference.
#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"
#include "share/cuda_slots.hpp"
#include "share/vmm/vmm_allocation.hpp"

namespace cuview::share::vmm {
namespace {

class ImportedVmmSlots final : public ImportedSlots {
 public:
  explicit ImportedVmmSlots(const ImportSource& source)
      : ImportedSlots(static_cast<std::uint32_t>(source.handles.slots.size())), fd_(single_fd(source)),
        bytes_(source.handles.allocation_bytes), device_(source.device) {
    for (const auto& s : source.handles.slots) {
      if (s.offset + source.slot_bytes > bytes_)
        throw Error(Errc::bad_message, "slot offset " + std::to_string(s.offset) +
                                           " lies outside the daemon's VMM allocation of " + std::to_string(bytes_) +
                                           " bytes");
      offsets_.push_back(s.offset);
    }
  }

 private:
  void map(std::uint32_t) override {
    memory_ = cuda::VmmAllocation::import(fd_.get(), bytes_, device_);
    fd_ = UniqueFd();  // the mapping holds its own reference
    for (std::size_t k = 0; k < offsets_.size(); ++k)
      slots_[k] = static_cast<const std::byte*>(memory_.get()) + offsets_[k];
  }
  UniqueFd fd_;
  std::size_t bytes_;
  int device_;
  std::vector<std::uint64_t> offsets_;
  cuda::VmmAllocation memory_;
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) { return std::make_unique<ImportedVmmSlots>(source); }

}  // namespace cuview::share::vmm
