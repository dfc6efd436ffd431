#include "cuview/share/registry.hpp"

#include <vector>

#include "cuview/error.hpp"

namespace cuview::share {

// The halves, each defined in its mechanism's folder (common/src/share/NAME/NAME_export.cpp and
// NAME_import.cpp), one line per mechanism as in the table below.
// clang-format off
namespace shm { ExportHalf export_; ImportHalf import; }
namespace legacy { Unsupported unsupported; ExportHalf export_; ImportHalf import; }
namespace vmm { Unsupported unsupported; ExportHalf export_; ImportHalf import; }
namespace pool { Unsupported unsupported; ExportHalf export_; ImportHalf import; }
// clang-format on

namespace {

// The CUDA halves exist only in builds with CUDA; their names stay known without (for messages).
#ifdef CUVIEW_HAVE_CUDA
#define CUVIEW_CUDA_HALF(half) &half
#else
#define CUVIEW_CUDA_HALF(half) nullptr
#endif

/// One line per mechanism, host first; the first CUDA one is what "auto" picks on CUDA.
const Mechanism kMechanisms[] = {
    {"shm", Backend::host, "POSIX shared memory", nullptr, &shm::export_, &shm::import},
    {"legacy", Backend::cuda, "cudaIpcGetMemHandle", CUVIEW_CUDA_HALF(legacy::unsupported),
     CUVIEW_CUDA_HALF(legacy::export_), CUVIEW_CUDA_HALF(legacy::import)},
    {"vmm", Backend::cuda, "cuMemCreate and a file descriptor", CUVIEW_CUDA_HALF(vmm::unsupported),
     CUVIEW_CUDA_HALF(vmm::export_), CUVIEW_CUDA_HALF(vmm::import)},
    {"pool", Backend::cuda, "an IPC memory pool", CUVIEW_CUDA_HALF(pool::unsupported), CUVIEW_CUDA_HALF(pool::export_),
     CUVIEW_CUDA_HALF(pool::import)},
};

const Mechanism& automatic(const SlotPlace& place) {
  for (const Mechanism& m : kMechanisms)
    if ((m.backend == Backend::host) == place.on_host()) return m;
  throw Error(Errc::internal, "no sharing mechanism for this backend; please report this bug");
}

}  // namespace

std::vector<std::string> sharing_choices() {
  std::vector<std::string> names{"auto"};
  for (const Mechanism& m : kMechanisms)
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

std::span<const Mechanism> mechanisms() noexcept { return kMechanisms; }

const Mechanism* find_mechanism(std::string_view name) noexcept {
  for (const Mechanism& m : kMechanisms)
    if (m.name == name) return &m;
  return nullptr;
}

void check_sharing(const std::string& sharing, const SlotPlace& place, const std::string& who) {
  // The host backend has one mechanism, chosen by "auto": `--sharing` names CUDA ones only.
  const Mechanism* named = find_mechanism(sharing);
  if (sharing != "auto" && (named == nullptr || named->backend != Backend::cuda))
    throw Error(Errc::bad_value,
                who + ": unknown sharing mechanism '" + sharing + "'; choose " + sharing_choices_text());
  if (place.on_host()) {
    if (sharing != "auto")
      throw Error(Errc::unsupported, who + ": sharing '" + sharing +
                                         "' is a CUDA mechanism, and this publisher runs on the host backend, which "
                                         "shares frames through POSIX shared memory; use --sharing auto, or "
                                         "--backend cuda on a machine with an NVIDIA GPU");
    return;
  }
#ifdef CUVIEW_HAVE_CUDA
  const Mechanism& mechanism = named != nullptr ? *named : automatic(place);
  if (auto why = mechanism.unsupported(place.device)) {
    std::string others;
    for (const Mechanism& m : kMechanisms)
      if (m.backend == Backend::cuda && &m != &mechanism && !m.unsupported(place.device))
        others += std::string(others.empty() ? "" : " or ") + "--sharing " + std::string(m.name);
    throw Error(Errc::unsupported, who + ": sharing '" + std::string(mechanism.name) + "' cannot work here: " + *why +
                                       "; " +
                                       (others.empty() ? std::string("no CUDA sharing mechanism works on this GPU; "
                                                                     "use --backend host")
                                                       : "use " + others + " instead"));
  }
#else
  throw Error(Errc::internal, who + ": a CUDA executor in a build without CUDA; please report this bug");
#endif
}

std::unique_ptr<SlotMemory> make_slot_memory(const SlotLayout& layout, std::uint32_t slots, const std::string& sharing,
                                             const SlotPlace& place, const std::string& who) {
  check_sharing(sharing, place, who);
  const Mechanism& mechanism = sharing == "auto" ? automatic(place) : *find_mechanism(sharing);
  return mechanism.export_(layout, slots, place);
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
