// IPC memory pools: a pool created with POSIX-fd handles, one allocation per slot from it. The
// pool travels as one descriptor over the descriptor socket, each slot as a 64-byte export record
// in `handles`. The export half: the pool, its descriptor, the allocations and their records,
// made once at creation.
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "share/exports.hpp"
#include "share/cuda_slots.hpp"
#include "share/pool/mem_pool.hpp"

namespace cuview::share::pool {
namespace {

class CudaPoolSlots final : public CudaSlots {
 public:
  CudaPoolSlots(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place)
      : CudaSlots(place, slots), pool_(cuda::MemPool::create_ipc(device_)), fd_(pool_.export_fd()) {
    cuda::DeviceGuard guard(device_);
    for (std::uint32_t s = 0; s < slots; ++s)
      memory_.push_back(cuda::PoolAllocation::allocate(pool_, layout.slot_bytes, stream_));
    zero_and_record(layout);  // also completes the stream-ordered allocations before they are exported
    for (const auto& m : memory_) records_.push_back(m.export_record());
  }
  ~CudaPoolSlots() override {
    try {
      cuda::DeviceGuard guard(device_);
      cudaStreamSynchronize(stream_.get());
    } catch (...) {
    }
    memory_.clear();  // before the pool
  }
  void* slot(std::uint32_t i) const override { return memory_.at(i).get(); }
  const char* mechanism() const override { return "pool"; }
  void fill_handles(proto::HandlesResult& h) const override {
    h.slots.assign(count(), {});
    for (std::uint32_t s = 0; s < count(); ++s) h.slots[s].memory = records_[s];
    fill_common(h);
  }
  std::vector<int> fds() const override { return {fd_.get()}; }

 private:
  cuda::MemPool pool_;
  UniqueFd fd_;
  std::vector<cuda::PoolAllocation> memory_;
  std::vector<std::vector<char>> records_;
};

}  // namespace

std::optional<std::string> unsupported(int device) noexcept { return cuda_unsupported(device, &cuda::pool_unsupported); }

std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace& place) {
  return std::make_unique<CudaPoolSlots>(layout, slots, place);
}

}  // namespace cuview::share::pool
