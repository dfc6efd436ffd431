// VMM: one cuMemCreate allocation holding every slot (slot i at i × slot_bytes), exported once as
// a POSIX file descriptor that clients receive over the descriptor socket and map themselves. The
// export half: the allocation and its descriptor, made once at creation.
#include "share/exports.hpp"
#include "share/cuda_slots.hpp"
#include "share/vmm/vmm_allocation.hpp"

namespace cuview::share::vmm {
namespace {

class CudaVmmSlots final : public CudaSlots {
 public:
  CudaVmmSlots(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place)
      : CudaSlots(place, slots),
        slot_bytes_(layout.slot_bytes),
        memory_(cuda::VmmAllocation::create(device_, layout.slot_bytes * slots)),
        fd_(memory_.export_fd()) {
    zero_and_record(layout);
  }
  void* slot(std::uint32_t i) const override { return static_cast<std::byte*>(memory_.get()) + i * slot_bytes_; }
  const char* mechanism() const override { return "vmm"; }
  void fill_handles(proto::HandlesResult& h) const override {
    h.allocation_bytes = memory_.size();
    h.slots.assign(count(), {});
    for (std::uint32_t s = 0; s < count(); ++s) h.slots[s].offset = s * slot_bytes_;
    fill_common(h);
  }
  std::vector<int> fds() const override { return {fd_.get()}; }

 private:
  std::size_t slot_bytes_;
  cuda::VmmAllocation memory_;
  UniqueFd fd_;
};

}  // namespace

std::optional<std::string> unsupported(int device) noexcept { return cuda_unsupported(device, &cuda::vmm_unsupported); }

std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place) {
  return std::make_unique<CudaVmmSlots>(layout, slots, place);
}

}  // namespace cuview::share::vmm
