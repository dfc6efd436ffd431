// POSIX shared memory, the host backend's mechanism: one segment holding every slot (slot i at
// i × slot_bytes). A frame is complete before the ring publishes it, so no event is needed: the
// ring's publish counter is the signal. The export half: the publisher creates the segment and
// names it in `handles`.
#include "cuview/posix.hpp"
#include "share/exports.hpp"

namespace cuview::share::shm {
namespace {

class SharedMemorySlots final : public SlotMemory {
 public:
  SharedMemorySlots(const SlotLayout& layout, std::uint32_t slots)
      : layout_(layout), count_(slots), data_(SharedMemory::create(layout.slot_bytes * slots)) {}
  std::uint32_t count() const override { return count_; }
  void* slot(std::uint32_t i) const override { return static_cast<std::byte*>(data_.data()) + i * layout_.slot_bytes; }
  void before_write(std::uint32_t, cuda::StreamRef) override {}
  void written(std::uint32_t, cuda::StreamRef) override {}
  const char* mechanism() const override { return "shm"; }
  void fill_handles(proto::HandlesResult& h) const override {
    h.data_shm = data_.name();
    h.slots.clear();
    for (std::uint32_t s = 0; s < count_; ++s) h.slots.push_back({{}, {}, s * layout_.slot_bytes});
  }
  std::vector<std::string> segments() const override { return {data_.name()}; }

 private:
  SlotLayout layout_;
  std::uint32_t count_;
  SharedMemory data_;
};

}  // namespace

std::unique_ptr<SlotMemory> export_(const SlotLayout& layout, std::uint32_t slots, const SlotPlace&) {
  return std::make_unique<SharedMemorySlots>(layout, slots);
}

}  // namespace cuview::share::shm
