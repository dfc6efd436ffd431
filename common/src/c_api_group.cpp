// The C API's runs of parts (cuview/client.h "groups"): a cuview_group is the Run cuview::open
// opened, its parts borrowed clients.
#include "c_api/internal.hpp"

using namespace cuview::capi;

extern "C" {

uint32_t cuview_running_parts(const char* name) {
  if (name == nullptr) return 0;
  try {
    return cuview::running_parts(name);
  } catch (const std::exception&) {
    return 0;  // an unusable runtime directory: nothing runs there as parts
  }
}

namespace {
/// The C handle of an attached group: its parts' borrowed clients and their infos.
cuview_group* wrapped_group(std::unique_ptr<cuview::Run> run) {
  auto& ref = *run;
  auto g = std::make_unique<cuview_group>(cuview_group{std::move(run), ref, {}, {}, {}, {}, {}, {}});
  g->global_dims = g->group.extent().dims;
  for (std::size_t k = 0; k < g->group.size(); ++k) g->blocks.push_back(g->group.block(k));  // never grows again
  for (std::size_t k = 0; k < g->group.size(); ++k) {
    auto& part = g->group.part(k);
    g->parts.push_back(wrapped(part, nullptr, part.via()));
    const auto& p = g->group.part_desc(k);
    const auto& b = g->blocks[k];
    g->infos.push_back(cuview_part_info{p.index, p.count, static_cast<uint32_t>(g->global_dims.size()),
                                        b.offset.data(), b.dims.data(), g->global_dims.data(), p.rank,
                                        part.hello().daemon_pid, p.host.c_str(), part.description().device.c_str(),
                                        p.group.c_str()});
  }
  return g.release();
}
}  // namespace

cuview_status cuview_group_attach(const char* name, const char* client_name, int control_only, int timeout_ms,
                                  cuview_group** out) {
  if (name == nullptr || out == nullptr) return null_argument("cuview_group_attach");
  *out = nullptr;
  return guarded([&] {
    *out = wrapped_group(cuview::open(open_options(name, client_name, timeout_ms, control_only, {})));
  });
}

cuview_status cuview_group_attach_remote(const char* name, const char* client_name, const char* const* gateways,
                                         size_t count, int timeout_ms, cuview_group** out) {
  if (name == nullptr || gateways == nullptr || out == nullptr) return null_argument("cuview_group_attach_remote");
  *out = nullptr;
  return guarded([&] {
    std::vector<std::string> urls;
    for (size_t i = 0; i < count; ++i)
      if (gateways[i] != nullptr) urls.emplace_back(gateways[i]);
    if (urls.empty()) throw cuview::Error(cuview::Errc::bad_value, "cuview_group_attach_remote of '" + std::string(name) +
                                                                    "' needs the URL of at least one gateway");
    *out = wrapped_group(cuview::open(open_options(name, client_name, timeout_ms, 1, urls)));
  });
}

cuview_status cuview_group_watch(cuview_group* group, const char* field, uint32_t view_w, uint32_t view_h, double zoom,
                                 double center_x, double center_y, const char* encoding) {
  if (group == nullptr || field == nullptr) return null_argument("cuview_group_watch");
  return guarded([&] {
    auto& g = remote_run_of(*group, "cuview_group_watch");
    const cuview::Extent grid = g.extent();
    g.watch(fitted_watch("cuview_group_watch", g.name(), static_cast<int>(grid.width()),
                         static_cast<int>(grid.height()), field, view_w, view_h, zoom, center_x, center_y, encoding));
  });
}

cuview_status cuview_group_watch_plane(cuview_group* group, const char* field, const char* axis, uint32_t index,
                                       uint32_t view_w, uint32_t view_h, double zoom, double center_x, double center_y,
                                       const char* encoding) {
  if (group == nullptr || field == nullptr || axis == nullptr) return null_argument("cuview_group_watch_plane");
  return guarded([&] {
    auto& g = remote_run_of(*group, "cuview_group_watch_plane");
    g.watch(plane_watch("cuview_group_watch_plane", g.name(), g.extent().dims, field, axis, index, view_w, view_h,
                        zoom, center_x, center_y, encoding));
  });
}

cuview_status cuview_group_next_view(cuview_group* group, int timeout_ms, cuview_view* out) {
  if (group == nullptr || out == nullptr) return null_argument("cuview_group_next_view");
  cuview::RemoteGroup* remote = nullptr;
  if (const auto s = guarded([&] { remote = &remote_run_of(*group, "cuview_group_next_view"); }); s != CUVIEW_OK)
    return s;
  return next_view_of(*remote, group->view, timeout_ms, out);
}

void cuview_group_detach(cuview_group* group) { delete group; }
int cuview_group_decomposed(const cuview_group* group) {
  return group != nullptr && group->group.decomposed() ? 1 : 0;
}
size_t cuview_group_parts(const cuview_group* group) { return group != nullptr ? group->parts.size() : 0; }

cuview_status cuview_group_part_info(const cuview_group* group, size_t k, cuview_part_info* out) {
  if (group == nullptr || out == nullptr) return null_argument("cuview_group_part_info");
  // The run says which parts exist (Error(out_of_range) naming the run and its part count).
  return guarded([&] {
    (void)group->group.part_desc(k);
    *out = group->infos[k];
  });
}

cuview_client* cuview_group_part(cuview_group* group, size_t k) {
  if (group == nullptr) {
    null_argument("cuview_group_part");
    return nullptr;
  }
  if (guarded([&] { (void)group->group.part(k); }) != CUVIEW_OK) return nullptr;
  return group->parts[k].get();
}
cuview_client* cuview_group_leader(cuview_group* group) { return cuview_group_part(group, 0); }

const char* cuview_group_gone_reason(cuview_group* group) {
  if (group == nullptr) return "";
  group->gone_reason = group->group.gone_reason().value_or("");
  return group->gone_reason.c_str();
}

cuview_status cuview_group_read_fields(cuview_group* group, const char* const* names, size_t count) {
  if (group == nullptr || (names == nullptr && count > 0)) return null_argument("cuview_group_read_fields");
  return guarded([&] {
    std::vector<std::string> list;
    for (size_t i = 0; i < count; ++i) list.emplace_back(names[i] != nullptr ? names[i] : "");
    group->group.read_fields(list);
  });
}

cuview_status cuview_group_next(cuview_group* group, int timeout_ms, cuview_group_frame** out) {
  if (group == nullptr || out == nullptr) return null_argument("cuview_group_next");
  *out = nullptr;
  bool none = false;
  const auto s = guarded([&] {
    auto frames = group->group.next(std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms));
    if (!frames) {
      none = true;
      return;
    }
    auto gf = std::make_unique<cuview_group_frame>(std::move(*frames));
    gf->parts.resize(gf->frames.size());
    for (std::size_t k = 0; k < gf->parts.size(); ++k) {
      gf->parts[k].frame = &gf->frames.part(k);
      point_blocks(gf->parts[k], *group->parts[k]);
    }
    *out = gf.release();
  });
  if (s == CUVIEW_OK && none) {
    thread_error() = "no new step from every part of '" + group->group.name() + "' within " + std::to_string(timeout_ms) +
              " ms";
    return CUVIEW_NO_FRAME;
  }
  return s;
}

void cuview_group_frame_release(cuview_group_frame* frames) { delete frames; }
uint64_t cuview_group_frame_step(const cuview_group_frame* frames) {
  return frames != nullptr ? frames->frames.step() : 0;
}
size_t cuview_group_frame_parts(const cuview_group_frame* frames) {
  return frames != nullptr ? frames->parts.size() : 0;
}
const cuview_frame* cuview_group_frame_part(const cuview_group_frame* frames, size_t k) {
  return frames != nullptr && k < frames->parts.size() ? &frames->parts[k] : nullptr;
}

size_t cuview_group_frame_field_bytes(const cuview_group_frame* frames, size_t field) {
  if (frames == nullptr) return 0;
  try {
    return frames->frames.global_field_bytes(field);
  } catch (const std::exception&) {
    return 0;
  }
}

cuview_status cuview_group_frame_copy_field(const cuview_group_frame* frames, size_t field, void* dst, size_t bytes) {
  if (frames == nullptr || dst == nullptr) return null_argument("cuview_group_frame_copy_field");
  return guarded([&] { frames->frames.copy_field_to_host(field, {static_cast<std::byte*>(dst), bytes}); });
}

cuview_status cuview_group_frame_copy_field_to_device(const cuview_group_frame* frames, size_t field, void* dst,
                                                     size_t bytes) {
  if (frames == nullptr || dst == nullptr) return null_argument("cuview_group_frame_copy_field_to_device");
  return guarded([&] { frames->frames.copy_field_to_device(field, dst, bytes); });
}

cuview_status cuview_group_frame_verify(const cuview_group_frame* frames) {
  if (frames == nullptr) return null_argument("cuview_group_frame_verify");
  return guarded([&] {
    if (auto problem = frames->frames.verify()) throw cuview::Error(cuview::Errc::bad_value, *problem);
  });
}

}  // extern "C"
