// Legacy CUDA IPC: one cudaMalloc per slot (cudaIpcGetMemHandle describes a whole allocation).
#include "share/cuda_slots.hpp"

namespace cuview {
namespace {

class CudaIpcSlots final : public CudaSlots {
 public:
  CudaIpcSlots(Executor& executor, const SlotLayout& layout, std::uint32_t slots) : CudaSlots(executor, slots) {
    cuda::DeviceGuard guard(device_);
    for (std::uint32_t s = 0; s < slots; ++s) {
      memory_.emplace_back(layout.slot_bytes);
      memory_handles_.push_back(cuda::to_bytes(memory_.back().ipc_handle()));
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

std::unique_ptr<SlotMemory> make_cuda_ipc_slots(Executor& executor, const SlotLayout& layout, std::uint32_t slots) {
  return std::make_unique<CudaIpcSlots>(executor, layout, slots);
}

}  // namespace cuview
