// The import half of shm: a client maps the named segment read-only, after checking it is its
// user's (SharedMemory::open).
#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"

namespace cuview::share::shm {
namespace {

class ImportedSegment final : public ImportedSlots {
 public:
  // The segment is opened (and its owner checked) at once, mapped whole: a mapping of shared
  // memory costs nothing until a page is touched, so a slot not read costs nothing either.
  explicit ImportedSegment(const ImportSource& source)
      : ImportedSlots(static_cast<std::uint32_t>(source.handles.slots.size())) {
    const auto& h = source.handles;
    data_ = SharedMemory::open(h.data_shm, source.slot_bytes * h.slots.size(), Access::read_only);
    for (const auto& s : h.slots) {
      if (s.offset + source.slot_bytes > data_.size())
        throw Error(Errc::bad_message,
                    "slot offset " + std::to_string(s.offset) + " lies outside segment " + h.data_shm);
      offsets_.push_back(s.offset);
    }
  }

 private:
  void map(std::uint32_t i) override { slots_[i] = static_cast<const std::byte*>(data_.data()) + offsets_[i]; }
  std::vector<std::uint64_t> offsets_;
  SharedMemory data_;
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) { return std::make_unique<ImportedSegment>(source); }

}  // namespace cuview::share::shm
