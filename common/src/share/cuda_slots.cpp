#include "share/cuda_slots.hpp"

#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/ipc_bytes.hpp"
#include "cuview/error.hpp"

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

int device_attribute(cudaDeviceAttr attribute, int device) {
  int v = 0;
  cuda::check(cudaDeviceGetAttribute(&v, attribute, device), "cudaDeviceGetAttribute");
  return v;
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

UniqueFd single_fd(const ImportSource& source) {
  auto fds = source.fetch_fds();
  if (fds.size() != 1)
    throw Error(Errc::bad_message, source.who + " sent " + std::to_string(fds.size()) + " descriptors for '" +
                                       source.handles.sharing + "' sharing, which needs exactly 1");
  return std::move(fds[0]);
}

}  // namespace cuview::share
