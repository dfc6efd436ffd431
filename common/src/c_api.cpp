// The C API (cuview/client.h) on the C++ client library: each handle owns a C++ object, each call
// catches what the C++ call throws and turns it into a status and a thread-local message.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuview/client.h"
#include "cuview/client.hpp"
#include "cuview/error.hpp"
#include "cuview/protocol_json.hpp"
#include "cuview/runtime_dir.hpp"

// A client either owns its cuview::Client (cuview_attach) or borrows one of a group's parts
// (cuview_group_part), which the group frees; `client` points at it either way.
struct cuview_client {
  std::unique_ptr<cuview::Attachment> owned;
  cuview::Attachment* client = nullptr;
  std::string remote;  // the gateway's URL; empty when local
  std::string describe_json, stats_json;
  std::vector<cuview_block> blocks;
  std::vector<std::string> names;  // "set.attribute" for particle attributes, for cuview_block_index
  cuview::RemoteView view;         // the last cuview_next_view's, which points into it
  cuview::RemoteRegion region;     // the last cuview_fetch's, likewise
};

// Likewise a frame owns its cuview::Frame (cuview_next_frame) or borrows a part's frame of a
// group frame (cuview_group_frame_part), which cuview_group_frame_release releases.
struct cuview_frame {
  std::optional<cuview::Frame> owned;
  const cuview::Frame* frame = nullptr;
  std::vector<const void*> data;
};

struct cuview_group {
  std::unique_ptr<cuview::Run> run;  // from cuview::open
  cuview::Run& group;
  std::vector<std::unique_ptr<cuview_client>> parts;  // borrowing group.part(k)
  std::vector<cuview_part_info> infos;                // their strings point into group and parts
  std::string gone_reason;
  cuview::RemoteView view;  // the last cuview_group_next_view's, which points into it
};

struct cuview_group_frame {
  cuview::FrameGroup frames;
  std::vector<cuview_frame> parts;  // borrowing frames.part(k)
};

namespace {
thread_local std::string g_error;

cuview_status status_of(cuview::Errc code) { return static_cast<cuview_status>(static_cast<int>(code) + 1); }

/// Runs `f`, turning what it throws into a status and the thread's last error.
template <class F>
cuview_status guarded(F&& f) {
  try {
    f();
    g_error.clear();
    return CUVIEW_OK;
  } catch (const cuview::Error& e) {
    g_error = e.what();
    return status_of(e.code());
  } catch (const std::exception& e) {
    g_error = std::string("internal error: ") + e.what();
    return CUVIEW_INTERNAL;
  }
}

cuview_status null_argument(const char* call) {
  g_error = std::string(call) + ": a required argument is NULL";
  return CUVIEW_BAD_VALUE;
}

using cuview::proto::to_json;
template <class T>
std::string json_text(const T& value) {
  return to_json(value).dump();
}

cuview_block block_of(const cuview::proto::FieldDesc& f, const char* set) {
  cuview_block b{};
  b.name = f.name.c_str();
  b.set = set;
  b.dtype = f.dtype.c_str();
  b.components = f.components;
  b.ndim = static_cast<uint32_t>(std::min<std::size_t>(f.shape.size(), 3));
  for (uint32_t k = 0; k < b.ndim; ++k) b.shape[k] = f.shape[k], b.strides[k] = f.strides[k];
  b.offset = f.offset;
  b.bytes = f.bytes;
  return b;
}
}  // namespace

extern "C" {

const char* cuview_status_name(cuview_status status) {
  if (status == CUVIEW_OK) return "ok";
  if (status == CUVIEW_NO_FRAME) return "no_frame";
  if (status < CUVIEW_BAD_MESSAGE || status > CUVIEW_UNSUPPORTED) return "unknown";
  static thread_local std::string name;
  name = std::string(cuview::to_string(static_cast<cuview::Errc>(status - 1)));
  return name.c_str();
}

const char* cuview_last_error(void) { return g_error.c_str(); }
const char* cuview_version(void) { return CUVIEW_VERSION; }

namespace {
/// A handle on `client` (owned when `owned` holds it), its blocks listed from the description.
std::unique_ptr<cuview_client> wrapped(cuview::Attachment& client, std::unique_ptr<cuview::Attachment> owned,
                                       std::string remote) {
  auto c = std::make_unique<cuview_client>();
  c->owned = std::move(owned);
  c->client = &client;
  c->remote = std::move(remote);
  const auto& d = client.description();
  c->describe_json = json_text(d);
  for (const auto& f : d.fields) c->blocks.push_back(block_of(f, nullptr)), c->names.push_back(f.name);
  for (const auto& p : d.particles)
    for (const auto& a : p.attributes)
      c->blocks.push_back(block_of(a, p.name.c_str())), c->names.push_back(p.name + "." + a.name);
  return c;
}

/// A new handle on the client `o` attaches.
cuview_client* attached(const cuview::AttachOptions& o) {
  std::unique_ptr<cuview::Attachment> owned;
  if (o.remote.empty())
    owned = std::make_unique<cuview::Client>(cuview::Client::attach(o));
  else
    owned = std::make_unique<cuview::RemoteClient>(cuview::RemoteClient::attach(o));
  auto& client = *owned;
  return wrapped(client, std::move(owned), o.remote).release();
}

/// Fills `frame`'s pointer to each block of the client's slot layout (frames are waited for on
/// the host first: complete before anyone reads them).
void point_blocks(cuview_frame& frame, const cuview_client& client) {
  frame.frame->wait();
  const auto* base = static_cast<const std::byte*>(frame.frame->slot_data());
  // A frame fetched through a gateway holds its float32 grid fields only: the rest are NULL.
  const bool fetched = !client.remote.empty();
  for (const auto& b : client.blocks)
    frame.data.push_back(fetched && (b.set != nullptr || std::string_view(b.dtype) != "float32") ? nullptr
                                                                                                : base + b.offset);
}

cuview::AttachOptions attach_options(const char* name, const char* client_name, int timeout_ms,
                                     int control_only = 0) {
  cuview::AttachOptions o;
  o.name = name;
  o.import = control_only != 0 ? cuview::Import::control_only : cuview::Import::frames;
  o.client = client_name != nullptr ? client_name : "cuview C client";
  if (timeout_ms > 0) o.timeout = std::chrono::milliseconds(timeout_ms);
  return o;
}

cuview::OpenOptions open_options(const char* name, const char* client_name, int timeout_ms, int control_only,
                                 std::vector<std::string> remote) {
  const auto a = attach_options(name, client_name, timeout_ms, control_only);
  return cuview::OpenOptions{a.name, std::move(remote), a.client, a.import, a.timeout};
}

/// The client's remote half: views and regions come through a gateway only.
cuview::RemoteClient& remote_of(cuview_client& c, const char* call) {
  auto* remote = dynamic_cast<cuview::RemoteClient*>(c.client);
  if (remote == nullptr)
    throw cuview::Error(cuview::Errc::unsupported,
                        std::string(call) + " on a local attachment to '" + c.client->name() +
                            "': local clients receive frames (cuview_next_frame); views and regions come through a "
                            "gateway (cuview_attach_remote)");
  return *remote;
}

cuview::RemoteGroup& remote_run_of(cuview_group& g, const char* call) {
  auto* remote = dynamic_cast<cuview::RemoteGroup*>(&g.group);
  if (remote == nullptr)
    throw cuview::Error(cuview::Errc::unsupported,
                        std::string(call) + " on the local run '" + g.group.name() +
                            "': a local group gives frames (cuview_group_next); views come through gateways "
                            "(cuview_group_attach_remote)");
  return *remote;
}
}  // namespace

cuview_status cuview_attach(const char* name, const char* client_name, int control_only, int timeout_ms,
                            cuview_client** out) {
  if (name == nullptr || out == nullptr) return null_argument("cuview_attach");
  *out = nullptr;
  return guarded([&] {
    *out = attached(attach_options(name, client_name, timeout_ms, control_only));
  });
}

cuview_status cuview_attach_remote(const char* name, const char* client_name, const char* remote, int timeout_ms,
                                   cuview_client** out) {
  if (name == nullptr || remote == nullptr || out == nullptr) return null_argument("cuview_attach_remote");
  *out = nullptr;
  if (*remote == '\0') {
    g_error = "cuview_attach_remote: the gateway URL is empty; give ssh://host, tcp://host:port?key=KEY or "
              "unix:PATH, or attach locally with cuview_attach";
    return CUVIEW_BAD_VALUE;
  }
  return guarded([&] {
    auto o = attach_options(name, client_name, timeout_ms);
    o.remote = remote;
    *out = attached(o);
  });
}

void cuview_detach(cuview_client* client) {
  if (client != nullptr && client->owned) delete client;  // a group's part is freed with its group
}

const char* cuview_backend(const cuview_client* client) {
  return client != nullptr ? client->client->hello().backend.c_str() : "";
}
const char* cuview_sharing(const cuview_client* client) {
  const auto* local = client != nullptr ? dynamic_cast<const cuview::Client*>(client->client) : nullptr;
  return local != nullptr ? local->sharing().c_str() : "";
}
const char* cuview_describe_json(const cuview_client* client) {
  return client != nullptr ? client->describe_json.c_str() : "";
}
size_t cuview_block_count(const cuview_client* client) { return client != nullptr ? client->blocks.size() : 0; }

cuview_status cuview_block_info(const cuview_client* client, size_t index, cuview_block* out) {
  if (client == nullptr || out == nullptr) return null_argument("cuview_block_info");
  if (index >= client->blocks.size()) {
    g_error = "block " + std::to_string(index) + " does not exist: '" + client->client->name() + "' publishes " +
              std::to_string(client->blocks.size());
    return CUVIEW_OUT_OF_RANGE;
  }
  *out = client->blocks[index];
  return CUVIEW_OK;
}

long cuview_block_index(const cuview_client* client, const char* name) {
  if (client == nullptr || name == nullptr) return -1;
  for (std::size_t i = 0; i < client->names.size(); ++i)
    if (client->names[i] == name) return static_cast<long>(i);
  return -1;
}

cuview_status cuview_stats_json(cuview_client* client, const char** json) {
  if (client == nullptr || json == nullptr) return null_argument("cuview_stats_json");
  return guarded([&] {
    client->stats_json = json_text(client->client->stats());
    *json = client->stats_json.c_str();
  });
}

cuview_status cuview_next_frame(cuview_client* client, int timeout_ms, cuview_frame** out) {
  if (client == nullptr || out == nullptr) return null_argument("cuview_next_frame");
  *out = nullptr;
  bool none = false;
  const auto s = guarded([&] {
    auto f = client->client->next_frame(std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms));
    if (!f) {
      none = true;
      return;
    }
    auto frame = std::make_unique<cuview_frame>();
    frame->owned.emplace(std::move(*f));
    frame->frame = &*frame->owned;
    point_blocks(*frame, *client);
    *out = frame.release();
  });
  if (s == CUVIEW_OK && none) {
    g_error = "no new frame from '" + client->client->name() + "' within " + std::to_string(timeout_ms) + " ms";
    return CUVIEW_NO_FRAME;
  }
  return s;
}

void cuview_frame_release(cuview_frame* frame) {
  if (frame != nullptr && frame->owned) delete frame;  // a group frame's part goes with it
}
uint64_t cuview_frame_seq(const cuview_frame* frame) { return frame != nullptr ? frame->frame->info().seq : 0; }
uint64_t cuview_frame_step(const cuview_frame* frame) { return frame != nullptr ? frame->frame->info().step : 0; }
double cuview_frame_time(const cuview_frame* frame) { return frame != nullptr ? frame->frame->info().sim_time : 0; }

const void* cuview_frame_data(const cuview_frame* frame, size_t index) {
  return frame != nullptr && index < frame->data.size() ? frame->data[index] : nullptr;
}
int cuview_frame_device(const cuview_frame* frame) { return frame != nullptr ? frame->frame->device() : -1; }

cuview_status cuview_frame_wait_on(const cuview_frame* frame, void* stream) {
  if (frame == nullptr) return null_argument("cuview_frame_wait_on");
  return guarded([&] { frame->frame->wait_on(static_cast<CUstream_st*>(stream)); });  // a cudaStream_t
}

cuview_status cuview_frame_synchronize(const cuview_frame* frame) {
  if (frame == nullptr) return null_argument("cuview_frame_synchronize");
  return guarded([&] {
    frame->frame->synchronize_device();
  });
}

cuview_status cuview_frame_verify(const cuview_frame* frame) {
  if (frame == nullptr) return null_argument("cuview_frame_verify");
  return guarded([&] {
    if (auto problem = frame->frame->verify()) throw cuview::Error(cuview::Errc::bad_value, *problem);
  });
}

const char* cuview_remote(const cuview_client* client) { return client != nullptr ? client->remote.c_str() : ""; }

namespace {
/// The watch of cuview_watch and cuview_group_watch: the fw × fh grid fitted into the view, times
/// `zoom`, centred on (center_x, center_y) (NaN: the grid's centre).
cuview::ViewWatch fitted_watch(const char* call, const std::string& name, int fw, int fh, const char* field,
                               uint32_t view_w, uint32_t view_h, double zoom, double center_x, double center_y,
                               const char* encoding) {
  if (!(zoom > 0) || !std::isfinite(zoom))
    throw cuview::Error(cuview::Errc::out_of_range, std::string(call) + ": zoom " + std::to_string(zoom) +
                                                        " of a view of '" + name + "'; a zoom is finite and > 0");
  cuview::ViewWatch w;
  w.field = field;
  w.region = cuview::ViewRegion::fit(fw, fh, static_cast<int>(view_w), static_cast<int>(view_h), zoom,
                                     std::isnan(center_x) ? fw * 0.5 : center_x, std::isnan(center_y) ? fh * 0.5 : center_y);
  if (encoding != nullptr) w.encoding = encoding;
  return w;
}

/// The next view of `source` (a Client or a Group) into `view`, described in *out
/// (cuview_next_view, cuview_group_next_view); CUVIEW_NO_FRAME when none came.
extern "C++" template <class Source>
cuview_status next_view_of(Source& source, cuview::RemoteView& view, int timeout_ms, cuview_view* out) {
  bool none = false;
  const auto s = guarded([&] {
    if (!source.next_view(view, std::chrono::milliseconds(std::max(timeout_ms, 0)))) {
      none = true;
      return;
    }
    const auto& h = view.header;
    *out = cuview_view{h.seq,         h.step,     h.sim_time,    h.field.c_str(),      h.encoding.c_str(),
                       h.error_bound, h.lo,       h.hi,          h.view_w,             h.view_h,
                       h.center_x,    h.center_y, h.pixels_per_cell, view.view.values.data(), view.view.values.size()};
  });
  if (s == CUVIEW_OK && none) {
    g_error = "no new view of '" + source.name() + "' within " + std::to_string(timeout_ms) + " ms";
    return CUVIEW_NO_FRAME;
  }
  return s;
}
}  // namespace

cuview_status cuview_watch(cuview_client* client, const char* field, uint32_t view_w, uint32_t view_h, double zoom,
                           double center_x, double center_y, const char* encoding) {
  if (client == nullptr || field == nullptr) return null_argument("cuview_watch");
  return guarded([&] {
    const auto& d = client->client->description();
    remote_of(*client, "cuview_watch").watch(fitted_watch("cuview_watch", client->client->name(), static_cast<int>(d.width),
                                       static_cast<int>(d.height), field, view_w, view_h, zoom, center_x, center_y,
                                       encoding));
  });
}

cuview_status cuview_next_view(cuview_client* client, int timeout_ms, cuview_view* out) {
  if (client == nullptr || out == nullptr) return null_argument("cuview_next_view");
  cuview::RemoteClient* remote = nullptr;
  if (const auto s = guarded([&] { remote = &remote_of(*client, "cuview_next_view"); }); s != CUVIEW_OK) return s;
  return next_view_of(*remote, client->view, timeout_ms, out);
}

cuview_status cuview_fetch(cuview_client* client, const char* field, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
                           cuview_region* out) {
  if (client == nullptr || field == nullptr || out == nullptr) return null_argument("cuview_fetch");
  return guarded([&] {
    const auto& d = client->client->description();
    // To the edge: a rectangle starting outside the grid stays empty, which the gateway refuses by name.
    if (w == 0) w = x < d.width ? d.width - x : 0;
    if (h == 0) h = y < d.height ? d.height - y : 0;
    auto& r = client->region;
    r = remote_of(*client, "cuview_fetch").fetch(field, x, y, w, h);
    *out = cuview_region{r.seq, r.step, r.sim_time, r.x, r.y, r.w, r.h, r.components, r.values.data(), r.values.size()};
  });
}

cuview_status cuview_list_json(const char* remote, int timeout_ms, const char** json) {
  if (json == nullptr) return null_argument("cuview_list_json");
  static thread_local std::string listed;
  return guarded([&] {
    auto out = nlohmann::json::array();
    if (remote == nullptr || *remote == '\0') {
      for (const auto& name : cuview::list_running_instances()) out.push_back({{"name", name}});
    } else {
      const auto timeout = std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : 5000);
      auto host = cuview::RemoteHost::connect(remote, "cuview C client", timeout);
      for (const auto& p : host.publishers()) out.push_back(to_json(p));
    }
    listed = out.dump();
    *json = listed.c_str();
  });
}

#define CUVIEW_CONTROL(call, expr)                    \
  if (client == nullptr) return null_argument(#call); \
  return guarded([&] { expr; })

cuview_status cuview_pause(cuview_client* client) { CUVIEW_CONTROL(cuview_pause, client->client->pause()); }
cuview_status cuview_resume(cuview_client* client) { CUVIEW_CONTROL(cuview_resume, client->client->resume()); }
cuview_status cuview_step(cuview_client* client, uint64_t n) { CUVIEW_CONTROL(cuview_step, client->client->step(n)); }
cuview_status cuview_set(cuview_client* client, const char* param, double value) {
  if (param == nullptr) return null_argument("cuview_set");
  CUVIEW_CONTROL(cuview_set, client->client->set({{param, value}}));
}
cuview_status cuview_set_preset(cuview_client* client, const char* preset) {
  if (preset == nullptr) return null_argument("cuview_set_preset");
  CUVIEW_CONTROL(cuview_set_preset, client->client->set({}, std::string(preset)));
}
cuview_status cuview_reset(cuview_client* client) { CUVIEW_CONTROL(cuview_reset, client->client->reset()); }
cuview_status cuview_draw(cuview_client* client, const char* input, double x, double y, double radius, int value) {
  if (input == nullptr) return null_argument("cuview_draw");
  CUVIEW_CONTROL(cuview_draw, client->client->draw({std::string(input), x, y, radius, value}));
}
cuview_status cuview_checkpoint(cuview_client* client, const char* path, int64_t timeout_ms, uint64_t* step,
                                char* written, size_t written_size) {
  CUVIEW_CONTROL(cuview_checkpoint, {
    auto& c = *client->client;
    const auto s = c.wait_checkpoint(c.checkpoint(path != nullptr ? path : ""),
                                     std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0)));
    if (step != nullptr) *step = s.step;
    if (written != nullptr && written_size > 0) {
      const std::size_t n = std::min(written_size - 1, s.path.size());
      std::memcpy(written, s.path.data(), n);
      written[n] = '\0';
    }
  });
}
cuview_status cuview_shutdown(cuview_client* client) { CUVIEW_CONTROL(cuview_shutdown, client->client->shutdown()); }

// ---------------------------------------------------------------- groups (runs of parts)

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
  auto g = std::make_unique<cuview_group>(cuview_group{std::move(run), ref, {}, {}, {}, {}});
  {
    for (std::size_t k = 0; k < g->group.size(); ++k) {
      auto& part = g->group.part(k);
      g->parts.push_back(wrapped(part, nullptr, part.via()));
      const auto& p = g->group.part_desc(k);
      const auto& d = part.description();
      g->infos.push_back(cuview_part_info{p.index, p.count, p.offset_x, p.offset_y, d.width, d.height,
                                          p.global_width, p.global_height, p.rank, part.hello().daemon_pid,
                                          p.host.c_str(), d.device.c_str(), p.group.c_str()});
    }
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
    g.watch(fitted_watch("cuview_group_watch", g.name(), static_cast<int>(g.global_width()),
                         static_cast<int>(g.global_height()), field, view_w, view_h, zoom, center_x, center_y,
                         encoding));
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

namespace {
/// Whether part `k` of `size` exists; otherwise the thread's last error says so.
bool part_exists(std::size_t k, std::size_t size, const std::string& name, const char* call) {
  if (k < size) return true;
  g_error = std::string(call) + ": part " + std::to_string(k) + " of '" + name + "' does not exist: the group has " +
            std::to_string(size) + " part(s)";
  return false;
}
}  // namespace

cuview_status cuview_group_part_info(const cuview_group* group, size_t k, cuview_part_info* out) {
  if (group == nullptr || out == nullptr) return null_argument("cuview_group_part_info");
  if (!part_exists(k, group->infos.size(), group->group.name(), "cuview_group_part_info")) return CUVIEW_OUT_OF_RANGE;
  *out = group->infos[k];
  return CUVIEW_OK;
}

cuview_client* cuview_group_part(cuview_group* group, size_t k) {
  if (group == nullptr) {
    null_argument("cuview_group_part");
    return nullptr;
  }
  if (!part_exists(k, group->parts.size(), group->group.name(), "cuview_group_part")) return nullptr;
  return group->parts[k].get();
}
cuview_client* cuview_group_leader(cuview_group* group) { return cuview_group_part(group, 0); }

const char* cuview_group_gone_reason(cuview_group* group) {
  if (group == nullptr) return "";
  group->gone_reason = group->group.gone_reason().value_or("");
  return group->gone_reason.c_str();
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
    g_error = "no new step from every part of '" + group->group.name() + "' within " + std::to_string(timeout_ms) +
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

cuview_status cuview_group_frame_verify(const cuview_group_frame* frames) {
  if (frames == nullptr) return null_argument("cuview_group_frame_verify");
  return guarded([&] {
    if (auto problem = frames->frames.verify()) throw cuview::Error(cuview::Errc::bad_value, *problem);
  });
}

}  // extern "C"
