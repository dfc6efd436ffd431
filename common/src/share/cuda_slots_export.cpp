// The export side the CUDA mechanisms share (built into the publisher library, with the export
// halves): CudaSlots' interprocess events and cuda_unsupported.
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/ipc_bytes.hpp"
#include "share/cuda_slots.hpp"

namespace cuview::share {

CudaSlots::CudaSlots(const SlotPlace& place, std::uint32_t slots) : device_(place.device), stream_(place.stream) {
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
  const cudaStream_t stream = stream_.get();
  for (std::uint32_t s = 0; s < count(); ++s) {
    cuda::check(cudaMemsetAsync(slot(s), 0, layout.slot_bytes, stream), "cudaMemset of ring slot " + std::to_string(s));
    cuda::check(cudaEventRecord(events_[s].get(), stream), "cudaEventRecord (initial) of slot " + std::to_string(s));
  }
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after allocating the ring");
}

void CudaSlots::before_write(std::uint32_t i, cuda::StreamRef stream) {
  cuda::DeviceGuard guard(device_);
  cuda::check(cudaStreamWaitEvent(stream.get(), events_.at(i).get(), 0),
              "ordering the write of slot " + std::to_string(i) + " after its previous one");
}

void CudaSlots::written(std::uint32_t i, cuda::StreamRef stream) {
  cuda::DeviceGuard guard(device_);
  cuda::check(cudaEventRecord(events_.at(i).get(), stream.get()),
              "recording the interprocess event of slot " + std::to_string(i));
}

void CudaSlots::fill_common(proto::HandlesResult& h) const {
  h.device_pci = pci_;
  for (std::size_t s = 0; s < events_.size(); ++s) h.slots.at(s).event = event_handles_[s];
}

std::optional<std::string> cuda_unsupported(int device,
                                            std::optional<std::string> (*mechanism_check)(int device)) noexcept {
  try {
    if (device_attribute(cudaDevAttrIpcEventSupport, device) == 0)
      return "GPU " + std::to_string(device) + " does not support interprocess events (cudaDevAttrIpcEventSupport)";
    return mechanism_check(device);
  } catch (const std::exception& e) {
    return std::string("querying GPU ") + std::to_string(device) + " failed: " + e.what();
  }
}

}  // namespace cuview::share
