// The import half of shm: a client maps the named segment read-only, after checking it is its
// user's (SharedMemory::open).
#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"

namespace cuview::share::shm {
namespace {

class ImportedSegment final : public ImportedSlots {
 public:
  explicit ImportedSegment(const ImportSource& source) {
    const auto& h = source.handles;
    data_ = SharedMemory::open(h.data_shm, source.slot_bytes * h.slots.size(), Access::read_only);
    for (const auto& s : h.slots) {
      if (s.offset + source.slot_bytes > data_.size())
        throw Error(Errc::bad_message,
                    "slot offset " + std::to_string(s.offset) + " lies outside segment " + h.data_shm);
      slots_.push_back(static_cast<const std::byte*>(data_.data()) + s.offset);
    }
  }

 private:
  SharedMemory data_;
};

}  // namespace

std::unique_ptr<ImportedSlots> import(const ImportSource& source) { return std::make_unique<ImportedSegment>(source); }

}  // namespace cuview::share::shm
