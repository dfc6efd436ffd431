// Publishing and steering, on the program's thread: publish() writes a frame into a free slot
// (never waiting for a reader), poll() and steps_allowed() hand over what clients asked for.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "cuview/publisher.hpp"
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
  // A picture a client asks for (`render`) is cast from a frame: frames are made for it too.
  const auto picture = picture_wanted();
  // Nobody reads: the step is recorded (stats, rates) and nothing is copied. A reader that
  // arrives withdraws the ring's old frame and gets one from the next call, due or not.
  if (ring->readers() == 0 && !picture) return false;
  look_for_arrivals();
  const std::int64_t now = monotonic_ns();
  const bool due = pacer.due(now, reader_came, publish_now);
  progress.limit.store(static_cast<std::uint8_t>(pacer.limit()));
  if (!due) return false;
  auto slot = ring->begin_write();
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
  std::uint64_t held = ring->reads();
  if (picture && picture->second < 64) held |= std::uint64_t{1} << picture->second;
  const std::uint32_t every = write != nullptr && opts.writes_every && !opts.part && declared.dims.size() == 3
                                  ? ring->every() : 1;
  try {
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
    if (picture) {  // from the cells this frame holds (every k-th in a packed frame), counted in its cost
      const auto i = picture->second;
      const auto f = every > 1 ? proto::packed_field(description.fields[i], every) : description.fields[i];
      cast_picture(picture->first, i, targets[i].data, Axes(f.shape.begin(), f.shape.begin() + 3), every, seq,
                   at_step, at_time, stream);
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
  return true;
}

std::optional<std::pair<proto::RenderArgs, std::size_t>> Publisher::State::picture_wanted() {
  std::lock_guard lock(steering.m);
  auto& s = steering;
  if (s.picture_view && monotonic_ns() - s.picture_asked_ns > std::int64_t{5'000'000'000}) {
    s.picture_view.reset();  // nobody asked for 5 s: stop casting
    s.picture_of.reset();
  }
  if (!s.picture_view) return std::nullopt;
  return std::pair{*s.picture_view, s.picture_field};
}

void Publisher::State::cast_picture(const proto::RenderArgs& v, std::size_t field, const void* data,
                                    const Axes& dims, std::uint32_t every, std::uint64_t seq, std::uint64_t at_step,
                                    double at_time, cuda::StreamRef stream) {
  const auto t0 = monotonic_ns();
  VolumeBrick brick{static_cast<const float*>(data), static_cast<int>(dims[2]), static_cast<int>(dims[1]),
                    static_cast<int>(dims[0])};
  const auto grid = description.grid_of(description.fields[field]);
  if (grid.spacing.size() == 3) brick.cell = {grid.spacing[2], grid.spacing[1], grid.spacing[0]};
  const VolumeCamera camera{v.azimuth, v.elevation, v.zoom, v.pan_x, v.pan_y};
  const VolumeMode mode = v.mode == "emission" ? VolumeMode::emission
                          : v.mode == "isosurface" ? VolumeMode::isosurface
                                                   : VolumeMode::mip;
  VolumeStyle style;
  std::copy_n(v.lut.begin(), std::min<std::size_t>(v.lut.size(), 256), style.lut.begin());
  std::copy_n(v.opacity.begin(), std::min<std::size_t>(v.opacity.size(), 256), style.opacity.begin());
  style.lo = v.lo, style.hi = v.hi, style.level = v.level, style.step = v.step;
  VolumePicture p;
  if (executor->kind() == Executor::Kind::cuda) {
    if (!caster) caster = std::make_unique<VolumeCaster>();
    caster->cast(brick, camera, mode, style, static_cast<int>(v.width), static_cast<int>(v.height), stream, p);
  } else {  // the host backend: the frame is in host memory; every core casts rows
    p.width = static_cast<int>(v.width), p.height = static_cast<int>(v.height);
    const std::size_t n = std::size_t{v.width} * v.height;
    p.argb.resize(n), p.values.resize(n);
    VolumeTables tables;
    const VolumeRays rays = volume_rays(brick, camera, mode, style, p.width, p.height, tables);
    const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
      pool.emplace_back([&, k] {
        for (int y = k; y < p.height; y += threads)
          for (int x = 0; x < p.width; ++x) {
            const std::size_t at = static_cast<std::size_t>(y) * p.width + x;
            cast_ray(rays, x, y, p.argb[at], p.values[at]);
          }
      });
    for (auto& t : pool) t.join();
  }
  proto::RenderResult r;
  r.pending = false;
  r.seq = seq, r.step = at_step, r.sim_time = at_time;
  r.width = v.width, r.height = v.height, r.every = every;
  r.cast_ms = static_cast<double>(monotonic_ns() - t0) * 1e-6;
  r.argb.resize(p.argb.size() * 4), r.values.resize(p.values.size() * 4);
  std::memcpy(r.argb.data(), p.argb.data(), r.argb.size());
  std::memcpy(r.values.data(), p.values.data(), r.values.size());
  std::lock_guard lock(steering.m);
  steering.picture = std::move(r);
  steering.picture_of = v;
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
  // The restart is counted before the smaller step is stored (both seq_cst): a rate window that
  // sees the smaller step also sees the restart.
  if (at_step < progress.step.load()) progress.restarts.fetch_add(1);
  progress.step.store(at_step);
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
  if (!s.started || s.closed || s.ring->readers() == 0) return false;
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
