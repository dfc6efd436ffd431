// The import half of pool: the pool imported from its one descriptor, then each slot's pointer
// from its export record; the descriptor closes as soon as the pool holds its own reference.
#include "cuview/share/registry.hpp"
#include "share/cuda_slots.hpp"
#include "share/pool/mem_pool.hpp"

namespace cuview::share::pool {
namespace {

class ImportedPoolSlots final : public ImportedSlots {
 public:
  explicit ImportedPoolSlots(const ImportSource& source) {
    pool_ = cuda::MemPool::import(single_fd(source).get());  // the descriptor closes after this line
    for (const auto& s : source.handles.slots) {
      memory_.push_back(cuda::PoolAllocation::import(pool_, s.memory));
      slots_.push_back(static_cast<const std::byte*>(memory_.back().get()) + s.offset);
    }
  }

 private:
  cuda::MemPool pool_;
  std::vector<cuda::PoolAllocation> memory_;  // freed before pool_: declared after it
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) {
  return std::make_unique<ImportedPoolSlots>(source);
}

}  // namespace cuview::share::pool
