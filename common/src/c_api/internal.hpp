// What the C API's two halves share (c_api.cpp: clients and frames; c_api_group.cpp: runs of parts):
// the handles behind the opaque C types, and turning what C++ throws into a status.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "status.hpp"
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
  std::vector<std::vector<uint64_t>> shapes;  // each block's shape, which blocks[i].shape points into
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
  std::vector<cuview::Block> blocks;                  // infos[k]'s offset and dims point into it
  cuview::Axes global_dims;                           // and their global_dims here
  std::string gone_reason;
  cuview::RemoteView view;  // the last cuview_group_next_view's, which points into it
};

struct cuview_group_frame {
  cuview::FrameGroup frames;
  std::vector<cuview_frame> parts;  // borrowing frames.part(k)
};

namespace cuview::capi {
using cuview::proto::to_json;
template <class T>
inline std::string json_text(const T& value) {
  return to_json(value).dump();
}

/// Block `f` of a description, its shape kept in `shape` (which must outlive the block).
inline cuview_block block_of(const cuview::proto::FieldDesc& f, const char* set, std::vector<uint64_t>& shape) {
  cuview_block b{};
  b.name = f.name.c_str();
  b.set = set;
  b.dtype = f.dtype.c_str();
  b.components = f.components;
  shape.assign(f.shape.begin(), f.shape.end());
  b.ndim = static_cast<uint32_t>(std::min(shape.size(), f.strides.size()));
  b.shape = shape.data();
  b.strides = f.strides.data();
  b.offset = f.offset;
  b.bytes = f.bytes;
  return b;
}

/// A handle on `client` (owned when `owned` holds it), its blocks listed from the description.
inline std::unique_ptr<cuview_client> wrapped(cuview::Attachment& client, std::unique_ptr<cuview::Attachment> owned,
                                       std::string remote) {
  auto c = std::make_unique<cuview_client>();
  c->owned = std::move(owned);
  c->client = &client;
  c->remote = std::move(remote);
  const auto& d = client.description();
  c->describe_json = json_text(d);
  std::size_t count = d.fields.size();
  for (const auto& p : d.particles) count += p.attributes.size();
  c->shapes.resize(count);  // never reallocated again: the blocks point into it
  for (const auto& f : d.fields)
    c->blocks.push_back(block_of(f, nullptr, c->shapes[c->blocks.size()])), c->names.push_back(f.name);
  for (const auto& p : d.particles)
    for (const auto& a : p.attributes)
      c->blocks.push_back(block_of(a, p.name.c_str(), c->shapes[c->blocks.size()])),
          c->names.push_back(p.name + "." + a.name);
  return c;
}

/// A new handle on the client `o` attaches.
inline cuview_client* attached(const cuview::AttachOptions& o) {
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
inline void point_blocks(cuview_frame& frame, const cuview_client& client) {
  frame.frame->wait();
  const auto* base = static_cast<const std::byte*>(frame.frame->slot_data());
  // A frame fetched through a gateway holds the grid fields it fetched (FrameInfo::fields: every
  // one, but a gateway from before float64 and int64 fetches float32 ones only) and no particle:
  // the rest are NULL.
  const bool fetched = !client.remote.empty();
  const std::uint64_t held = frame.frame->info().fields;
  for (std::size_t i = 0; i < client.blocks.size(); ++i) {
    const auto& b = client.blocks[i];
    const bool missing = fetched && (b.set != nullptr || (i < 64 && (held >> i & 1) == 0));
    frame.data.push_back(missing ? nullptr : base + b.offset);
  }
}

inline cuview::AttachOptions attach_options(const char* name, const char* client_name, int timeout_ms,
                                     int control_only = 0) {
  cuview::AttachOptions o;
  o.name = name;
  o.import = control_only != 0 ? cuview::Import::control_only : cuview::Import::frames;
  o.client = client_name != nullptr ? client_name : "cuview C client";
  if (timeout_ms > 0) o.timeout = std::chrono::milliseconds(timeout_ms);
  return o;
}

inline cuview::OpenOptions open_options(const char* name, const char* client_name, int timeout_ms, int control_only,
                                 std::vector<std::string> remote) {
  const auto a = attach_options(name, client_name, timeout_ms, control_only);
  return cuview::OpenOptions{a.name, std::move(remote), a.client, a.import, a.timeout};
}

/// The client's remote half: views and regions come through a gateway only.
inline cuview::RemoteClient& remote_of(cuview_client& c, const char* call) {
  auto* remote = dynamic_cast<cuview::RemoteClient*>(c.client);
  if (remote == nullptr)
    throw cuview::Error(cuview::Errc::unsupported,
                        std::string(call) + " on a local attachment to '" + c.client->name() +
                            "': local clients receive frames (cuview_next_frame); views and regions come through a "
                            "gateway (cuview_attach_remote)");
  return *remote;
}

inline cuview::RemoteGroup& remote_run_of(cuview_group& g, const char* call) {
  auto* remote = dynamic_cast<cuview::RemoteGroup*>(&g.group);
  if (remote == nullptr)
    throw cuview::Error(cuview::Errc::unsupported,
                        std::string(call) + " on the local run '" + g.group.name() +
                            "': a local group gives frames (cuview_group_next); views come through gateways "
                            "(cuview_group_attach_remote)");
  return *remote;
}

/// The watch of cuview_watch and cuview_group_watch: the fw × fh grid fitted into the view, times
/// `zoom`, centred on (center_x, center_y) (NaN: the grid's centre).
inline cuview::ViewWatch fitted_watch(const char* call, const std::string& name, int fw, int fh, const char* field,
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

/// The watch of cuview_watch_plane and cuview_group_watch_plane: plane (`axis`, `index`) of a
/// volume of `dims` (the whole run's), its cells fitted as fitted_watch fits a grid's; a 2-D grid's
/// own cells, for the gateway to refuse by name.
inline cuview::ViewWatch plane_watch(const char* call, const std::string& name, const std::vector<std::uint32_t>& dims,
                                     const char* field, const char* axis, uint32_t index, uint32_t view_w,
                                     uint32_t view_h, double zoom, double center_x, double center_y,
                                     const char* encoding) {
  const cuview::Slice slice{cuview::slice_axis_named(axis), index};
  // The region is in the plane's cells: rows and columns of the volume without the axis cut.
  const auto rows_cols = dims.size() == 3 ? cuview::plane_dims(dims, slice.axis) : dims;
  auto w = fitted_watch(call, name, static_cast<int>(rows_cols.at(rows_cols.size() - 1)),
                        static_cast<int>(rows_cols.size() >= 2 ? rows_cols[rows_cols.size() - 2] : 1), field, view_w,
                        view_h, zoom, center_x, center_y, encoding);
  w.slice = slice;
  return w;
}

/// The next view of `source` (a Client or a Group) into `view`, described in *out
/// (cuview_next_view, cuview_group_next_view); CUVIEW_NO_FRAME when none came.
template <class Source>
inline cuview_status next_view_of(Source& source, cuview::RemoteView& view, int timeout_ms, cuview_view* out) {
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
    thread_error() = "no new view of '" + source.name() + "' within " + std::to_string(timeout_ms) + " ms";
    return CUVIEW_NO_FRAME;
  }
  return s;
}
}  // namespace cuview::capi
