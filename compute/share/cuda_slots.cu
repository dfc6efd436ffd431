#include "share/cuda_slots.hpp"

namespace cuview {

CudaSlots::CudaSlots(Executor& executor, std::uint32_t slots) : executor_(executor), device_(executor.device_id()) {
  cuda::DeviceGuard guard(device_);
  char pci[32] = {};
  cuda::check(cudaDeviceGetPCIBusId(pci, sizeof pci, device_), "cudaDeviceGetPCIBusId");
  pci_ = pci;
  for (std::uint32_t s = 0; s < slots; ++s) {
    events_.emplace_back(cuda::EventKind::interprocess);
    event_handles_.push_back(cuda::to_bytes(events_.back().ipc_handle()));
  }
}

void CudaSlots::zero_and_record(const SlotLayout& layout) {
  cuda::DeviceGuard guard(device_);
  const auto stream = static_cast<cudaStream_t>(executor_.stream());
  for (std::uint32_t s = 0; s < count(); ++s) {
    cuda::check(cudaMemsetAsync(slot(s), 0, layout.slot_bytes, stream), "cudaMemset of ring slot " + std::to_string(s));
    cuda::check(cudaEventRecord(events_[s].get(), stream), "cudaEventRecord (initial) of slot " + std::to_string(s));
  }
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after allocating the ring");
}

void CudaSlots::before_write(std::uint32_t i, void* stream) {
  cuda::DeviceGuard guard(device_);
  cuda::check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), events_.at(i).get(), 0),
              "ordering the write of slot " + std::to_string(i) + " after its previous one");
}

void CudaSlots::written(std::uint32_t i, void* stream) {
  cuda::DeviceGuard guard(device_);
  cuda::check(cudaEventRecord(events_.at(i).get(), static_cast<cudaStream_t>(stream)),
              "recording the interprocess event of slot " + std::to_string(i));
}

void CudaSlots::fill_common(proto::HandlesResult& h) const {
  h.device_pci = pci_;
  for (std::size_t s = 0; s < events_.size(); ++s) h.slots.at(s).event = event_handles_[s];
}

}  // namespace cuview
