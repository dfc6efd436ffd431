#include <algorithm>

#include "cuview/share/registry.hpp"

#include <vector>

#include "cuview/error.hpp"
#include "share/cuda_half.hpp"

namespace cuview::share {

// The import halves, each defined in its mechanism's folder (common/src/share/NAME/NAME_import.cpp;
// the export halves are the publisher's: exports.cpp), one line per mechanism as in the table below.
// clang-format off
namespace shm { ImportHalf import; }
namespace legacy { ImportHalf import; }
namespace vmm { ImportHalf import; }
namespace pool { ImportHalf import; }
// clang-format on

std::vector<std::string> sharing_choices() {
  std::vector<std::string> names{"auto"};
  for (const Mechanism& m : mechanisms())
    if (m.backend == Backend::cuda) names.emplace_back(m.name);
  return names;
}

std::string sharing_choices_text() {
  const auto names = sharing_choices();
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    if (const Mechanism* m = find_mechanism(names[i])) text += " (" + std::string(m->made_with) + ")";
  }
  return text;
}

std::span<const Mechanism> mechanisms() noexcept {
  // One line per mechanism, host first; the first CUDA one is what "auto" picks on CUDA. Made on
  // first use, so that tables of other translation units may point into it.
  static const Mechanism kMechanisms[] = {
      {"shm", Backend::host, "POSIX shared memory", &shm::import},
      {"legacy", Backend::cuda, "cudaIpcGetMemHandle", CUVIEW_CUDA_HALF(legacy::import)},
      {"vmm", Backend::cuda, "cuMemCreate and a file descriptor", CUVIEW_CUDA_HALF(vmm::import)},
      {"pool", Backend::cuda, "an IPC memory pool", CUVIEW_CUDA_HALF(pool::import)},
  };
  return kMechanisms;
}

const Mechanism* find_mechanism(std::string_view name) noexcept {
  for (const Mechanism& m : mechanisms())
    if (m.name == name) return &m;
  return nullptr;
}

const std::byte* ImportedSlots::slot(std::uint32_t i) {
  if (i >= slots_.size())
    throw Error(Errc::bad_message, "slot " + std::to_string(i) + " is outside a ring of " +
                                       std::to_string(slots_.size()) + " slots; the publisher's ring state is corrupt");
  const std::lock_guard lock(mutex_);
  if (slots_[i] == nullptr) map(i);
  return slots_[i];
}

std::uint32_t ImportedSlots::mapped() const {
  const std::lock_guard lock(mutex_);
  return static_cast<std::uint32_t>(std::count_if(slots_.begin(), slots_.end(), [](auto* p) { return p != nullptr; }));
}

std::unique_ptr<ImportedSlots> import_slots(const ImportSource& source) {
  const auto& h = source.handles;
  const Mechanism* m = find_mechanism(h.sharing);
  if (h.backend == "host") {
    if (m == nullptr || m->backend != Backend::host)
      throw Error(Errc::bad_message, source.who + " runs on the host but shares by '" + h.sharing + "'");
  } else if (m == nullptr || m->backend != Backend::cuda || m->import == nullptr) {
    throw Error(Errc::bad_message, source.who + " shares its ring by '" + h.sharing +
                                       "', which this client does not know; update the client");
  }
  return m->import(source);
}

}  // namespace cuview::share
