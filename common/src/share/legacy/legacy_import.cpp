// The import half of legacy: each slot's handle opened with cudaIpcOpenMemHandle.
#include "cuview/cuda/ipc_bytes.hpp"
#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"
#include "share/legacy/ipc_memory.hpp"

namespace cuview::share::legacy {
namespace {

class ImportedIpcSlots final : public ImportedSlots {
 public:
  explicit ImportedIpcSlots(const ImportSource& source) {
    for (const auto& s : source.handles.slots) {
      if (s.offset != 0) throw Error(Errc::bad_message, "legacy CUDA slot handles must have offset 0");
      memory_.emplace_back(cuda::from_bytes<cudaIpcMemHandle_t>(s.memory, "CUDA IPC memory handle"));
      slots_.push_back(static_cast<const std::byte*>(memory_.back().get()));
    }
  }

 private:
  std::vector<cuda::IpcMemory> memory_;
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) { return std::make_unique<ImportedIpcSlots>(source); }

}  // namespace cuview::share::legacy
