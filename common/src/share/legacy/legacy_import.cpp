// The import half of legacy: each slot's handle opened with cudaIpcOpenMemHandle when the slot is
// first read.
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/ipc_bytes.hpp"
#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"
#include "share/legacy/ipc_memory.hpp"

namespace cuview::share::legacy {
namespace {

class ImportedIpcSlots final : public ImportedSlots {
 public:
  explicit ImportedIpcSlots(const ImportSource& source)
      : ImportedSlots(static_cast<std::uint32_t>(source.handles.slots.size())), device_(source.device),
        memory_(source.handles.slots.size()) {
    for (const auto& s : source.handles.slots) {
      if (s.offset != 0) throw Error(Errc::bad_message, "legacy CUDA slot handles must have offset 0");
      handles_.push_back(cuda::from_bytes<cudaIpcMemHandle_t>(s.memory, "CUDA IPC memory handle"));
    }
  }

 private:
  void map(std::uint32_t i) override {
    cuda::DeviceGuard guard(device_);
    memory_[i] = cuda::IpcMemory(handles_[i]);
    slots_[i] = static_cast<const std::byte*>(memory_[i].get());
  }
  int device_;
  std::vector<cudaIpcMemHandle_t> handles_;
  std::vector<cuda::IpcMemory> memory_;
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) { return std::make_unique<ImportedIpcSlots>(source); }

}  // namespace cuview::share::legacy
