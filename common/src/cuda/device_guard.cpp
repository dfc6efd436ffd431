#include "cuview/cuda/device_guard.hpp"

#include <array>
#include <atomic>
#include <mutex>

#include "cuda/driver.hpp"
#include "cuview/error.hpp"

namespace cuview::cuda {
namespace {
constexpr int kMaxDevices = 64;

/// `device`'s primary context, retained on first use and kept for the life of the process (the
/// runtime keeps it too): guards then cost a lookup and a push, never a retain.
CUcontext primary_context(int device) {
  static std::array<std::atomic<CUcontext>, kMaxDevices> contexts{};
  static std::mutex retaining;
  if (device < 0 || device >= kMaxDevices)
    throw Error(Errc::bad_value, "GPU " + std::to_string(device) + " is not a device number cuview can use");
  if (CUcontext c = contexts[device].load(std::memory_order_acquire)) return c;
  std::lock_guard lock(retaining);
  if (CUcontext c = contexts[device].load()) return c;
  const Driver& d = complete_driver("using GPU " + std::to_string(device) + " without changing the current device");
  CUdevice dev = 0;
  check_cu(d.device_get(&dev, device), "cuDeviceGet(" + std::to_string(device) + ")");
  CUcontext c = nullptr;
  check_cu(d.primary_retain(&c, dev), "cuDevicePrimaryCtxRetain: the primary context of GPU " + std::to_string(device));
  contexts[device].store(c, std::memory_order_release);
  return c;
}
}  // namespace

DeviceGuard::DeviceGuard(int device) {
  check_cu(driver().push_current(primary_context(device)),
           "cuCtxPushCurrent: making the context of GPU " + std::to_string(device) + " current");
}

DeviceGuard::~DeviceGuard() {
  CUcontext popped = nullptr;
  (void)driver().pop_current(&popped);  // cannot fail after a successful push on this thread
}

}  // namespace cuview::cuda
