#include "cuview/cuda_ipc.hpp"

#include <cstring>
#include <map>
#include <mutex>

#include "cuview/error.hpp"

namespace cuview::cuda {

void check(cudaError_t rc, const std::string& what) {
  if (rc == cudaSuccess) return;
  (void)cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
  throw Error(Errc::cuda, what + ": " + cudaGetErrorString(rc) + " (" + cudaGetErrorName(rc) + ")");
}

Probe probe(int device) noexcept {
  Probe p;
  cudaDriverGetVersion(&p.driver_version);
  cudaRuntimeGetVersion(&p.runtime_version);
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    p.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(rc) + " (" + cudaGetErrorName(rc) + ")";
    if (rc == cudaErrorInsufficientDriver && p.driver_version == 0)
      p.reason += "; no NVIDIA driver is installed on this machine";
    (void)cudaGetLastError();
    return p;
  }
  if (count == 0) {
    p.reason = "no CUDA device is visible (check CUDA_VISIBLE_DEVICES and nvidia-smi)";
    return p;
  }
  if (device < 0 || device >= count) {
    std::string gpus;
    for (int d = 0; d < count; ++d) {
      cudaDeviceProp prop{};
      char pci[32] = {};
      if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) (void)cudaGetLastError();
      if (cudaDeviceGetPCIBusId(pci, sizeof pci, d) != cudaSuccess) (void)cudaGetLastError();
      gpus += (gpus.empty() ? "" : ", ") + std::to_string(d) + " (" + prop.name + ", PCI " + pci + ")";
    }
    p.reason = "there is no GPU " + std::to_string(device) + " here; the " + std::to_string(count) +
               " visible (CUDA_VISIBLE_DEVICES numbers them) are: " + gpus;
    return p;
  }
  const int dev = device;
  cudaDeviceProp prop{};
  if ((rc = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess) {
    p.reason = std::string("cudaGetDeviceProperties failed: ") + cudaGetErrorString(rc);
    (void)cudaGetLastError();
    return p;
  }
  char pci[32] = {};
  cudaDeviceGetPCIBusId(pci, sizeof pci, dev);
  p.device = dev;
  p.name = prop.name;
  p.pci_bus_id = pci;
  p.usable = true;
  return p;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  check(cudaMalloc(&ptr_, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes");
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);  // errors ignored: a destructor cannot report them
}
cudaIpcMemHandle_t DeviceBuffer::ipc_handle() const {
  cudaIpcMemHandle_t h{};
  check(cudaIpcGetMemHandle(&h, ptr_), "cudaIpcGetMemHandle on allocation " + std::to_string(bytes_) + " bytes");
  return h;
}

Event::Event(EventKind kind) {
  const unsigned flags = kind == EventKind::interprocess    ? (cudaEventDisableTiming | cudaEventInterprocess)
                         : kind == EventKind::blocking_sync ? (cudaEventDisableTiming | cudaEventBlockingSync)
                                                            : cudaEventDefault;
  check(cudaEventCreateWithFlags(&ev_, flags), "cudaEventCreateWithFlags");
}
Event Event::from_ipc_handle(const cudaIpcEventHandle_t& handle) {
  Event e;
  check(cudaIpcOpenEventHandle(&e.ev_, handle), "cudaIpcOpenEventHandle (the daemon's frame event)");
  return e;
}
Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (ev_) cudaEventDestroy(ev_);
    ev_ = std::exchange(o.ev_, nullptr);
  }
  return *this;
}
Event::~Event() {
  if (ev_) cudaEventDestroy(ev_);
}
cudaIpcEventHandle_t Event::ipc_handle() const {
  cudaIpcEventHandle_t h{};
  check(cudaIpcGetEventHandle(&h, ev_), "cudaIpcGetEventHandle");
  return h;
}

Stream Stream::create() {
  Stream s;
  check(cudaStreamCreateWithFlags(&s.s_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}
Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    if (s_) cudaStreamDestroy(s_);
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}

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

IpcMemory::IpcMemory(const cudaIpcMemHandle_t& handle) : ptr_(ipc_mappings().open(handle)) {}
IpcMemory& IpcMemory::operator=(IpcMemory&& o) noexcept {
  if (this != &o) {
    if (ptr_) ipc_mappings().close(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
  }
  return *this;
}
IpcMemory::~IpcMemory() {
  if (ptr_) ipc_mappings().close(ptr_);
}

std::vector<char> to_bytes(const cudaIpcMemHandle_t& h) { return {h.reserved, h.reserved + sizeof h.reserved}; }
std::vector<char> to_bytes(const cudaIpcEventHandle_t& h) { return {h.reserved, h.reserved + sizeof h.reserved}; }
cudaIpcMemHandle_t mem_handle_from(const std::vector<char>& bytes) {
  cudaIpcMemHandle_t h{};
  if (bytes.size() != sizeof h.reserved)
    throw Error(Errc::bad_message, "CUDA IPC memory handle has " + std::to_string(bytes.size()) + " bytes, expected " +
                                       std::to_string(sizeof h.reserved));
  std::memcpy(h.reserved, bytes.data(), bytes.size());
  return h;
}
cudaIpcEventHandle_t event_handle_from(const std::vector<char>& bytes) {
  cudaIpcEventHandle_t h{};
  if (bytes.size() != sizeof h.reserved)
    throw Error(Errc::bad_message, "CUDA IPC event handle has " + std::to_string(bytes.size()) + " bytes, expected " +
                                       std::to_string(sizeof h.reserved));
  std::memcpy(h.reserved, bytes.data(), bytes.size());
  return h;
}

}  // namespace cuview::cuda
