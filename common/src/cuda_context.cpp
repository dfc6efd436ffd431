#include "cuview/cuda_context.hpp"

#include "cuda_driver.hpp"

namespace cuview::cuda {

PrimaryContext PrimaryContext::retain(int device) {
  const Driver& d = complete_driver("using GPU " + std::to_string(device) + " without changing the current device");
  CUdevice dev = 0;
  check_cu(d.device_get(&dev, device), "cuDeviceGet(" + std::to_string(device) + ")");
  PrimaryContext c;
  check_cu(d.primary_retain(&c.context_, dev),
           "cuDevicePrimaryCtxRetain: the primary context of GPU " + std::to_string(device));
  c.device_ = device;
  return c;
}

PrimaryContext::~PrimaryContext() {
  if (context_ == nullptr) return;
  CUdevice dev = 0;
  if (driver().device_get(&dev, device_) == CUDA_SUCCESS) (void)driver().primary_release(dev);
}

ContextScope::ContextScope(const PrimaryContext& context) {
  check_cu(driver().push_current(context.get()),
           "cuCtxPushCurrent: making the context of GPU " + std::to_string(context.device()) + " current");
}

ContextScope::~ContextScope() {
  CUcontext popped = nullptr;
  (void)driver().pop_current(&popped);  // cannot fail after a successful push on this thread
}

}  // namespace cuview::cuda
