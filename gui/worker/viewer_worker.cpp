#include "worker/viewer_worker.hpp"

#include <QMutexLocker>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <utility>

#include "cuview/error.hpp"
#include "cuview/remote/value_codec.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview::gui {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

ViewerWorker::ViewerWorker(QObject* parent) : QThread(parent) {
  qRegisterMetaType<RenderedFrame>();
  qRegisterMetaType<Connection>();
  qRegisterMetaType<proto::DescribeResult>();
  qRegisterMetaType<proto::Stats>();
}

ViewerWorker::~ViewerWorker() {
  {
    QMutexLocker lock(&mu_);
    stop_ = true;
    wake_.wakeAll();
  }
  wait();
}

void ViewerWorker::set_target(const QString& name, const QString& remote) {
  QMutexLocker lock(&mu_);
  target_ = name;
  remote_ = remote;
  wake_.wakeAll();
}

void ViewerWorker::set_view(const ViewRequest& v) {
  QMutexLocker lock(&mu_);
  view_ = v;
  ++view_serial_;
  view_changed_ = true;
  wake_.wakeAll();
}

void ViewerWorker::frame_shown() {
  QMutexLocker lock(&mu_);
  shown_ = true;
  wake_.wakeAll();
}

void ViewerWorker::post(Command command) {
  QMutexLocker lock(&mu_);
  commands_.post(std::move(command));
  wake_.wakeAll();
}

void ViewerWorker::set_state(Connection s, const QString& text) {
  if (s == state_ && text == state_text_) return;
  state_ = s;
  state_text_ = text;
  Q_EMIT connection_changed(s, text);
}

void ViewerWorker::try_attach(const QString& name, const QString& remote) {
  AttachOptions o;
  o.name = name.toStdString();
  o.remote = remote.toStdString();
  o.client = "cuview-gui";
  o.timeout = 1500ms;
  // Waiting after a disconnect keeps its short text; waiting from the start keeps the long one.
  const bool was_attached =
      state_ == Connection::connected || (state_ == Connection::waiting && state_text_.startsWith("disconnected"));
  if (state_ != Connection::waiting) set_state(Connection::connecting, "connecting to " + name + "…");
  try {
    // One picture of the whole grid: every part's frames locally; through gateways (one per host,
    // separated by spaces) views of every part, assembled.
    OpenOptions o{name.toStdString(), {}, "cuview-gui", Import::frames, 1500ms};
    for (const auto& url : remote.split(' ', Qt::SkipEmptyParts)) o.remote.push_back(url.toStdString());
    if (o.remote.empty()) {
      // On this host the frames need this process's CUDA context, which starts behind the
      // simulation's kernels (230–470 ms measured on a busy H100): meanwhile the publisher's own
      // picture of the plane shown comes over the control connection.
      auto opening = std::async(std::launch::async, [o] { return open(o); });
      show_first_picture(o, opening);
      run_ = opening.get();
    } else {
      run_ = open(o);
    }
    watched_.reset();
    held_view_.reset();
    held_brick_.reset();
    client_remote_ = remote;
    last_seq_ = 0;
    renderer_.forget_session();
    volume_.forget();
    volume_pending_ = false;
    run_pictures_ = {};
    next_group_.reset();
    group_description_ = run_->leader().description();
    group_description_.dims = run_->extent().dims;  // the whole run's grid, not part 0's block
    part_descriptions_.clear();
    QStringList where;
    for (std::size_t k = 0; k < run_->size(); ++k) {
      const auto& d = run_->part(k).description();
      part_descriptions_.push_back(&d);
      where << QString("rank %1 on %2, %3")
                   .arg(run_->part_desc(k).rank)
                   .arg(QString::fromStdString(run_->part_desc(k).host), QString::fromStdString(d.device));
    }
    Q_EMIT described(group_description_);
    const QString through = remote.isEmpty() ? QString() : ", through " + remote.split(' ', Qt::SkipEmptyParts).join(", ");
    if (!run_->decomposed())
      set_state(Connection::connected, QString("connected to %1 (%2 on %3%4)")
                                           .arg(name, QString::fromStdString(group_description_.backend),
                                                QString::fromStdString(group_description_.device), through));
    else
      set_state(Connection::connected, QString("connected to %1: %2 parts (%3)%4")
                                           .arg(name)
                                           .arg(run_->size())
                                           .arg(where.join("; "), through));
  } catch (const Error& e) {
    run_.reset();
    // A daemon that is not (yet, or no longer) there is waited for; anything else is shown.
    if (e.code() == Errc::no_daemon || e.code() == Errc::daemon_gone || e.code() == Errc::timeout) {
      // After a disconnect the short form says it all; before the first connection, say why and
      // what to do ("no cuview-compute daemon named 'x' is running ...; start one with ...").
      set_state(Connection::waiting, was_attached ? "disconnected — waiting for " + name
                                                  : QString("waiting for %1: %2").arg(name, e.what()));
    } else {
      set_state(Connection::failed, QString("cannot attach to %1: %2").arg(name, e.what()));
    }
  }
}

void ViewerWorker::show_first_picture(const OpenOptions& options, std::future<std::unique_ptr<Run>>& opening) {
  const auto t0 = Clock::now();
  const auto opened = [&] { return opening.wait_for(0ms) == std::future_status::ready; };
  {
    QMutexLocker lock(&mu_);
    if (view_.volume) return;  // a volume seen whole: its first picture is its brick (no plane to show)
  }
  try {
    auto o = options;
    o.import = Import::control_only;
    const auto control = open(o);
    if (opened()) return;
    auto d = control->leader().description();
    d.dims = control->extent().dims;
    std::uint64_t serial = 0;
    {
      QMutexLocker lock(&mu_);
      serial = view_serial_;
    }
    Q_EMIT described(d);  // the window lays its view out for this run (again, the same, once attached)
    while (!opened() && Clock::now() - t0 < 2s) {
      ViewRequest view;
      bool laid_out = false;
      {
        QMutexLocker lock(&mu_);
        if (stop_ || target_ != QString::fromStdString(options.name)) return;
        view = view_;
        laid_out = view_serial_ != serial;  // the window's view for this description, not one from before it
      }
      if (!laid_out) {
        opening.wait_for(5ms);
        continue;
      }
      const auto shown = d.for_field(static_cast<std::size_t>(std::max(view.field, 0)));
      const auto layout = layout_of(shown, view);
      // A plane or a 2-D grid, laid out in the window: the publisher shows one plane of a field.
      const bool plane = view.field >= 0 && static_cast<std::size_t>(view.field) < d.fields.size() && !view.volume &&
                         !layout.through && view.width > 0 && view.height > 0 && layout.w > 0 && layout.h > 0;
      if (!plane) {
        opening.wait_for(5ms);  // the window has not asked for a view of a field yet
        continue;
      }
      proto::RenderArgs a;
      a.field = d.fields[static_cast<std::size_t>(view.field)].name;
      a.mode = proto::kPlaneMode;
      a.width = static_cast<std::uint32_t>(std::min(view.width, 4096));
      a.height = static_cast<std::uint32_t>(std::min(view.height, 4096));
      a.zoom = view.zoom;
      const double cx = view.center_x < 0 ? layout.w / 2.0 : view.center_x;
      const double cy = view.center_y < 0 ? layout.h / 2.0 : view.center_y;
      a.pan_x = cx - layout.w / 2.0, a.pan_y = cy - layout.h / 2.0;
      if (const auto slice = slice_of(shown, view)) a.axis = to_string(slice->axis), a.index = slice->index;
      a.lut.assign(256, 0xff000000u);  // its values are coloured here, as every frame's
      a.lo = 0, a.hi = 1;
      const auto r = control->render(a);
      if (r.pending) {
        opening.wait_for(5ms);
        continue;
      }
      RemoteView picture;
      auto& h = picture.header;
      h.session = d.session, h.seq = r.seq, h.step = r.step, h.sim_time = r.sim_time, h.stamp_ns = r.stamp_ns;
      h.field = a.field, h.view_w = a.width, h.view_h = a.height, h.encoding = "f32";
      picture.view.region = ViewRegion::fit(layout.w, layout.h, static_cast<int>(a.width), static_cast<int>(a.height),
                                            a.zoom, cx, cy);
      h.center_x = cx, h.center_y = cy, h.pixels_per_cell = picture.view.region.pixels_per_cell;
      picture.view.values.resize(std::size_t{a.width} * a.height);
      std::memcpy(picture.view.values.data(), r.values.data(),
                  std::min(r.values.size(), picture.view.values.size() * sizeof(float)));
      auto result = renderer_.render(std::move(picture), shown, view);
      if (result.frame) result.frame->link.reset();  // read on this host, not through a gateway
      {
        QMutexLocker lock(&mu_);
        shown_ = false;
      }
      qInfo("cuview-gui: first picture from %s after %.1f ms (the publisher's plane of '%s', step %llu, over the "
            "control connection while the frames' CUDA context starts)",
            options.name.c_str(), std::chrono::duration<double, std::milli>(Clock::now() - t0).count(),
            a.field.c_str(), static_cast<unsigned long long>(r.step));
      set_state(Connection::connecting, {});  // still connecting (the status bar says so), nothing across the picture
      hand_over(std::move(result), r.seq);
      return;
    }
  } catch (const Error&) {
    // The frames' own attach says what is wrong (no daemon, a version, a refused field).
  }
}

cuview::Attachment* ViewerWorker::leader() { return run_ ? &run_->leader() : nullptr; }

void ViewerWorker::drop_client() {
  next_group_.reset();
  current_group_.reset();  // release the held slots before detaching
  run_.reset();
  reading_.reset();
  every_ = 0;
  said_phases_ = false;
  watched_.reset();  // a re-attached client watches afresh (the held view stays until a new one comes)
}

void ViewerWorker::run_commands(std::deque<Command> commands) {
  for (auto& command : commands) {
    if (leader() == nullptr) {
      Q_EMIT error(command.what + ": not attached to a daemon");
      continue;
    }
    try {
      command.run(*leader());  // a run of parts is steered through part 0
    } catch (const Error& e) {
      Q_EMIT error(command.what + ": " + e.what());
    }
  }
}

void ViewerWorker::render_remote(const ViewRequest& view, bool view_changed) {
  // Of the global grid; a field's view works in the grid that field lies on.
  const auto d = group_description_.for_field(static_cast<std::size_t>(view.field));
  if (view.width <= 0 || view.height <= 0 || view.field < 0 || static_cast<std::size_t>(view.field) >= d.fields.size()) {
    // Nothing a gateway can send (a particle view, a window not laid out yet): say why, wait.
    if (auto refused = renderer_.render(RemoteView{}, d, view); !refused.refusal.isEmpty()) Q_EMIT error(refused.refusal);
    QMutexLocker lock(&mu_);
    if (!stop_ && !view_changed_ && commands_.empty()) wake_.wait(&mu_, 100);
    return;
  }
  ViewWatch w;
  w.field = d.fields[static_cast<std::size_t>(view.field)].name;
  if (view.volume && d.dims.size() == 3) return render_remote_volume(view, view_changed, std::move(w));
  // A volume is watched a plane (or three side by side) at a time: the region is in the picture's cells.
  const auto layout = layout_of(d, view);
  const int cols = layout.w, rows = layout.h;
  if (layout.through)
    w.through = layout.through;
  else
    w.slice = slice_of(d, view);
  const double cx = view.center_x < 0 ? cols / 2.0 : view.center_x;
  const double cy = view.center_y < 0 ? rows / 2.0 : view.center_y;
  w.region = ViewRegion::fit(cols, rows, view.width, view.height, view.zoom, cx, cy);
  const auto same = [](const ViewWatch& a, const ViewWatch& b) {
    const auto &r = a.region, &q = b.region;
    return a.field == b.field && a.slice == b.slice && a.through == b.through && a.brick == b.brick && r.view_w == q.view_w && r.view_h == q.view_h &&
           r.center_x == q.center_x && r.center_y == q.center_y && r.pixels_per_cell == q.pixels_per_cell;
  };
  auto& remote = dynamic_cast<RemoteGroup&>(*run_);
  if (!watched_ || !same(*watched_, w)) {
    remote.watch(w);
    watched_ = w;
  }
  // A view of an earlier watch, still on its way, is dropped: it is of another picture.
  const bool arrived = remote.next_view(incoming_, 20ms) && shows_watch(incoming_.header, w);
  if (arrived) {
    if (!held_view_) held_view_.emplace();
    std::swap(*held_view_, incoming_);  // incoming_ keeps buffers for the next view
  }
  // A colour change re-colours the held view; a new region or picture waits for the gateway's view of it.
  const bool fits = held_view_ && shows_watch(held_view_->header, w);
  if (!held_view_ || !(arrived || (view_changed && fits))) return;
  {
    QMutexLocker lock(&mu_);
    shown_ = false;
  }
  hand_over(renderer_.render(RemoteView(*held_view_), d, view), held_view_->header.seq);
}

void ViewerWorker::render_remote_volume(const ViewRequest& view, bool view_changed, ViewWatch w) {
  // The gateway sends the volume itself, every k-th cell with k fitted to the link; the rays are
  // cast here, so a camera change is drawn at once from the brick held.
  const auto d = group_description_.for_field(static_cast<std::size_t>(view.field));
  w.brick = static_cast<std::uint32_t>(view.volume->max_brick);
  auto& remote = dynamic_cast<RemoteGroup&>(*run_);
  if (!watched_ || watched_->field != w.field || watched_->brick != w.brick) {
    remote.watch(w);
    watched_ = w;
  }
  const bool arrived = remote.next_view(incoming_, 20ms) && shows_watch(incoming_.header, w);
  if (arrived) {
    const auto& h = incoming_.header;
    const auto& b = *h.brick;  // {depth, height, width, stride}
    auto brick = std::make_shared<HostBrick>();
    brick->depth = static_cast<int>(b[0]), brick->height = static_cast<int>(b[1]), brick->width = static_cast<int>(b[2]);
    brick->stride = static_cast<int>(b[3]);
    const auto g = d.dims;
    brick->grid = {g[0], g[1], g[2]};
    brick->values = incoming_.view.values;
    BrickSampler::finish(*brick);
    held_brick_ = std::move(brick);
    held_brick_header_ = h;
  }
  // At rest, the run's own picture of every cell replaces the brick's (when it casts them): a new
  // brick is then held for the next camera move, not drawn over it.
  const auto at_rest = [&] { offer_run_picture(view, view_changed, arrived); };
  if (!held_brick_ || !(arrived || view_changed) || held_brick_header_.field != w.field ||
      (run_pictures_.showing && !view_changed))
    return at_rest();
  {
    QMutexLocker lock(&mu_);
    shown_ = false;
  }
  const auto& h = held_brick_header_;
  FrameInfo info;
  info.seq = h.seq, info.step = h.step, info.sim_time = h.sim_time, info.stamp_ns = h.stamp_ns;
  const QString source = QString("%1 (%2) ± %3").arg(QString::fromStdString(h.encoding), QString::fromStdString(h.compression))
                             .arg(h.error_bound, 0, 'g', 2);
  auto result = volume_.render(held_brick_, d, view.field, view, info, source);
  if (result.frame)
    result.frame->link = RemoteLink{QString::fromStdString(h.encoding), h.error_bound, h.link_bytes_per_s};
  hand_over(std::move(result), h.seq);
  at_rest();
}

namespace {
/// Whether every part's frame of `frames` is written (Frame::ready): its brick can be taken.
bool complete(const FrameGroup& frames) {
  for (std::size_t k = 0; k < frames.size(); ++k)
    if (!frames.part(k).ready()) return false;
  return true;
}
}  // namespace

void ViewerWorker::render(const ViewRequest& view, bool fresh) {
  const auto& frames = *current_group_;
  const auto shown = group_description_.for_field(static_cast<std::size_t>(view.field));  // the field's grid
  if (view.volume && shown.dims.size() == 3) {
    // The whole volume: every part's cells in one brick of the whole grid, then one picture. A
    // frame still being written is not waited for: the brick held is drawn for a camera change
    // meanwhile, and the new one taken once every part is complete (polled each turn).
    const auto& fields = group_description_.fields;
    const auto seq = frames.part(0).info().seq;
    const auto refuse = [&](const QString& why) {  // said once, not at every frame
      hand_over({{}, std::exchange(volume_refusal_, why) == why ? QString() : why}, seq);
    };
    if (view.field < 0 || static_cast<std::size_t>(view.field) >= fields.size())
      return refuse("the volume view shows fields, not particles: pick a field");
    const auto field = static_cast<std::size_t>(view.field);
    volume_pending_ = volume_pending_ || fresh || !volume_.holds(view.field, view);
    const bool take = volume_pending_ && complete(frames);
    if (!take && !(fresh_view_ && volume_.holds(view.field, view))) return hand_over({}, seq);  // nothing new to draw
    std::vector<VolumeViewRenderer::Part> parts;
    if (frames.size() == 1)
      parts.push_back({&frames.part(0), &run_->leader().description().fields.at(field),
                       own_block(run_->leader().description().for_field(field))});
    else
      for (std::size_t k = 0; k < frames.size() && k < part_descriptions_.size(); ++k)
        parts.push_back({&frames.part(k), &part_descriptions_[k]->fields.at(field), frames.block(k)});
    try {
      // A picture of every cell is on screen: a new frame's brick is taken (for the next camera
      // move) but not drawn over it; its own picture comes from the run.
      if (run_pictures_.showing && !fresh_view_) {
        if (take) (void)volume_.render(parts, shown, view.field, view, true, false);
        if (take) volume_pending_ = false;
        return hand_over({}, seq);
      }
      hand_over(volume_.render(parts, shown, view.field, view, take), seq);
      if (take) volume_pending_ = false;
      volume_refusal_.clear();
    } catch (const Error& e) {
      if (e.code() != Errc::bad_value) throw;
      volume_pending_ = false;
      refuse(QString::fromStdString(e.what()));
    }
    return;
  }
  if (frames.size() == 1)  // one block: the frame is the picture
    hand_over(renderer_.render(frames.part(0), run_->leader().description().for_field(static_cast<std::size_t>(view.field)), view),
              frames.part(0).info().seq);
  else
    hand_over(renderer_.render(frames, part_descriptions_, group_description_, view), frames.part(0).info().seq);
}

void ViewerWorker::offer_run_picture(const ViewRequest& view, bool view_changed, bool arrived) {
  bool may = false;
  {
    QMutexLocker lock(&mu_);
    may = shown_;  // the UI took the last picture: a new one may go
  }
  if (may || view_changed) (void)show_run_picture(view, view_changed, arrived);
}

bool ViewerWorker::show_run_picture(const ViewRequest& view, bool view_changed, bool arrived) {
  auto& p = run_pictures_;
  const auto now = Clock::now();
  if (view_changed) {
    p.moved = now;
    p.asked.reset();
    p.showing = false;
  }
  if (view.field == p.refused_field || !view.volume || view.volume->interacting || now - p.moved < kRestMs)
    return false;
  const auto shown = group_description_.for_field(static_cast<std::size_t>(std::max(view.field, 0)));
  // The colours are those of the brick's picture when the camera came to rest, kept while it
  // rests: the run's pictures are of one view, not one per frame's range.
  if (!p.asked) {
    p.asked = volume_.picture_request(shown, view);
    if (!p.asked) return false;
    p.next_ask = now;
  }
  if (!arrived && now < p.next_ask) return false;
  p.next_ask = now + 40ms;
  proto::RenderResult r;
  try {
    r = run_->render(*p.asked);  // a whole publisher's, or the parts' composited here; local or remote
  } catch (const Error& e) {
    if (e.code() == Errc::daemon_gone || e.code() == Errc::timeout) throw;
    // An older publisher, a field it cannot cast, a GPU that failed: the brick's pictures stay.
    p.refused_field = view.field;
    qInfo("cuview-gui: %s casts no pictures of its volume (%s); drawing its brick", run_->name().c_str(), e.what());
    return false;
  }
  if (r.pending || (p.showing && r.seq == p.shown_seq)) return false;
  {
    QMutexLocker lock(&mu_);
    shown_ = false;
  }
  auto picture = volume_.show_picture(r, *p.asked, shown, view);
  if (picture.frame && !run_->via().empty()) {
    // Through a gateway the values come in u16 over the picture's own range (RemoteClient::render):
    // the status bar says so, with the bound, as for the gateway's views and bricks.
    float lo = INFINITY, hi = -INFINITY;
    for (std::size_t i = 0; i + 4 <= r.values.size(); i += 4) {
      float v = 0;
      std::memcpy(&v, r.values.data() + i, 4);
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    const double bound = hi >= lo ? remote::error_bound_of(remote::Encoding::u16, lo, hi) : 0.0;
    picture.frame->link = RemoteLink{"u16 values, colours lossless", bound, 0};
  }
  hand_over(std::move(picture), r.seq);
  p.showing = true;
  p.shown_seq = r.seq;
  return true;
}

void ViewerWorker::hand_over(RenderResult result, std::uint64_t seq) {
  if (!result.refusal.isEmpty()) Q_EMIT error(result.refusal);
  if (!result.frame) {
    QMutexLocker lock(&mu_);
    shown_ = true;  // nothing goes to the UI, so nothing will say it was shown
    return;
  }
  result.frame->skipped = last_seq_ != 0 && seq > last_seq_ + 1 ? seq - last_seq_ - 1 : 0;
  last_seq_ = seq;
  Q_EMIT frame_ready(*result.frame);
}

void ViewerWorker::run() {
  auto next_stats = Clock::now();
  auto next_attach = Clock::now();
  for (;;) {
    QString target, remote;
    ViewRequest view;
    bool may_render = false, view_changed = false;
    std::deque<Command> commands;
    {
      QMutexLocker lock(&mu_);
      if (stop_) break;
      target = target_;
      remote = remote_;
      view = view_;
      may_render = shown_;
      if (may_render) {
        // Consumed together with the view it describes, so no change made meanwhile is lost.
        view_changed = std::exchange(view_changed_, false);
      }
      commands = commands_.take();
    }
    const auto now = Clock::now();
    if (leader() != nullptr &&
        (target.isEmpty() || QString::fromStdString(leader()->name()) != target || client_remote_ != remote)) {
      drop_client();  // detaches
      set_state(Connection::detached, "detached");
    }
    if (leader() == nullptr && !target.isEmpty() && now >= next_attach) {
      try_attach(target, remote);
      next_attach = now + 250ms;
    }
    run_commands(std::move(commands));
    if (leader() == nullptr) {
      QMutexLocker lock(&mu_);
      if (!stop_ && commands_.empty()) wake_.wait(&mu_, 100);
      continue;
    }
    try {
      if (Clock::now() >= next_stats) {
        const auto stats = leader()->stats();
        volume_.set_data_rate(stats.frames_per_second);  // a stream faster than full pictures: drawn coarser
        Q_EMIT stats_updated(stats);
        next_stats = Clock::now() + 500ms;
      }
      if (may_render && !run_->via().empty()) {
        render_remote(view, view_changed);  // views fitted to the link, not whole frames
      } else if (may_render) {
        // Only the field shown is copied by the publisher: ask for it, and draw a frame only once
        // it holds it (the frames published before the question do not).
        const auto& fields = run_->leader().description().fields;
        const bool one_field = view.field >= 0 && static_cast<std::size_t>(view.field) < fields.size();
        std::vector<std::string> reading;
        if (one_field) reading.push_back(fields[static_cast<std::size_t>(view.field)].name);
        if (reading_ != reading) {
          run_->read_fields(reading);
          reading_ = reading;
        }
        // A volume view draws a brick of every k-th cell: the publisher may write only those
        // (frames then a k³-th of the cost and the copy), when every reader takes them.
        const auto grid = group_description_.for_field(static_cast<std::size_t>(view.field)).dims;
        const std::uint32_t every =
            view.volume && grid.size() == 3
                ? static_cast<std::uint32_t>(BrickSampler::stride_for({grid[0], grid[1], grid[2]}, view.volume->max_brick))
                : 1;
        if (every_ != every) {
          run_->read_every(every);
          every_ = every;
        }
        // A new step of every part's frames releases the previous one's slots. A volume view
        // whose frame is being written looks at it again soon, and draws one written at once.
        const bool frame_due = view.volume && volume_pending_ && current_group_;
        auto frames = run_->next(!frame_due ? 20ms : complete(*current_group_) ? 0ms : 2ms);
        bool arrived = frames.has_value();
        // (A frame of every k-th cell is drawn only by the view that asked for that k.)
        const auto usable = [&](const FrameGroup& g) {
          return (!one_field || g.holds(static_cast<std::size_t>(view.field))) && takes_every(g.part(0).every(), every_);
        };
        if (!view.volume) next_group_.reset();
        // A volume view waiting for its frame to be complete keeps that one: a newer frame would
        // complete later still, and frames that keep coming before the last completes would
        // starve the view. It also keeps the first newer frame, to draw next: by the time this
        // one is drawn that one is complete or nearly, so waiting for a frame and drawing the one
        // before overlap. Frames newer still are skipped (their slots released at once). (After a
        // change of field, a frame of the new field is taken at once.)
        if (arrived && view.volume && volume_pending_ && current_group_ && usable(*current_group_)) {
          if (!next_group_ && usable(*frames)) next_group_ = std::move(frames);
          arrived = false;
        }
        if (next_group_ && (!view.volume || !usable(*next_group_))) next_group_.reset();
        // The next frame complete first (parts on several GPUs): the one before is not waited for.
        if (next_group_ && volume_pending_ && complete(*next_group_))
          current_group_ = std::exchange(next_group_, std::nullopt);
        if (arrived) current_group_ = std::move(frames);
        if (arrived && !said_phases_) {  // where the time to the first frame went, once per attachment
          said_phases_ = true;
          qInfo("cuview-gui: first frame from %s after %s", qUtf8Printable(target),
                run_->leader().attach_phases().c_str());
        }
        const bool holds = current_group_ && usable(*current_group_);
        // A volume view also comes back while its frame is still being written (render()).
        const bool volume_waits = view.volume && volume_pending_;
        // A picture drawn coarser while frames streamed is drawn again in full once they stop.
        const bool still = view.volume && !volume_pending_ && volume_.wants_still() && !run_pictures_.showing;
        if (current_group_ && holds && (arrived || view_changed || volume_waits || still)) {
          {
            QMutexLocker lock(&mu_);
            shown_ = false;
          }
          fresh_view_ = view_changed || still;
          render(view, arrived);
          // Its brick taken: the frame kept meanwhile is the next to wait for.
          if (!volume_pending_ && next_group_) {
            current_group_ = std::exchange(next_group_, std::nullopt);
            volume_pending_ = true;
          }
        }
        // At rest, the run's own picture of every cell replaces the brick's (when it casts them).
        if (view.volume && grid.size() == 3) offer_run_picture(view, view_changed, arrived);
      } else {
        QMutexLocker lock(&mu_);
        if (!stop_ && !shown_ && commands_.empty()) wake_.wait(&mu_, 20);
      }
    } catch (const Error& e) {
      if (e.code() == Errc::daemon_gone || e.code() == Errc::timeout) {
        // A run of parts says which part (rank) went, and why, when one did.
        const auto why = run_->decomposed() ? run_->gone_reason() : std::nullopt;
        drop_client();
        set_state(Connection::waiting, why ? QString("disconnected: %1 — waiting for %2")
                                                 .arg(QString::fromStdString(*why), target)
                                           : "disconnected — waiting for " + target);
        next_attach = Clock::now() + 100ms;
      } else {
        Q_EMIT error(QString("frame from %1: %2").arg(target, e.what()));
        QMutexLocker lock(&mu_);
        shown_ = true;  // the frame that failed went nowhere: the next one may come
        wake_.wait(&mu_, 200);
      }
    }
  }
  drop_client();
}

}  // namespace cuview::gui
