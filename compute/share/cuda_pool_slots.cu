// IPC memory pools: a pool created with POSIX-fd handles, one allocation per slot from it. The
// pool travels as one descriptor over the descriptor socket; each slot as a 64-byte export record.
#include "cuview/cuda_share.hpp"
#include "share/cuda_slots.hpp"

namespace cuview {
namespace {

class CudaPoolSlots final : public CudaSlots {
 public:
  CudaPoolSlots(Executor& executor, const SlotLayout& layout, std::uint32_t slots)
      : CudaSlots(executor, slots), pool_(cuda::MemPool::create_ipc(device_)), fd_(pool_.export_fd()) {
    cuda::DeviceGuard guard(device_);
    const auto stream = static_cast<cudaStream_t>(executor.stream());
    for (std::uint32_t s = 0; s < slots; ++s)
      memory_.push_back(cuda::PoolAllocation::allocate(pool_, layout.slot_bytes, stream));
    zero_and_record(layout);  // also completes the stream-ordered allocations before they are exported
    for (const auto& m : memory_) records_.push_back(m.export_record());
  }
  ~CudaPoolSlots() override {
    try {
      cuda::DeviceGuard guard(device_);
      cudaStreamSynchronize(static_cast<cudaStream_t>(executor_.stream()));
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

std::unique_ptr<SlotMemory> make_cuda_pool_slots(Executor& executor, const SlotLayout& layout, std::uint32_t slots) {
  return std::make_unique<CudaPoolSlots>(executor, layout, slots);
}

}  // namespace cuview
