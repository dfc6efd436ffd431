// Publishing and steering, on the program's thread: publish() writes a frame into a free slot
// (never waiting for a reader), poll() and steps_allowed() hand over what clients asked for.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "cuview/plane_picture.hpp"
#include "cuview/publisher.hpp"
#include "cuview/volume_cast.hpp"
#include "publisher/publisher_log.hpp"
#include "publisher/publisher_state.hpp"

namespace cuview {

// ---------------------------------------------------------------- publishing

bool Publisher::State::publish(std::uint64_t at_step, double at_time, const FieldWriter* write,
                               cuda::StreamRef stream) {
  record(at_step, at_time);
  if (write == nullptr) {
    for (const auto& b : blocks)
      if (b.decl->data == nullptr)
        throw Error(Errc::bad_value, where(opts.name) + ": " + b.what +
                                         " was declared without data; " + opts.words.give_data);
  }
  take_costs();
  collect_pictures();
  // A picture a client asks for (`render`) is cast from a frame. A new view is cast at once from
  // the newest frame when that holds its field whole and the budget has room (a camera that moved
  // need not wait for the next frame); frames are made for the views at rest (a moving camera's
  // are all cast from the newest: Steering::kViewSettleNs).
  const auto asked = pictures_wanted();
  const auto cast_now = pictures_from_newest(asked, stream);
  // A frame asked for at once (publish_now: a reset, a change or the end of `step` while paused)
  // brings every view's picture of it, moving or not: the run moved, time did not stand still.
  const auto views = publish_now ? asked : views_needing_frames(asked, monotonic_ns(), newest_frame);
  // Nobody reads: the step is recorded (stats, rates) and nothing is copied. A reader that
  // arrives withdraws the ring's old frame and gets one from the next call, due or not.
  if (ring->readers() == 0 && views.empty()) {
    // Nobody watches: the newest frame grows old, and a view asked for later gets a frame of its
    // own rather than a picture of a step long past.
    if (asked.empty()) newest_frame.reset();
    return false;
  }
  look_for_arrivals();
  const std::int64_t now = monotonic_ns();
  const bool due = pacer.due(now, reader_came, publish_now);
  progress.limit.store(static_cast<std::uint8_t>(pacer.limit()));
  if (!due) return false;
  auto slot = ring->begin_write();
  if (slot && newest_frame && newest_frame->slot == *slot) newest_frame.reset();  // about to be rewritten
  if (!slot) {
    // Every slot is held by some reader: skip this frame, never wait. A frame that was due is
    // skipped once; the next is due a frame period later (an asked-for one is tried again).
    if (!publish_now && !reader_came) {
      ring->count_skipped();
      pacer.skipped(now);
      progress.limit.store(static_cast<std::uint8_t>(pacer.limit()));
    }
    return false;
  }
  publish_now = reader_came = false;
  pacer.started(now);
  progress.limit.store(static_cast<std::uint8_t>(pacer.limit()));
  const std::uint64_t seq = ring->last_seq() + 1;
  // Only what is read is copied: the union of the blocks the readers asked for; and only every
  // k-th cell when every reader takes that, and the writer can.
  // A picture is cast from every cell: a frame with one holds its field whole.
  const std::uint64_t held = frame_blocks(ring->readers(), ring->reads(), views);
  const std::uint32_t every =
      write != nullptr && opts.writes_every && !opts.part && declared.dims.size() == 3 && views.empty()
          ? ring->every() : 1;
  try {
    for (const auto& job : picture_jobs)  // a picture still reading this slot is let finish first
      if (job.gpu && job.slot == *slot) job.gpu->hold(stream);
    slots->before_write(*slot, stream);
    auto* base = static_cast<std::byte*>(slots->slot(*slot));
    frame_layout = layout;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const bool field = i < declared.fields.size();
      std::size_t bytes = blocks[i].bytes;
      if (field && every > 1) {  // the packed grid's, as its readers lay it out (proto::packed_field)
        const auto packed = proto::packed_field(description.fields[i], every);
        bytes = packed.shape[0] * packed.strides[0];
      }
      frame_layout.fields[i].bytes = align_up(bytes, 4);
      targets[i] = {base + layout.fields[i].offset, bytes, has_block(held, i), field ? every : 1u};
    }
    executor->begin_frame(base, frame_layout, stream, held);
    if (write != nullptr) {
      (*write)(targets);
    } else {
      for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (!targets[i].read) continue;
        if (const auto& sec = blocks[i].section)
          executor->copy_section(targets[i].data, blocks[i].decl->data, *sec, stream);
        else
          executor->copy(targets[i].data, blocks[i].decl->data, targets[i].bytes, stream);
      }
    }
    executor->seal(seq, at_step, stream);
    slots->written(*slot, stream);
  } catch (...) {
    ring->abort_write(*slot);
    throw;
  }
  const FrameInfo info{seq, *slot, at_step, at_time, realtime_ns(), held, every};
  ring->end_write(*slot, info);  // counted: stats' frames_published is the ring's newest seq
  server->notify(proto::kFrameTopic, proto::encode(proto::FrameNotice{session, seq, *slot, at_step, at_time, info.stamp_ns}));
  // Pictures of the frame: on CUDA queued on a low-priority stream of their own, collected by a
  // later publish() or poll(); on the host cast here, on every core (this thread writes the slot
  // again only at a later publish()). Their time joins the budget as a frame's does.
  newest_frame = info;
  const PictureJob::Frame at{seq, at_step, at_time, info.stamp_ns};
  if (executor->kind() == Executor::Kind::cuda) queue_pictures(views, *slot, at, stream);
  else
    for (const auto& v : views)
      if (std::find(cast_now.begin(), cast_now.end(), v.view) == cast_now.end()) cast_on_host(v, slots->slot(*slot), at);
  return true;
}

// ---------------------------------------------------------------- pictures (`render`)

namespace {
struct PictureInput {
  VolumeBrick brick;
  VolumeCamera camera;
  VolumeMode mode = VolumeMode::mip;
  VolumeStyle style;
};

PictureInput picture_input(const proto::RenderArgs& v, const proto::DescribeResult& d, std::size_t field,
                           const void* slot) {
  const auto& f = d.fields[field];
  const void* data = static_cast<const std::byte*>(slot) + f.offset;
  PictureInput in;
  in.brick = {static_cast<const float*>(data), static_cast<int>(f.shape[2]), static_cast<int>(f.shape[1]),
              static_cast<int>(f.shape[0])};
  const auto& grid = d.grid_of(f);
  if (grid.spacing.size() == 3) in.brick.cell = {grid.spacing[2], grid.spacing[1], grid.spacing[0]};
  in.camera = {v.azimuth, v.elevation, v.zoom, v.pan_x, v.pan_y};
  in.mode = volume_mode_of(v.mode).value_or(VolumeMode::mip);  // op_render refused another
  std::copy_n(v.lut.begin(), std::min<std::size_t>(v.lut.size(), 256), in.style.lut.begin());
  std::copy_n(v.opacity.begin(), std::min<std::size_t>(v.opacity.size(), 256), in.style.opacity.begin());
  in.style.lo = v.lo, in.style.hi = v.hi, in.style.level = v.level, in.style.step = v.step;
  if (d.part && d.part->global_dims.size() == 3 && d.part->offset.size() == 3) {  // a block of the whole grid
    const auto& g = d.part->global_dims;
    const auto& o = d.part->offset;
    in.brick.whole = {static_cast<int>(g[2]), static_cast<int>(g[1]), static_cast<int>(g[0])};
    in.brick.offset = {static_cast<int>(o[2]), static_cast<int>(o[1]), static_cast<int>(o[0])};
  }
  return in;
}

/// The cells a picture of mode "plane" shows (op_render checked the view): of the whole grid's
/// plane, fitted into the picture with the view's zoom and pan; of a part, its block's cells of
/// that plane (none when the plane misses the block).
PlaneCells plane_cells(const proto::RenderArgs& v, const proto::DescribeResult& d, std::size_t field, const void* slot) {
  const auto& f = d.fields[field];
  const auto dims = d.grid_of(f).dims;  // this publisher's cells (a part's block)
  std::vector<std::uint32_t> whole = dims, offset(dims.size(), 0);
  if (d.part && d.part->global_dims.size() == dims.size() && d.part->offset.size() == dims.size() && dims == d.dims)
    whole = d.part->global_dims, offset = d.part->offset;
  PlaneCells c;
  c.dtype = static_cast<int>(parse_dtype(f.dtype).value_or(DType::float32));
  c.components = static_cast<int>(f.components);
  proto::FieldDesc plane = f;
  std::vector<std::uint32_t> plane_whole = whole, plane_offset = offset;
  if (dims.size() == 3) {
    Slice slice{slice_axis_named(v.axis.value_or("z")), 0};
    const auto k = static_cast<std::size_t>(slice.axis);
    const std::uint32_t at = v.index.value_or(whole[k] / 2);
    plane_whole = plane_dims(whole, slice.axis), plane_offset = plane_dims(offset, slice.axis);
    if (at >= offset[k] && at < offset[k] + dims[k]) {
      slice.index = at - offset[k];
      plane = plane_of(f, slice);
    } else {
      plane.shape.clear();  // the plane misses this block
    }
  }
  const int cols = static_cast<int>(plane_whole[1]), rows = static_cast<int>(plane_whole[0]);
  c.region = ViewRegion::fit(cols, rows, static_cast<int>(v.width), static_cast<int>(v.height), v.zoom,
                             cols / 2.0 + v.pan_x, rows / 2.0 + v.pan_y);
  c.x0 = static_cast<int>(plane_offset[1]), c.y0 = static_cast<int>(plane_offset[0]);
  if (plane.shape.size() < 2) return c;
  c.rows = static_cast<int>(plane.shape[0]), c.cols = static_cast<int>(plane.shape[1]);
  const std::uint64_t cell = std::uint64_t{f.components} * size_of(parse_dtype(f.dtype).value_or(DType::float32));
  const bool strided = plane.strides.size() >= 2;
  c.row_bytes = static_cast<std::int64_t>(strided ? plane.strides[0] : plane.shape[1] * cell);
  c.col_bytes = static_cast<std::int64_t>(strided ? plane.strides[1] : cell);
  c.data = static_cast<const unsigned char*>(slot) + plane.offset;
  return c;
}

std::array<std::uint32_t, 256> lut_of(const proto::RenderArgs& v) {
  std::array<std::uint32_t, 256> lut{};
  std::copy_n(v.lut.begin(), std::min<std::size_t>(v.lut.size(), 256), lut.begin());
  return lut;
}
}  // namespace

std::vector<Steering::PictureAsk> views_needing_frames(const std::vector<Steering::PictureAsk>& views,
                                                       std::int64_t now_ns, const std::optional<FrameInfo>& newest) {
  std::vector<Steering::PictureAsk> out;
  for (const auto& v : views) {
    const bool at_rest = now_ns - v.since_ns >= Steering::kViewSettleNs;
    const bool newest_serves = newest && newest->every == 1 && has_block(newest->fields, v.field);
    if (at_rest || !newest_serves) out.push_back(v);
  }
  return out;
}

std::uint64_t frame_blocks(std::uint32_t readers, std::uint64_t reads, const std::vector<Steering::PictureAsk>& views) {
  std::uint64_t held = readers > 0 ? reads : 0;
  for (const auto& v : views) held |= std::uint64_t{1} << v.field;
  return held != 0 ? held : kAllBlocks;
}

std::vector<Steering::PictureAsk> Publisher::State::pictures_wanted() {
  std::lock_guard lock(steering.m);
  auto& s = steering;
  const auto now = monotonic_ns();
  std::erase_if(s.picture_asks, [&](const auto& a) { return now - a.second.asked_ns > Steering::kPictureIdleNs; });
  s.pictures_asked = !s.picture_asks.empty();
  // The views asked for, each once, newest first, at most kMaxPictureViews.
  std::vector<Steering::PictureAsk> views;
  for (const auto& [peer, ask] : s.picture_asks) {
    auto same = std::find_if(views.begin(), views.end(), [&](const auto& v) { return v.view == ask.view; });
    if (same == views.end()) {
      views.push_back(ask);
    } else {
      same->asked_ns = std::max(same->asked_ns, ask.asked_ns);
      same->since_ns = std::min(same->since_ns, ask.since_ns);
    }
  }
  std::sort(views.begin(), views.end(), [](const auto& a, const auto& b) { return a.asked_ns > b.asked_ns; });
  if (views.size() > kMaxPictureViews) views.resize(kMaxPictureViews);
  const auto wanted = [&](const proto::RenderArgs& v) {
    return std::any_of(views.begin(), views.end(), [&](const auto& w) { return w.view == v; });
  };
  std::erase_if(s.pictures, [&](const auto& p) { return !wanted(p.first); });
  std::erase_if(picture_jobs, [&](const PictureJob& j) { return !wanted(j.view) && !(j.gpu && j.gpu->busy()); });
  return views;
}

void Publisher::State::keep_picture(const proto::RenderArgs& view, const VolumePicture& p, const PictureJob::Frame& at,
                                    double seconds) {
  proto::RenderResult r;
  r.pending = false;
  r.seq = at.seq, r.step = at.step, r.sim_time = at.time, r.stamp_ns = at.stamp_ns;
  r.width = static_cast<std::uint32_t>(p.width), r.height = static_cast<std::uint32_t>(p.height);
  r.every = 1;
  r.cast_ms = seconds * 1e3;
  r.argb.resize(p.argb.size() * 4), r.values.resize(p.values.size() * 4);
  std::memcpy(r.argb.data(), p.argb.data(), r.argb.size());
  std::memcpy(r.values.data(), p.values.data(), r.values.size());
  std::lock_guard lock(steering.m);
  auto& s = steering;
  ++s.pictures_cast;
  s.picture_ms = r.cast_ms;
  auto it = std::find_if(s.pictures.begin(), s.pictures.end(), [&](const auto& x) { return x.first == view; });
  if (it == s.pictures.end()) it = s.pictures.insert(s.pictures.end(), {view, {}});
  auto& held = it->second;
  if (held.size() >= Steering::kPicturesKept) held.erase(held.begin());
  held.push_back(std::move(r));
}

void Publisher::State::cast_on_host(const Steering::PictureAsk& ask, const void* slot, const PictureJob::Frame& at) {
  const auto t0 = monotonic_ns();
  VolumePicture p;
  p.width = static_cast<int>(ask.view.width), p.height = static_cast<int>(ask.view.height);
  const std::size_t n = std::size_t{ask.view.width} * ask.view.height;
  p.argb.resize(n), p.values.resize(n);
  if (ask.view.mode == proto::kPlaneMode) {
    const auto lut = lut_of(ask.view);
    cast_plane(plane_cells(ask.view, description, ask.field, slot), lut.data(), ask.view.lo, ask.view.hi, p.width,
               p.height, p.argb.data(), p.values.data());
  } else {
    const auto in = picture_input(ask.view, description, ask.field, slot);
    cast_volume(in.brick, in.camera, in.mode, in.style, p.width, p.height, p.argb.data(), p.values.data(), 16);
  }
  const double seconds = static_cast<double>(monotonic_ns() - t0) * 1e-9;
  pacer.add_cost(seconds);
  progress.publish_seconds.store(pacer.cost_seconds(), std::memory_order_relaxed);
  keep_picture(ask.view, p, at, seconds);
}

void Publisher::State::queue_pictures(const std::vector<Steering::PictureAsk>& views, std::uint32_t slot,
                                      const PictureJob::Frame& at, cuda::StreamRef stream) {
  for (const auto& v : views) {
    auto job = std::find_if(picture_jobs.begin(), picture_jobs.end(), [&](const auto& j) { return j.view == v.view; });
    if (job == picture_jobs.end()) job = picture_jobs.insert(picture_jobs.end(), PictureJob{v.view, nullptr, 0, -1, 0, false, {}});
    try {
      if (!job->gpu) job->gpu = std::make_unique<AsyncPicture>(executor->device_id());
      if (job->gpu->busy()) continue;  // the one before is still being cast: a later frame's turn
      const void* at_slot = slots->slot(slot);
      const bool alone = job->alone_s < 0 || job->cast % kAloneEvery == 0;
      const int w = static_cast<int>(v.view.width), h = static_cast<int>(v.view.height);
      if (v.view.mode == proto::kPlaneMode) {
        const auto lut = lut_of(v.view);
        job->gpu->queue_plane(plane_cells(v.view, description, v.field, at_slot), lut.data(), v.view.lo, v.view.hi, w,
                              h, stream, alone);
      } else {
        const auto in = picture_input(v.view, description, v.field, at_slot);
        job->gpu->queue(in.brick, in.camera, in.mode, in.style, w, h, stream, alone);
      }
      job->queued_alone = alone;
      ++job->cast;
      job->slot = slot;
      job->frame = at;
    } catch (const Error& e) {
      // A picture that cannot be cast costs the run nothing more: its view is dropped, and the
      // client asking for it hears why.
      publisher_log().warn("'{}': a picture of field '{}' could not be cast: {}", opts.name, v.view.field, e.what());
      std::lock_guard lock(steering.m);
      std::erase_if(steering.picture_asks, [&](const auto& a) { return a.second.view == v.view; });
      steering.pictures_asked = !steering.picture_asks.empty();
      steering.picture_error = e.what();
    }
  }
}

std::vector<proto::RenderArgs> Publisher::State::pictures_from_newest(const std::vector<Steering::PictureAsk>& views,
                                                                     cuda::StreamRef stream) {
  std::vector<proto::RenderArgs> cast;
  if (!newest_frame || newest_frame->every != 1) return cast;
  // Within the budget's pace; else one view at once, paid for by the next frame (may_borrow). A
  // frame asked for at once (publish_now: a paused run's change, a view new to a paused run) casts
  // its new views at once too, as it is published budget aside: a paused run makes no later frame.
  const bool paced = publish_now || pacer.within_budget(monotonic_ns());
  if (!paced && !pacer.may_borrow()) return cast;
  const auto& f = *newest_frame;
  for (const auto& v : views) {
    if (!paced && !cast.empty()) break;
    if (!has_block(f.fields, v.field)) continue;
    {
      std::lock_guard lock(steering.m);
      const bool has = std::any_of(steering.pictures.begin(), steering.pictures.end(),
                                   [&](const auto& p) { return p.first == v.view && !p.second.empty(); });
      if (has) continue;  // not new: its next picture comes with the next frame
    }
    const bool in_flight = std::any_of(picture_jobs.begin(), picture_jobs.end(),
                                       [&](const auto& j) { return j.view == v.view && j.gpu && j.gpu->busy(); });
    if (in_flight) continue;
    const PictureJob::Frame at{f.seq, f.step, f.sim_time, f.stamp_ns};
    if (executor->kind() == Executor::Kind::cuda) queue_pictures({v}, f.slot, at, stream);
    else cast_on_host(v, slots->slot(f.slot), at);
    cast.push_back(v.view);
    if (!paced) pacer.borrowed();
  }
  return cast;
}

void Publisher::State::collect_pictures() {
  for (auto& job : picture_jobs) {
    if (!job.gpu || !job.gpu->busy()) continue;
    VolumePicture p;
    const auto seconds = job.gpu->collect(p);
    if (!seconds) continue;
    if (job.queued_alone) job.alone_s = *seconds;
    const double cost = job.queued_alone || job.alone_s < 0 ? *seconds : std::min(*seconds, job.alone_s);
    pacer.add_cost(cost);
    progress.publish_seconds.store(pacer.cost_seconds(), std::memory_order_relaxed);
    keep_picture(job.view, p, job.frame, cost);
  }
}

void Publisher::State::take_costs() {
  const auto costs = executor->frame_costs();
  if (costs.empty()) return;
  for (const double c : costs) pacer.measured(std::isnan(c) ? pacer.frame_cost() : c);
  progress.publish_seconds.store(pacer.cost_seconds(), std::memory_order_relaxed);
}

void Publisher::State::look_for_arrivals() {
  if (const auto a = ring->arrivals(); a != arrivals_seen) {
    arrivals_seen = a;
    reader_came = true;
  }
  // A reader that asked for a field the newest frame lacks gets it at once too (the frame
  // period aside).
  if (const auto r = ring->reads_changed(); r != reads_seen) {
    reads_seen = r;
    if (ring->reads_beyond_newest()) reader_came = true;
  }
}

void Publisher::State::record(std::uint64_t at_step, double at_time) {
  if (closed) throw Error(Errc::bad_value, where(opts.name) + " is closed; make a new Publisher");
  progress.stamp(at_step, monotonic_ns());  // and a restart, where the step went back
  progress.sim_time.store(at_time, std::memory_order_relaxed);
  start();  // after the step: the first client to attach sees it, never the step before
}

void Publisher::record_step(std::uint64_t step, double sim_time) { state_->record(step, sim_time); }

bool Publisher::publish(std::uint64_t step, double sim_time, cuda::StreamRef stream) {
  return state_->publish(step, sim_time, nullptr, stream);
}
bool Publisher::publish(std::uint64_t step, double sim_time, const FieldWriter& write, cuda::StreamRef stream) {
  return state_->publish(step, sim_time, &write, stream);
}
void Publisher::publish_next_now() { state_->publish_now = true; }

// ---------------------------------------------------------------- steering, on the program's thread

Requests Publisher::poll() {
  auto& s = *state_;
  Requests r;
  if (!s.started) return r;
  s.collect_pictures();
  std::lock_guard lock(s.steering.m);
  s.steering.requests_seen = s.steering.requests;
  if (s.steering.params_changed) {
    r.params = s.steering.params->values();
    s.in_effect = r.params;
    s.steering.params_changed = false;
  }
  r.reset = std::exchange(s.steering.reset, false);
  r.strokes = std::exchange(s.steering.strokes, {});
  r.checkpoints = std::exchange(s.steering.checkpoints, {});
  r.reader_arrived = std::exchange(s.steering.reader_arrived, false);
  s.steering.polled_steps += std::exchange(s.steering.pending_steps, 0);
  if (r.reset || (r.changes_frame() && s.steering.paused)) s.publish_now = true;
  r.shutdown = s.steering.shutdown;
  return r;
}

std::map<std::string, double> Publisher::params() const {
  auto& s = *state_;
  if (!s.started) return ParameterSet(s.declared.params, s.declared.presets).values();
  return s.in_effect;
}

std::uint64_t Publisher::steps_allowed(std::uint64_t wanted) {
  auto& s = *state_;
  if (!s.started) return wanted;
  std::lock_guard lock(s.steering.m);
  if (!s.steering.paused) return wanted;
  const std::uint64_t n = std::min(wanted, s.steering.polled_steps);
  s.steering.polled_steps -= n;
  if (n > 0 && s.steering.polled_steps == 0) s.publish_now = true;  // show where a `step` request ended
  return n;
}

bool Publisher::paused() const {
  auto& s = *state_;
  if (!s.started) return false;
  std::lock_guard lock(s.steering.m);
  return s.steering.paused;
}

void Publisher::wait_for_requests(std::chrono::milliseconds timeout) {
  auto& s = *state_;
  if (!s.started) {
    std::this_thread::sleep_for(timeout);
    return;
  }
  std::unique_lock lock(s.steering.m);
  s.steering.changed.wait_for(lock, timeout, [&] { return s.steering.requests != s.steering.requests_seen; });
}

bool Publisher::frame_wanted() const {
  const auto& s = *state_;
  if (!s.started || s.closed || (s.ring->readers() == 0 && !s.steering.pictures_asked)) return false;
  return s.publish_now || s.reader_came || s.ring->arrivals() != s.arrivals_seen ||
         (s.ring->reads_changed() != s.reads_seen && s.ring->reads_beyond_newest()) ||
         s.pacer.period_elapsed(monotonic_ns());
}

bool Publisher::within_budget() {
  auto& s = *state_;
  if (!s.started || s.closed) return true;
  s.take_costs();
  return s.publish_now || s.pacer.within_budget(monotonic_ns());
}

void Publisher::follow(const Requests& leader, bool paused) {
  auto& s = *state_;
  if (!s.started) return;
  std::lock_guard lock(s.steering.m);
  if (!leader.params.empty()) {
    s.steering.params->assign(leader.params);
    s.in_effect = leader.params;
  }
  s.steering.paused = paused;
}

void Publisher::set_writes_every(bool can) { state_->opts.writes_every = can; }

std::string Publisher::backend() const { return state_->executor->name(); }
std::string Publisher::device() const { return state_->executor->device(); }
const std::string& Publisher::name() const { return state_->opts.name; }
Executor& Publisher::executor() const { return *state_->executor; }

}  // namespace cuview
