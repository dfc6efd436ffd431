// The export halves of the sharing mechanisms, by name (exports.hpp): built into the publisher
// library. One line per mechanism, in the registry's order (registry.cpp).
#include "share/exports.hpp"

#include "cuview/error.hpp"
#include "share/cuda_half.hpp"

namespace cuview::share {

// The halves, each defined in its mechanism's folder (common/src/share/NAME/NAME_export.cpp).
// clang-format off
namespace shm { ExportHalf export_; }
namespace legacy { Unsupported unsupported; ExportHalf export_; }
namespace vmm { Unsupported unsupported; ExportHalf export_; }
namespace pool { Unsupported unsupported; ExportHalf export_; }
// clang-format on

namespace {

/// What "auto" picks: the first mechanism of the place's backend in the registry's order.
const Exporter& automatic(const SlotPlace& place) {
  for (const Exporter& e : exporters())
    if ((e.mechanism->backend == Backend::host) == place.on_host()) return e;
  throw Error(Errc::internal, "no sharing mechanism for this backend; please report this bug");
}

}  // namespace

std::span<const Exporter> exporters() noexcept {
  // Made on first use: it points into the registry's table, of another translation unit.
  static const Exporter kExporters[] = {
      {find_mechanism("shm"), nullptr, &shm::export_},
      {find_mechanism("legacy"), CUVIEW_CUDA_HALF(legacy::unsupported), CUVIEW_CUDA_HALF(legacy::export_)},
      {find_mechanism("vmm"), CUVIEW_CUDA_HALF(vmm::unsupported), CUVIEW_CUDA_HALF(vmm::export_)},
      {find_mechanism("pool"), CUVIEW_CUDA_HALF(pool::unsupported), CUVIEW_CUDA_HALF(pool::export_)},
  };
  return kExporters;
}

const Exporter* find_exporter(std::string_view name) noexcept {
  for (const Exporter& e : exporters())
    if (e.mechanism->name == name) return &e;
  return nullptr;
}

void check_sharing(const std::string& sharing, const SlotPlace& place, const std::string& who) {
  // The host backend has one mechanism, chosen by "auto": `--sharing` names CUDA ones only.
  const Exporter* named = find_exporter(sharing);
  if (sharing != "auto" && (named == nullptr || named->mechanism->backend != Backend::cuda))
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
  const Exporter& mechanism = named != nullptr ? *named : automatic(place);
  if (auto why = mechanism.unsupported(place.device)) {
    std::string others;
    for (const Exporter& m : exporters())
      if (m.mechanism->backend == Backend::cuda && &m != &mechanism && !m.unsupported(place.device))
        others += std::string(others.empty() ? "" : " or ") + "--sharing " + std::string(m.mechanism->name);
    throw Error(Errc::unsupported, who + ": sharing '" + std::string(mechanism.mechanism->name) + "' cannot work here: " + *why +
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
  const Exporter& mechanism = sharing == "auto" ? automatic(place) : *find_exporter(sharing);
  return mechanism.export_(layout, slots, place);
}

}  // namespace cuview::share
