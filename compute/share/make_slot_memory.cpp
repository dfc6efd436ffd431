#include <string>

#include "cuview/error.hpp"
#include "share/slot_memory.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda_share.hpp"
#endif

namespace cuview {

void check_sharing(const Executor& executor, const std::string& sharing, const std::string& who) {
  bool known = false;
  for (const char* c : kSharingChoices) known = known || sharing == c;
  if (!known)
    throw Error(Errc::bad_value, who + ": unknown sharing mechanism '" + sharing +
                                     "'; choose auto, legacy (cudaIpcGetMemHandle), vmm (cuMemCreate and a file "
                                     "descriptor) or pool (an IPC memory pool)");
  if (executor.kind() != Executor::Kind::cuda) {
    if (sharing != "auto")
      throw Error(Errc::unsupported, who + ": sharing '" + sharing +
                                         "' is a CUDA mechanism, and this publisher runs on the host backend, which "
                                         "shares frames through POSIX shared memory; use --sharing auto, or "
                                         "--backend cuda on a machine with an NVIDIA GPU");
    return;
  }
#ifdef CUVIEW_HAVE_CUDA
  const std::string mechanism = sharing == "auto" ? "legacy" : sharing;
  if (auto why = cuda::sharing_unsupported(mechanism, executor.device_id())) {
    std::string others;
    for (const char* c : {"legacy", "vmm", "pool"})
      if (c != mechanism && !cuda::sharing_unsupported(c, executor.device_id()))
        others += std::string(others.empty() ? "" : " or ") + "--sharing " + c;
    throw Error(Errc::unsupported, who + ": sharing '" + mechanism + "' cannot work here: " + *why + "; " +
                                       (others.empty() ? std::string("no CUDA sharing mechanism works on this GPU; "
                                                                     "use --backend host")
                                                       : "use " + others + " instead"));
  }
#else
  throw Error(Errc::internal, who + ": a CUDA executor in a build without CUDA; please report this bug");
#endif
}

std::unique_ptr<SlotMemory> make_slot_memory(Executor& executor, const SlotLayout& layout, std::uint32_t slots,
                                             const std::string& sharing, const std::string& who) {
  check_sharing(executor, sharing, who);
  if (executor.kind() != Executor::Kind::cuda) return make_shared_memory_slots(layout, slots);
#ifdef CUVIEW_HAVE_CUDA
  if (sharing == "vmm") return make_cuda_vmm_slots(executor, layout, slots);
  if (sharing == "pool") return make_cuda_pool_slots(executor, layout, slots);
  return make_cuda_ipc_slots(executor, layout, slots);
#else
  return nullptr;
#endif
}

}  // namespace cuview
