// Move-only owners of the CUDA objects cuview shares between processes, and the export and
// import of their IPC handles. Only built with the CUDA toolkit (CUVIEW_HAVE_CUDA).
// Every failing CUDA call throws Error(cuda) naming the call, the object and the CUDA error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cuview/cuda_context.hpp"  // DeviceGuard

namespace cuview::cuda {

/// Throws Error(cuda): "<what>: <cudaGetErrorString> (<cudaGetErrorName>)" unless rc == cudaSuccess.
void check(cudaError_t rc, const std::string& what);

/// What `probe` found: whether the CUDA backend can run here, and if not, why.
struct Probe {
  bool usable = false;
  std::string reason;  ///< when not usable: a sentence naming the failing call
  int device = -1;
  std::string name;  ///< e.g. "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;
  int driver_version = 0, runtime_version = 0;
};
/// Whether `device` can run the CUDA backend. Never throws: a machine without a driver is an
/// answer, not an error.
Probe probe(int device = 0) noexcept;


/// A cudaMalloc allocation. The destructor calls cudaFree and ignores its error (it cannot throw).
class DeviceBuffer {
 public:
  DeviceBuffer() noexcept = default;
  explicit DeviceBuffer(std::size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  [[nodiscard]] void* get() const noexcept { return ptr_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  /// The handle another process opens with IpcMemory (describes the whole allocation).
  [[nodiscard]] cudaIpcMemHandle_t ipc_handle() const;

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// interprocess and blocking_sync events have timing disabled; timing events can be timed.
enum class EventKind { interprocess, blocking_sync, timing };

/// A CUDA event; interprocess events are created with timing disabled, as IPC requires.
class Event {
 public:
  Event() noexcept = default;
  explicit Event(EventKind kind);
  /// Takes ownership of an event opened from an IPC handle.
  static Event from_ipc_handle(const cudaIpcEventHandle_t& handle);
  Event(Event&& o) noexcept : ev_(std::exchange(o.ev_, nullptr)) {}
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();  // cudaEventDestroy, errors ignored
  [[nodiscard]] cudaEvent_t get() const noexcept { return ev_; }
  [[nodiscard]] cudaIpcEventHandle_t ipc_handle() const;

 private:
  cudaEvent_t ev_ = nullptr;
};

/// A non-blocking stream (does not synchronise with the legacy default stream).
class Stream {
 public:
  Stream() noexcept = default;
  static Stream create();
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  [[nodiscard]] cudaStream_t get() const noexcept { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// Another process's allocation mapped into this one (cudaIpcOpenMemHandle); unmapped when the
/// last IpcMemory of that handle in this process goes. CUDA maps a handle once per process and
/// refuses a second open (cudaErrorAlreadyMapped), so several clients of one daemon in one process
/// share the mapping through a process-wide reference count.
class IpcMemory {
 public:
  IpcMemory() noexcept = default;
  explicit IpcMemory(const cudaIpcMemHandle_t& handle);
  IpcMemory(IpcMemory&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  IpcMemory& operator=(IpcMemory&& o) noexcept;
  IpcMemory(const IpcMemory&) = delete;
  IpcMemory& operator=(const IpcMemory&) = delete;
  ~IpcMemory();
  [[nodiscard]] void* get() const noexcept { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

/// Bytes of an IPC handle, for the wire, and back (throws Error(bad_message) on a wrong size).
std::vector<char> to_bytes(const cudaIpcMemHandle_t& h);
std::vector<char> to_bytes(const cudaIpcEventHandle_t& h);
cudaIpcMemHandle_t mem_handle_from(const std::vector<char>& bytes);
cudaIpcEventHandle_t event_handle_from(const std::vector<char>& bytes);

}  // namespace cuview::cuda
