// Legacy CUDA IPC: one cudaMalloc per slot (cudaIpcGetMemHandle describes a whole allocation),
// each slot's 64-byte handle in `handles`. The export half: the allocations and their handles,
// made once at creation.
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/ipc_bytes.hpp"
#include "share/exports.hpp"
#include "share/cuda_slots.hpp"
#include "share/legacy/ipc_memory.hpp"

namespace cuview::share::legacy {
namespace {

class CudaIpcSlots final : public CudaSlots {
 public:
  CudaIpcSlots(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place) : CudaSlots(place, slots) {
    cuda::DeviceGuard guard(device_);
    for (std::uint32_t s = 0; s < slots; ++s) {
      memory_.emplace_back(layout.slot_bytes);
      memory_handles_.push_back(cuda::to_bytes(cuda::export_ipc_handle(memory_.back())));
    }
    zero_and_record(layout);
  }
  void* slot(std::uint32_t i) const override { return memory_.at(i).get(); }
  const char* mechanism() const override { return "legacy"; }
  void fill_handles(proto::HandlesResult& h) const override {
    h.slots.assign(memory_.size(), {});
    for (std::size_t s = 0; s < memory_.size(); ++s) h.slots[s].memory = memory_handles_[s];
    fill_common(h);
  }

 private:
  std::vector<cuda::DeviceBuffer> memory_;
  std::vector<std::vector<char>> memory_handles_;  // cudaIpcMemHandle_t of each slot
};

}  // namespace

std::optional<std::string> unsupported(int device) noexcept {
  return cuda_unsupported(device, [](int) -> std::optional<std::string> { return std::nullopt; });
}

std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place) {
  return std::make_unique<CudaIpcSlots>(layout, slots, place);
}

}  // namespace cuview::share::legacy
