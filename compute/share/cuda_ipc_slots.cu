// CUDA slots shared with legacy IPC: one cudaMalloc per slot (cudaIpcGetMemHandle describes a
// whole allocation) and one interprocess event per slot, recorded after the slot is sealed.
#include <vector>

#include "cuview/cuda_ipc.hpp"
#include "share/slot_memory.hpp"

namespace cuview {
namespace {

class CudaIpcSlots final : public SlotMemory {
 public:
  CudaIpcSlots(Executor& executor, const SlotLayout& layout, std::uint32_t slots) : device_(executor.device_id()) {
    const auto stream = static_cast<cudaStream_t>(executor.stream());
    cuda::DeviceGuard guard(device_);
    cudaDeviceProp prop{};
    cuda::check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    char pci[32] = {};
    cuda::check(cudaDeviceGetPCIBusId(pci, sizeof pci, device_), "cudaDeviceGetPCIBusId");
    pci_ = pci;
    for (std::uint32_t s = 0; s < slots; ++s) {
      slots_.emplace_back(layout.slot_bytes);
      cuda::check(cudaMemsetAsync(slots_.back().get(), 0, layout.slot_bytes, stream),
                  "cudaMemset of ring slot " + std::to_string(s));
      events_.emplace_back(cuda::EventKind::interprocess);
      // Recorded once, so that a client waiting on a never-written slot's event does not block.
      cuda::check(cudaEventRecord(events_.back().get(), stream),
                  "cudaEventRecord (initial) of slot " + std::to_string(s));
    }
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after allocating the ring");
  }
  std::uint32_t count() const override { return static_cast<std::uint32_t>(slots_.size()); }
  void* slot(std::uint32_t i) const override { return slots_.at(i).get(); }
  void before_write(std::uint32_t i, void* stream) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), events_.at(i).get(), 0),
                "ordering the write of slot " + std::to_string(i) + " after its previous one");
  }
  void written(std::uint32_t i, void* stream) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaEventRecord(events_.at(i).get(), static_cast<cudaStream_t>(stream)),
                "recording the interprocess event of slot " + std::to_string(i));
  }
  void fill_handles(proto::HandlesResult& h) const override {
    h.device_pci = pci_;
    h.slots.clear();
    for (std::size_t s = 0; s < slots_.size(); ++s)
      h.slots.push_back({cuda::to_bytes(slots_[s].ipc_handle()), cuda::to_bytes(events_[s].ipc_handle()), 0});
  }

 private:
  int device_;
  std::string pci_;
  std::vector<cuda::DeviceBuffer> slots_;
  std::vector<cuda::Event> events_;
};

}  // namespace

std::unique_ptr<SlotMemory> make_cuda_ipc_slots(Executor& executor, const SlotLayout& layout, std::uint32_t slots) {
  return std::make_unique<CudaIpcSlots>(executor, layout, slots);
}

}  // namespace cuview
