// The import half of pool: the pool imported from its one descriptor, then each slot's pointer
// from its export record when the slot is first read; the descriptor closes as soon as the pool
// holds its own reference.
#include "cuview/cuda/device_guard.hpp"
#include "cuview/share/registry.hpp"
#include "share/cuda_slots.hpp"
#include "share/pool/mem_pool.hpp"

namespace cuview::share::pool {
namespace {

class ImportedPoolSlots final : public ImportedSlots {
 public:
  explicit ImportedPoolSlots(const ImportSource& source)
      : ImportedSlots(static_cast<std::uint32_t>(source.handles.slots.size())), device_(source.device),
        slots_in_(source.handles.slots), memory_(source.handles.slots.size()) {
    pool_ = cuda::MemPool::import(single_fd(source).get());  // the descriptor closes after this line
  }

 private:
  void map(std::uint32_t i) override {
    cuda::DeviceGuard guard(device_);
    memory_[i] = cuda::PoolAllocation::import(pool_, slots_in_[i].memory);
    slots_[i] = static_cast<const std::byte*>(memory_[i].get()) + slots_in_[i].offset;
  }
  int device_;
  std::vector<proto::SlotHandle> slots_in_;  // each slot's export record and offset
  cuda::MemPool pool_;
  std::vector<cuda::PoolAllocation> memory_;  // freed before pool_: declared after it
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) {
  return std::make_unique<ImportedPoolSlots>(source);
}

}  // namespace cuview::share::pool
