#include "share/legacy/ipc_memory.hpp"

#include <map>
#include <mutex>
#include <string>

#include "cuview/cuda/check.hpp"

namespace cuview::cuda {
namespace {
/// Every legacy IPC mapping of this process: handle bytes → (pointer, users).
struct IpcMappings {
  std::mutex mu;
  std::map<std::string, std::pair<void*, int>> by_handle;
  void* open(const cudaIpcMemHandle_t& handle) {
    std::lock_guard lock(mu);
    auto& entry = by_handle[std::string(handle.reserved, sizeof handle.reserved)];
    if (entry.second == 0) {
      try {
        check(cudaIpcOpenMemHandle(&entry.first, handle, cudaIpcMemLazyEnablePeerAccess),
              "cudaIpcOpenMemHandle (a ring slot of the daemon)");
      } catch (...) {
        by_handle.erase(std::string(handle.reserved, sizeof handle.reserved));
        throw;
      }
    }
    ++entry.second;
    return entry.first;
  }
  void close(void* ptr) noexcept {
    std::lock_guard lock(mu);
    for (auto it = by_handle.begin(); it != by_handle.end(); ++it) {
      if (it->second.first != ptr) continue;
      if (--it->second.second == 0) {
        cudaIpcCloseMemHandle(ptr);
        by_handle.erase(it);
      }
      return;
    }
  }
};
IpcMappings& ipc_mappings() {
  static auto* m = new IpcMappings;  // never destroyed: IpcMemory may outlive static destruction
  return *m;
}
}  // namespace

int detail::release_ipc_mapping(void* ptr) noexcept {
  ipc_mappings().close(ptr);
  return 0;
}

cudaIpcMemHandle_t export_ipc_handle(const DeviceBuffer& buffer) {
  cudaIpcMemHandle_t h{};
  check(cudaIpcGetMemHandle(&h, buffer.get()),
        "cudaIpcGetMemHandle on allocation " + std::to_string(buffer.size()) + " bytes");
  return h;
}

IpcMemory::IpcMemory(const cudaIpcMemHandle_t& handle) : owner_(ipc_mappings().open(handle)) {}

}  // namespace cuview::cuda
