// cuview_render_volume (cuview/client.h): the volume renderer through the C API, for Python's
// Frame.view_volume and other languages. Compiled into libcuview.so (gui/CMakeLists.txt).
#include <algorithm>
#include <cstring>
#include <string>

#include "c_api/internal.hpp"
#include "c_api/status.hpp"
#include "cuview/brick_sampler.hpp"
#include "cuview/client.h"
#include "render/volume_render.hpp"

using namespace cuview::capi;

namespace {
/// The colours of `colormap` (NULL or empty: viridis); Error(bad_value) naming `caller` and the
/// colormaps there are.
auto lut_named(const char* colormap, const char* caller) {
  const std::string name = colormap != nullptr && *colormap != '\0' ? colormap : "viridis";
  const auto map = cuview::gui::parse_colormap(name);
  if (!map)
    throw cuview::Error(cuview::Errc::bad_value, std::string(caller) + ": colormap '" + name +
                                                     "' is none of viridis, magma, grayscale, diverging");
  return cuview::gui::make_lut(*map);
}
}  // namespace

extern "C" cuview_status cuview_render_volume(const float* data, uint32_t width, uint32_t height, uint32_t depth,
                                              const char* mode, double azimuth, double elevation, double zoom,
                                              double pan_x, double pan_y, const char* colormap, float lo, float hi,
                                              const char* opacity, float level, uint32_t view_w, uint32_t view_h,
                                              uint32_t* argb, float* values) {
  if (data == nullptr || mode == nullptr || argb == nullptr) return null_argument("cuview_render_volume");
  return guarded([&] {
    using cuview::Errc;
    using cuview::Error;
    using namespace cuview::gui;
    const auto named = cuview::volume_mode_of(mode);
    if (!named)
      throw Error(Errc::bad_value, std::string("cuview_render_volume: mode '") + mode + "' is none of " +
                                       cuview::kVolumeModeNames);
    const VolumeMode vm = *named;
    if (width == 0 || height == 0 || depth == 0 || view_w == 0 || view_h == 0 || view_w > 16384 || view_h > 16384)
      throw Error(Errc::out_of_range, "cuview_render_volume: a brick of " + std::to_string(width) + "x" +
                                          std::to_string(height) + "x" + std::to_string(depth) + " into " +
                                          std::to_string(view_w) + "x" + std::to_string(view_h) +
                                          " pixels; give every size from 1 (a picture of at most 16384 a side)");
    const std::string op = opacity != nullptr && *opacity != '\0' ? opacity : "ramp";
    if (op != "auto" && op != "ramp" && op != "peak" && op != "flat")
      throw Error(Errc::bad_value,
                  "cuview_render_volume: opacity preset '" + op + "' is none of auto, ramp, peak, flat");
    VolumeStyle style;
    style.lut = lut_named(colormap, "cuview_render_volume");
    style.lo = lo;
    style.hi = hi;
    style.level = level;
    const int longest = static_cast<int>(std::max({width, height, depth}));
    if (op == "auto") {  // from the brick's values, as cuview-gui's default (opacity_by_rarity)
      const auto curve = opacity_by_rarity(data, std::size_t{width} * height * depth, lo, hi);
      for (std::size_t i = 0; i < 256; ++i) style.opacity[i] = curve[i] * full_opacity(longest);
    } else {
      style.opacity = opacity_preset(op.c_str(), longest);
    }
    const VolumeCamera camera{azimuth, elevation, zoom, pan_x, pan_y};
    const auto img = render_volume({data, static_cast<int>(width), static_cast<int>(height), static_cast<int>(depth)},
                                   camera, vm, style, static_cast<int>(view_w), static_cast<int>(view_h));
    std::memcpy(argb, img.argb.data(), img.argb.size() * sizeof(std::uint32_t));
    if (values != nullptr) std::memcpy(values, img.values.data(), img.values.size() * sizeof(float));
  });
}

extern "C" cuview_status cuview_frame_brick(const cuview_client* client, const cuview_frame* frame, size_t field,
                                            uint32_t max_cells, uint32_t dims[4], float* out) {
  if (client == nullptr || frame == nullptr || dims == nullptr) return null_argument("cuview_frame_brick");
  return guarded([&] {
    using cuview::Errc;
    using cuview::Error;
    if (!client->remote.empty() || frame->frame == nullptr)
      throw Error(Errc::unsupported, "cuview_frame_brick: a frame through a gateway holds its fields on the host "
                                     "already; read them there");
    const auto d = client->client->description().for_field(field);  // its grid: the field's own
    if (field >= d.fields.size())
      throw Error(Errc::out_of_range, "cuview_frame_brick: field " + std::to_string(field) + " does not exist: '" +
                                          client->client->name() + "' publishes " + std::to_string(d.fields.size()));
    const auto grid = d.dims;
    if (grid.size() != 3)
      throw Error(Errc::bad_value, "cuview_frame_brick: '" + d.fields[field].name +
                                       "' is not a volume (its grid has " + std::to_string(grid.size()) +
                                       " axes); view a plane of it instead");
    const std::array<std::uint32_t, 3> g{grid[0], grid[1], grid[2]};
    const int k = cuview::BrickSampler::stride_for(g, static_cast<int>(std::max<uint32_t>(max_cells, 1)));
    cuview::HostBrick brick;
    cuview::BrickSampler::begin(brick, g, k);
    dims[0] = static_cast<uint32_t>(brick.depth), dims[1] = static_cast<uint32_t>(brick.height);
    dims[2] = static_cast<uint32_t>(brick.width), dims[3] = static_cast<uint32_t>(k);
    if (out == nullptr) return;
    cuview::BrickSampler sampler;  // per call: its pinned rows freed before returning
    sampler.sample(*frame->frame, d.fields[field], cuview::own_block(d), brick);
    std::memcpy(out, brick.values.data(), brick.values.size() * sizeof(float));
  });
}

extern "C" cuview_status cuview_group_render(cuview_group* group, const char* field, const char* mode, double azimuth,
                                             double elevation, double zoom, double pan_x, double pan_y,
                                             const char* colormap, float lo, float hi, const char* opacity, float level,
                                             uint32_t view_w, uint32_t view_h, uint32_t* argb, float* values,
                                             cuview_picture_info* info) {
  if (group == nullptr || field == nullptr || mode == nullptr || argb == nullptr) return null_argument("cuview_group_render");
  cuview_status got = CUVIEW_OK;
  const auto status = guarded([&] {
    using cuview::Errc;
    using cuview::Error;
    using namespace cuview::gui;
    const std::string op = opacity != nullptr && *opacity != '\0' ? opacity : "ramp";
    if (op != "ramp" && op != "peak" && op != "flat")
      throw Error(Errc::bad_value, "cuview_group_render: opacity preset '" + op + "' is none of ramp, peak, flat" +
                                       (op == "auto" ? " (auto is made from the cells: cuview_render_volume has it)" : ""));
    // The opacity scaled to the field's whole grid, as cuview-gui's pictures are (full_opacity).
    const auto& d = group->group.leader().description();
    const auto f = std::find_if(d.fields.begin(), d.fields.end(), [&](const auto& x) { return x.name == field; });
    if (f == d.fields.end()) {
      std::string names;
      for (const auto& x : d.fields) names += (names.empty() ? "" : ", ") + x.name;
      throw Error(Errc::bad_value, "cuview_group_render: '" + group->group.name() + "' has no field '" + field +
                                       "'; its fields: " + names);
    }
    const auto grid = d.for_field(static_cast<std::size_t>(f - d.fields.begin())).run_dims();
    const auto longest = grid.empty() ? 1u : *std::max_element(grid.begin(), grid.end());
    cuview::proto::RenderArgs a;
    a.field = field, a.mode = mode, a.width = view_w, a.height = view_h;
    a.azimuth = azimuth, a.elevation = elevation, a.zoom = zoom, a.pan_x = pan_x, a.pan_y = pan_y;
    a.lo = lo, a.hi = hi, a.level = level, a.step = 1.0;  // one sample a cell, as cuview-gui asks
    const auto lut = lut_named(colormap, "cuview_group_render");
    a.lut.assign(lut.begin(), lut.end());
    const auto curve = opacity_preset(op.c_str(), static_cast<int>(longest));
    a.opacity.assign(curve.begin(), curve.end());
    const auto r = group->group.render(a);  // the publisher checks the rest, and names what is wrong
    if (r.pending) {
      got = CUVIEW_NO_FRAME;
      return;
    }
    const std::size_t n = std::size_t{view_w} * view_h;
    if (r.argb.size() != n * 4 || r.values.size() != n * 4)
      throw Error(Errc::bad_message, "cuview_group_render: the run answered with a picture of " +
                                         std::to_string(r.width) + "x" + std::to_string(r.height) + " pixels for one of " +
                                         std::to_string(view_w) + "x" + std::to_string(view_h));
    std::memcpy(argb, r.argb.data(), n * 4);
    if (values != nullptr) std::memcpy(values, r.values.data(), n * 4);
    if (info != nullptr) *info = {r.seq, r.step, r.sim_time, r.cast_ms, r.every};
  });
  return status != CUVIEW_OK ? status : got;
}
