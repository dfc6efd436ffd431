// The C API (cuview/client.h) on the C++ client library: each handle owns a C++ object, each call
// catches what the C++ call throws and turns it into a status and a thread-local message.
#include "c_api/internal.hpp"
#include "cuview/schema.hpp"
#include "cuview/view_sampler.hpp"

using namespace cuview::capi;

std::string& cuview::capi::thread_error() {
  thread_local std::string error;
  return error;
}

extern "C" {

const char* cuview_status_name(cuview_status status) {
  if (status == CUVIEW_OK) return "ok";
  if (status == CUVIEW_NO_FRAME) return "no_frame";
  if (status < CUVIEW_BAD_MESSAGE || status > CUVIEW_UNSUPPORTED) return "unknown";
  static thread_local std::string name;
  name = std::string(cuview::to_string(static_cast<cuview::Errc>(status - 1)));
  return name.c_str();
}

cuview_status cuview_dtype(const char* name, cuview_dtype_info* out) {
  if (name == nullptr || out == nullptr) return null_argument("cuview_dtype");
  return guarded([&] {
    const auto t = cuview::parse_dtype(name);
    if (!t)
      throw cuview::Error(cuview::Errc::bad_value,
                          std::string("cuview_dtype: '") + name + "' is not a dtype; they are " + cuview::dtype_names());
    const auto& traits = cuview::dtype_traits(*t);
    *out = {traits.size, traits.typestr, traits.dlpack_code, static_cast<uint8_t>(8 * traits.size)};
  });
}

const char* cuview_last_error(void) { return thread_error().c_str(); }
const char* cuview_version(void) { return CUVIEW_VERSION; }


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
    thread_error() = "cuview_attach_remote: the gateway URL is empty; give ssh://host, tcp://host:port?key=KEY or "
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
    thread_error() = "block " + std::to_string(index) + " does not exist: '" + client->client->name() + "' publishes " +
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
    thread_error() = "no new frame from '" + client->client->name() + "' within " + std::to_string(timeout_ms) + " ms";
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
  return frame != nullptr && index < frame->data.size() && frame->frame->holds(index) ? frame->data[index] : nullptr;
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


cuview_status cuview_watch(cuview_client* client, const char* field, uint32_t view_w, uint32_t view_h, double zoom,
                           double center_x, double center_y, const char* encoding) {
  if (client == nullptr || field == nullptr) return null_argument("cuview_watch");
  return guarded([&] {
    const cuview::Extent grid{client->client->description().for_field(field).dims};
    remote_of(*client, "cuview_watch").watch(fitted_watch("cuview_watch", client->client->name(), static_cast<int>(grid.width()),
                                       static_cast<int>(grid.height()), field, view_w, view_h, zoom, center_x, center_y,
                                       encoding));
  });
}

cuview_status cuview_watch_plane(cuview_client* client, const char* field, const char* axis, uint32_t index,
                                 uint32_t view_w, uint32_t view_h, double zoom, double center_x, double center_y,
                                 const char* encoding) {
  if (client == nullptr || field == nullptr || axis == nullptr) return null_argument("cuview_watch_plane");
  return guarded([&] {
    const auto d = client->client->description().for_field(field);
    remote_of(*client, "cuview_watch_plane")
        .watch(plane_watch("cuview_watch_plane", client->client->name(), d.dims, field, axis, index, view_w, view_h,
                           zoom, center_x, center_y, encoding));
  });
}

cuview_status cuview_next_view(cuview_client* client, int timeout_ms, cuview_view* out) {
  if (client == nullptr || out == nullptr) return null_argument("cuview_next_view");
  cuview::RemoteClient* remote = nullptr;
  if (const auto s = guarded([&] { remote = &remote_of(*client, "cuview_next_view"); }); s != CUVIEW_OK) return s;
  return next_view_of(*remote, client->view, timeout_ms, out);
}

int cuview_view_cell(const cuview_view* view, uint32_t grid_w, uint32_t grid_h, uint32_t row, uint32_t col, uint32_t* x,
                     uint32_t* y) {
  if (view == nullptr || x == nullptr || y == nullptr) return 0;
  cuview::ViewRegion r;
  r.field_w = static_cast<int>(grid_w), r.field_h = static_cast<int>(grid_h);
  r.view_w = static_cast<int>(view->view_w), r.view_h = static_cast<int>(view->view_h);
  r.center_x = view->center_x, r.center_y = view->center_y, r.pixels_per_cell = view->pixels_per_cell;
  int cx = 0, cy = 0;
  if (!r.cell_at(static_cast<int>(col), static_cast<int>(row), cx, cy)) return 0;
  *x = static_cast<uint32_t>(cx), *y = static_cast<uint32_t>(cy);
  return 1;
}

cuview_status cuview_fetch(cuview_client* client, const char* field, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
                           cuview_region* out) {
  if (client == nullptr || field == nullptr || out == nullptr) return null_argument("cuview_fetch");
  return guarded([&] {
    const cuview::Extent grid{client->client->description().for_field(field).dims};
    // To the edge: a rectangle starting outside the grid stays empty, which the gateway refuses by name.
    if (w == 0) w = x < grid.width() ? grid.width() - x : 0;
    if (h == 0) h = y < grid.height() ? grid.height() - y : 0;
    auto& r = client->region;
    r = remote_of(*client, "cuview_fetch").fetch(field, cuview::Block::grid(x, y, w, h));
    *out = cuview_region{r.seq, r.step, r.sim_time, r.x, r.y, r.w, r.h, r.components, r.values.data(), r.values.size()};
  });
}

cuview_status cuview_fetch_box(cuview_client* client, const char* field, uint32_t x, uint32_t y, uint32_t z, uint32_t w,
                               uint32_t h, uint32_t d, cuview_region* out, uint32_t* out_z, uint32_t* out_d) {
  if (client == nullptr || field == nullptr || out == nullptr) return null_argument("cuview_fetch_box");
  return guarded([&] {
    const cuview::Extent grid{client->client->description().for_field(field).dims};
    if (w == 0) w = x < grid.width() ? grid.width() - x : 0;
    if (h == 0) h = y < grid.height() ? grid.height() - y : 0;
    if (d == 0) d = z < grid.depth() ? grid.depth() - z : 0;
    auto& r = client->region;
    r = remote_of(*client, "cuview_fetch_box").fetch(field, cuview::Block{{z, y, x}, {d, h, w}});
    *out = cuview_region{r.seq, r.step, r.sim_time, r.x, r.y, r.w, r.h, r.components, r.values.data(), r.values.size()};
    if (out_z) *out_z = r.z;
    if (out_d) *out_d = r.d;
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
cuview_status cuview_draw_ball(cuview_client* client, const char* input, double x, double y, double z, double radius,
                               int value) {
  if (input == nullptr) return null_argument("cuview_draw_ball");
  CUVIEW_CONTROL(cuview_draw_ball, client->client->draw({std::string(input), x, y, radius, value, z}));
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

}  // extern "C"
