#include "viewer_worker.hpp"

#include <QMutexLocker>
#include <QPainter>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <span>
#include <tuple>
#include <utility>

#include "cuview/runtime_dir.hpp"
#include "render/render.hpp"

namespace cuview::gui {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
/// The automatic range for values in [lo, hi]: that, or −m..+m when a diverging map shows values
/// of both signs, so that its middle colour is 0.
std::pair<float, float> auto_range(float lo, float hi, Colormap map) {
  if (map != Colormap::diverging || !(lo < 0 && hi > 0)) return {lo, hi};
  const float m = std::max(-lo, hi);
  return {-m, m};
}
}  // namespace

ViewerWorker::ViewerWorker(QObject* parent) : QThread(parent) {
  qRegisterMetaType<RenderedFrame>();
  qRegisterMetaType<Connection>();
  qRegisterMetaType<proto::DescribeResult>();
  qRegisterMetaType<proto::Stats>();
  qRegisterMetaType<QList<DaemonEntry>>();
}

ViewerWorker::~ViewerWorker() {
  {
    QMutexLocker lock(&mu_);
    stop_ = true;
    wake_.wakeAll();
  }
  wait();
}

void ViewerWorker::set_target(const QString& name) {
  QMutexLocker lock(&mu_);
  target_ = name;
  wake_.wakeAll();
}

void ViewerWorker::set_view(const ViewRequest& v) {
  QMutexLocker lock(&mu_);
  view_ = v;
  view_changed_ = true;
  wake_.wakeAll();
}

void ViewerWorker::frame_shown() {
  QMutexLocker lock(&mu_);
  shown_ = true;
  wake_.wakeAll();
}

void ViewerWorker::post(const QString& what, std::function<void(Client&)> command) {
  QMutexLocker lock(&mu_);
  commands_.emplace_back(what, std::move(command));
  wake_.wakeAll();
}

void ViewerWorker::set_state(Connection s, const QString& text) {
  if (s == state_ && text == state_text_) return;
  state_ = s;
  state_text_ = text;
  Q_EMIT connection_changed(s, text);
}

void ViewerWorker::try_attach(const QString& name) {
  AttachOptions o;
  o.name = name.toStdString();
  o.client = "cuview-gui";
  o.timeout = 1500ms;
  // Waiting after a disconnect keeps its short text; waiting from the start keeps the long one.
  const bool was_attached =
      state_ == Connection::connected || (state_ == Connection::waiting && state_text_.startsWith("disconnected"));
  if (state_ != Connection::waiting) set_state(Connection::connecting, "connecting to " + name + "…");
  try {
    client_.emplace(Client::attach(o));
    last_seq_ = 0;
    auto_lo_hi_valid_ = false;
    auto_field_ = -1;
    particle_half_ = 0;
    const auto& d = client_->description();
    Q_EMIT described(d);
    set_state(Connection::connected,
              QString("connected to %1 (%2 on %3)")
                  .arg(name, QString::fromStdString(d.backend), QString::fromStdString(d.device)));
  } catch (const Error& e) {
    client_.reset();
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

void ViewerWorker::drop_client() {
  current_.reset();  // release the held slot before detaching
  client_.reset();
}

void ViewerWorker::render(const Frame& frame, const ViewRequest& view) {
  const auto& d = client_->description();
  if (view.width <= 0 || view.height <= 0 || d.fields.empty()) return;
  const auto points = point_views(d);
  const int field = std::clamp(view.field, 0, static_cast<int>(d.fields.size() + points.size()) - 1);
  const bool is_particles = static_cast<std::size_t>(field) >= d.fields.size();
  const auto& fd = d.fields[is_particles ? 0 : static_cast<std::size_t>(field)];
  if (const auto& f = fd; !is_particles && (f.dtype != "float32" || f.components < 1 || f.components > 3)) {
    // The render path reads float32 scalars and vectors (as their magnitude); a plugin's other
    // fields are described and verified, not drawn (yet): say so once rather than draw garbage.
    if (unshowable_ != f.name)
      Q_EMIT error(QString("field '%1' (%2 × %3) cannot be drawn yet: the viewer draws float32 fields; pick "
                           "another field")
                       .arg(QString::fromStdString(f.name), QString::fromStdString(f.dtype))
                       .arg(f.components));
    unshowable_ = f.name;
    QMutexLocker lock(&mu_);
    shown_ = true;  // nothing goes to the UI, so nothing will say it was shown
    return;
  }
  unshowable_.clear();
  const double cx = view.center_x < 0 ? d.width / 2.0 : view.center_x;
  const double cy = view.center_y < 0 ? d.height / 2.0 : view.center_y;
  auto t = ViewTransform::fit(static_cast<int>(d.width), static_cast<int>(d.height), view.width, view.height, view.zoom,
                              cx, cy);
  if (view.auto_range) {
    std::tie(t.lo, t.hi) = auto_lo_hi_valid_ ? auto_range(auto_lo_, auto_hi_, view.colormap) : std::pair(0.0f, 1.0f);
  } else {
    t.lo = view.lo;
    t.hi = view.hi;
  }
  const auto lut = make_lut(view.colormap);
  if (is_particles)
    return render_particles(frame, view, field, points[static_cast<std::size_t>(field) - d.fields.size()], t,
                            lut.data());
  t.components = static_cast<int>(fd.components);
  QImage image(view.width, view.height, QImage::Format_ARGB32);
  auto values = std::make_shared<std::vector<float>>(static_cast<std::size_t>(view.width) * view.height);
  auto* rgba = reinterpret_cast<std::uint32_t*>(image.bits());
  const bool arrows = view.arrows && fd.components >= 2;
  std::vector<float> vectors(arrows ? 2 * values->size() : 0);
  renderer_.render(frame, static_cast<std::size_t>(field), d.fields[static_cast<std::size_t>(field)].offset, t,
                   lut.data(), rgba, values->data(), arrows ? vectors.data() : nullptr);
  finish_frame(frame, view, field, std::move(image), std::move(values), t, lut.data(), vectors);
}

void ViewerWorker::finish_frame(const Frame& frame, const ViewRequest& view, int field, QImage image,
                                std::shared_ptr<std::vector<float>> values, ViewTransform t, const std::uint32_t* lut,
                                const std::vector<float>& vectors) {
  // Auto range follows the visible values, applied from the next frame on (no second pass) —
  // except when the range came from another field: then this frame is recoloured with its own.
  auto* rgba = reinterpret_cast<std::uint32_t*>(image.bits());
  float lo = INFINITY, hi = -INFINITY;
  for (float v : *values) {
    if (std::isnan(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const bool drawn = lo <= hi;
  const float data_lo = drawn ? lo : 0.0f, data_hi = drawn ? hi : 0.0f;
  if (drawn) {
    if (hi - lo < 1e-6f) hi = lo + 1e-6f;
    if (view.auto_range && auto_field_ != field) {
      std::tie(t.lo, t.hi) = auto_range(lo, hi, view.colormap);
      for (std::size_t i = 0; i < values->size(); ++i)
        if (!std::isnan((*values)[i])) rgba[i] = colour_of((*values)[i], lut, t.lo, t.hi);
    }
    auto_lo_ = lo, auto_hi_ = hi, auto_lo_hi_valid_ = true, auto_field_ = field;
  }
  if (!vectors.empty()) draw_arrows(image, vectors, t);
  RenderedFrame out;
  out.image = std::move(image);
  out.values = std::move(values);
  out.info = frame.info();
  out.lo = t.lo, out.hi = t.hi;
  out.data_lo = data_lo, out.data_hi = data_hi;
  out.field = field;
  out.colormap = view.colormap;
  out.center_x = t.center_x, out.center_y = t.center_y, out.pixels_per_cell = t.pixels_per_cell;
  out.field_w = t.field_w, out.field_h = t.field_h;
  out.skipped = last_seq_ != 0 && frame.info().seq > last_seq_ + 1 ? frame.info().seq - last_seq_ - 1 : 0;
  last_seq_ = frame.info().seq;
  Q_EMIT frame_ready(out);
}

void ViewerWorker::draw_arrows(QImage& image, const std::vector<float>& vectors, const ViewTransform& t) {
  // One arrow per kArrowSpacing pixels, at the vector of the cell under its centre; the longest
  // visible vector spans the spacing (arrows show direction and relative size, whatever the
  // colour range). x right and y down, as the grid.
  constexpr int kArrowSpacing = 24;
  double top = 0;
  for (int py = kArrowSpacing / 2; py < t.view_h; py += kArrowSpacing)
    for (int px = kArrowSpacing / 2; px < t.view_w; px += kArrowSpacing) {
      const float* v = &vectors[2 * (static_cast<std::size_t>(py) * t.view_w + px)];
      if (!std::isnan(v[0])) top = std::max(top, std::hypot(double(v[0]), double(v[1])));
    }
  if (top <= 0) return;
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(QColor(255, 255, 255), 1.2));
  for (int py = kArrowSpacing / 2; py < t.view_h; py += kArrowSpacing)
    for (int px = kArrowSpacing / 2; px < t.view_w; px += kArrowSpacing) {
      const float* v = &vectors[2 * (static_cast<std::size_t>(py) * t.view_w + px)];
      if (std::isnan(v[0])) continue;
      const double mag = std::hypot(double(v[0]), double(v[1]));
      if (mag <= 0) continue;
      const double len = 0.9 * kArrowSpacing * mag / top;
      const double ux = v[0] / mag, uy = v[1] / mag;
      const QPointF c(px + 0.5, py + 0.5);  // the pixel's centre
      const QPointF tail = c - QPointF(0.5 * len * ux, 0.5 * len * uy),
                    tip = c + QPointF(0.5 * len * ux, 0.5 * len * uy);
      p.drawLine(tail, tip);
      const double h = std::min(5.0, 0.4 * len);
      p.drawLine(tip, tip - QPointF(h * (ux * 0.87 - uy * 0.5), h * (uy * 0.87 + ux * 0.5)));
      p.drawLine(tip, tip - QPointF(h * (ux * 0.87 + uy * 0.5), h * (uy * 0.87 - ux * 0.5)));
    }
}

std::vector<PointView> point_views(const proto::DescribeResult& d) {
  std::vector<PointView> out;
  for (std::size_t s = 0; s < d.particles.size(); ++s) {
    const auto& ps = d.particles[s];
    const QString name = QString::fromStdString(ps.name);
    std::vector<int> by;
    for (std::size_t a = 0; a < ps.attributes.size(); ++a) {
      const auto& at = ps.attributes[a];
      if (at.dtype != "float32" || at.name == "position") continue;
      if (at.name == "velocity")
        by.insert(by.begin(), static_cast<int>(a));
      else
        by.push_back(static_cast<int>(a));
    }
    if (by.empty()) out.push_back({s, -1, name + " (points)"});
    for (int a : by)
      out.push_back({s, a, QString("%1 (points by %2)").arg(name, QString::fromStdString(ps.attributes[a].name))});
  }
  return out;
}

int find_view(const QStringList& labels, const QString& name) {
  if (const int i = labels.indexOf(name); i >= 0) return i;
  if (name.endsWith(" (points)")) {  // a set's name alone: its first view
    const QString prefix = name.chopped(1);
    for (int i = 0; i < labels.size(); ++i)
      if (labels[i].startsWith(prefix)) return i;
  }
  return -1;
}

void ViewerWorker::render_particles(const Frame& frame, const ViewRequest& view, int field, const PointView& pv,
                                    const ViewTransform& t, const std::uint32_t* lut) {
  const auto& d = client_->description();
  const auto& ps = d.particles.at(pv.set);
  const proto::FieldDesc* pos = nullptr;
  for (const auto& a : ps.attributes)
    if (pos == nullptr && a.dtype == "float32" && a.name == "position" && a.components >= 2) pos = &a;
  const proto::FieldDesc* colour = pv.colour >= 0 ? &ps.attributes.at(static_cast<std::size_t>(pv.colour)) : nullptr;
  if (pos == nullptr) {
    if (unshowable_ != ps.name)
      Q_EMIT error(QString("particle set '%1' has no float32 'position' to draw").arg(QString::fromStdString(ps.name)));
    unshowable_ = ps.name;
    QMutexLocker lock(&mu_);
    shown_ = true;
    return;
  }
  // The attributes to this process: in place on the host, one copy each from the GPU.
  const std::size_t n = ps.count;
  std::vector<float> xyz(n * pos->components), c(colour ? n * colour->components : 0);
  auto fetch = [&](const proto::FieldDesc& a, std::vector<float>& out) {
    frame.copy_to_host(a.offset, std::as_writable_bytes(std::span(out)));  // on CUDA: host wait, copy engine
  };
  fetch(*pos, xyz);
  if (colour) fetch(*colour, c);
  const std::size_t pc = pos->components, cc = colour ? colour->components : 1;
  if (particle_half_ <= 0) {  // fit the bodies of the first frame, with a margin
    double half = 1e-6;
    for (std::size_t i = 0; i < n; ++i)
      half = std::max({half, std::abs(double(xyz[i * pc])), std::abs(double(xyz[i * pc + 1]))});
    particle_half_ = half * 1.05;
  }
  QImage image(view.width, view.height, QImage::Format_ARGB32);
  image.fill(kBackground);
  auto values = std::make_shared<std::vector<float>>(static_cast<std::size_t>(view.width) * view.height, NAN);
  auto* rgba = reinterpret_cast<std::uint32_t*>(image.bits());
  // Position → grid cell: the set's declared bounds (so points overlay its fields and strokes land
  // where drawn), else the fit above.
  const double m = std::min(t.field_w, t.field_h);
  double x0 = -particle_half_ * t.field_w / m, x1 = -x0, y0 = -particle_half_ * t.field_h / m, y1 = -y0;
  if (ps.bounds.size() == 4) x0 = ps.bounds[0], x1 = ps.bounds[1], y0 = ps.bounds[2], y1 = ps.bounds[3];
  const double sx = t.field_w / (x1 - x0), sy = t.field_h / (y1 - y0);
  for (std::size_t i = 0; i < n; ++i) {
    const double gx = (xyz[i * pc] - x0) * sx, gy = (xyz[i * pc + 1] - y0) * sy;
    const int px = static_cast<int>(std::floor((gx - t.center_x) * t.pixels_per_cell + t.view_w * 0.5));
    const int py = static_cast<int>(std::floor((gy - t.center_y) * t.pixels_per_cell + t.view_h * 0.5));
    if (px < 0 || py < 0 || px >= t.view_w || py >= t.view_h) continue;  // only what is visible is drawn
    float v = 0;
    if (colour) {
      const float* a = c.data() + i * cc;
      v = shown_value(a, static_cast<int>(cc));
    }
    const std::size_t at = static_cast<std::size_t>(py) * t.view_w + px;
    rgba[at] = colour_of(v, lut, t.lo, t.hi);
    (*values)[at] = v;
  }
  finish_frame(frame, view, field, std::move(image), std::move(values), t, lut, {});
}

void ViewerWorker::list_daemons() {
  QList<DaemonEntry> out;
  for (const auto& n : list_running_instances()) {
    DaemonEntry e{QString::fromStdString(n), {}};
    try {
      AttachOptions o;
      o.name = n;
      o.client = "cuview-gui (list)";
      o.import = Import::control_only;
      o.timeout = 500ms;
      const auto s = Client::attach(o).stats();
      e.summary = QString("%1 %2×%3 on %4\n%5 · step %6")
                      .arg(QString::fromStdString(s.sim))
                      .arg(s.width)
                      .arg(s.height)
                      .arg(QString::fromStdString(s.backend))
                      .arg(s.paused ? "paused" : "running")
                      .arg(s.step);
    } catch (const Error& err) {
      e.summary = QString("not answering: %1").arg(err.what());
    }
    out.push_back(e);
  }
  Q_EMIT daemons_listed(out);
}

void ViewerWorker::run() {
  auto next_stats = Clock::now();
  auto next_list = Clock::now();
  auto next_attach = Clock::now();
  for (;;) {
    QString target;
    ViewRequest view;
    bool may_render = false, view_changed = false;
    std::deque<std::pair<QString, std::function<void(Client&)>>> commands;
    {
      QMutexLocker lock(&mu_);
      if (stop_) break;
      target = target_;
      view = view_;
      may_render = shown_;
      if (may_render) {
        // Consumed together with the view it describes, so no change made meanwhile is lost.
        view_changed = std::exchange(view_changed_, false);
      }
      commands.swap(commands_);
    }
    const auto now = Clock::now();
    if (now >= next_list) {
      list_daemons();
      next_list = now + 2s;
    }
    if (client_ && (target.isEmpty() || QString::fromStdString(client_->name()) != target)) {
      drop_client();  // detaches
      set_state(Connection::detached, "detached");
    }
    if (!client_ && !target.isEmpty() && now >= next_attach) {
      try_attach(target);
      next_attach = now + 250ms;
    }
    for (auto& [what, command] : commands) {
      if (!client_) {
        Q_EMIT error(what + ": not attached to a daemon");
        continue;
      }
      try {
        command(*client_);
      } catch (const Error& e) {
        Q_EMIT error(what + ": " + e.what());
      }
    }
    if (!client_) {
      QMutexLocker lock(&mu_);
      if (!stop_ && commands_.empty()) wake_.wait(&mu_, 100);
      continue;
    }
    try {
      if (Clock::now() >= next_stats) {
        Q_EMIT stats_updated(client_->stats());
        next_stats = Clock::now() + 500ms;
      }
      if (may_render) {
        auto frame = client_->next_frame(20ms);
        if (frame) current_ = std::move(frame);  // releases the previous frame's slot
        if (current_ && (frame || view_changed)) {
          {
            QMutexLocker lock(&mu_);
            shown_ = false;
          }
          render(*current_, view);
        }
      } else {
        QMutexLocker lock(&mu_);
        if (!stop_ && !shown_ && commands_.empty()) wake_.wait(&mu_, 20);
      }
    } catch (const Error& e) {
      if (e.code() == Errc::daemon_gone || e.code() == Errc::timeout) {
        drop_client();
        set_state(Connection::waiting, "disconnected — waiting for " + target);
        next_attach = Clock::now() + 100ms;
      } else {
        Q_EMIT error(QString("frame from %1: %2").arg(target, e.what()));
        QMutexLocker lock(&mu_);
        wake_.wait(&mu_, 200);
      }
    }
  }
  drop_client();
}

}  // namespace cuview::gui
