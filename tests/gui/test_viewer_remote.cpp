// The viewer through a gateway (cuview-gui --remote): the field it sends drawn, the status bar
// saying how exact it is, values read by hovering within that bound, steering reaching the daemon,
// a publisher and a gateway restarted under it, and gateways announced on the network. The URL is
// a variable: unix:<the gateway's socket> here; CUVIEW_TEST_REMOTE_URL (e.g. an ssh:// URL once a
// real sshd fixture runs) replaces it.
#include <signal.h>
#include <unistd.h>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QListWidget>
#include <QRegularExpression>
#include <QSlider>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include "cuview/brick_sampler.hpp"
#include "main_window.hpp"
#include "render/volume_render.hpp"
#include "mpi_run.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

namespace {
std::string testing_join(const std::set<std::uint32_t>& s) {
  std::string out;
  for (auto v : s) out += std::to_string(v) + " ";
  return out;
}
std::filesystem::path gateway_socket() {
  return std::filesystem::path(std::getenv("XDG_RUNTIME_DIR")) / "cuview" / ".gateway" / "gateway.sock";
}

/// What the tests attach through.
QString remote_url() {
  if (const char* url = std::getenv("CUVIEW_TEST_REMOTE_URL"); url != nullptr && *url != '\0') return url;
  return QString::fromStdString("unix:" + gateway_socket().string());
}

/// A port of this test run, for announcements: two runs at once never hear each other.
int test_announce_port() { return 20000 + static_cast<int>(::getpid() % 20000); }

/// A viewer of `name` through the test gateway.
ViewerOptions remote_options(const QString& name) {
  ViewerOptions o;
  o.name = name;
  o.remote = remote_url();
  o.announce_port = test_announce_port();
  return o;
}

std::unique_ptr<MainWindow> open_remote_viewer(const ViewerOptions& o) {
  auto w = std::make_unique<MainWindow>(o);
  w->resize(900, 600);
  w->show();
  return w;
}

std::unique_ptr<MainWindow> open_remote_viewer(const QString& name) { return open_remote_viewer(remote_options(name)); }

/// A remote viewer of `name`'s volume seen whole as a MIP from a known camera (`brick`: its
/// --brick, unset for the default).
std::unique_ptr<MainWindow> open_remote_mip(const QString& name, const QString& field = {},
                                            std::optional<int> brick = std::nullopt) {
  auto o = remote_options(name);
  o.volume = "mip";
  o.field = field;
  o.brick = brick;
  o.camera = VolumeCamera{30, 20};
  return open_remote_viewer(o);
}

/// A readout: "(cx, cy) = v ± bound".
struct Readout {
  int x = 0, y = 0;
  double value = 0;
};
std::optional<Readout> parse_readout(const QString& text) {
  static const QRegularExpression re(R"(^\((\d+), (\d+)\) = (\S+))");
  const auto m = re.match(text);
  if (!m.hasMatch()) return {};
  return Readout{m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3).toDouble()};
}

/// The MIP `f` shows, cast again from `frame`'s own cells of field `field` at f's stride, camera
/// and size: how many pixels both drew, and how many differ by more than the bound f states.
std::pair<std::size_t, std::size_t> against_frame(const RenderedFrame& f, const Frame& frame,
                                                  const proto::DescribeResult& d, std::size_t field) {
  const auto g = d.dims;
  HostBrick exact;
  BrickSampler::begin(exact, {g.at(0), g.at(1), g.at(2)}, f.volume->stride);
  BrickSampler sampler;
  sampler.sample(frame, d.fields.at(field), own_block(d), exact);
  const auto want = render_volume({exact.values.data(), exact.width, exact.height, exact.depth}, f.volume->camera,
                                  VolumeMode::mip, VolumeStyle{}, f.image.width(), f.image.height());
  const double bound = f.link->error_bound + 1e-6;
  std::size_t drawn = 0, off = 0;
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    const float got = (*f.values)[i];
    if (std::isnan(want.values[i]) || std::isnan(got)) {
      off += std::isnan(want.values[i]) != std::isnan(got);
      continue;
    }
    ++drawn;
    off += std::abs(double(got) - want.values[i]) > bound;
  }
  return {drawn, off};
}

}  // namespace

TEST_CASE("a remote viewer draws the field the gateway sends, says how exact it is, and hovering reads true values",
          "[gui][remote]") {
  RuntimeDir rt;
  auto daemon = start_still_flow("run1");
  auto gateway = start_gateway();
  auto w = open_remote_viewer("run1");
  REQUIRE(shows_frames(*w));
  INFO(w->connection_detail().toStdString());
  CHECK(w->connection_detail().contains("through " + remote_url()));

  // Pixels: a field, not a blank view.
  REQUIRE(wait_for([&] { return distinct_colours(w->view()->last_frame().image) > 20; }, 10000));

  // The status bar: remote, the URL, an encoding and an error bound.
  auto* link = w->findChild<QLabel*>("remote");
  REQUIRE(link);
  REQUIRE(wait_for([&] { return link->isVisible() && link->text().startsWith("remote " + remote_url()); }, 5000));
  static const QRegularExpression says(R"(^remote \S+ · (u8|u16|f32) · ±\S+)");
  CHECK(says.match(link->text()).hasMatch());

  // Hovering: the readout is the true value (the paused daemon's, read by a local client), within
  // the bound the gateway gives. First the view of the window's settled size (on a loaded machine
  // the first view can be of the size the window had before its layout settled).
  REQUIRE(wait_for([&] { return w->view()->last_frame().image.size() == w->view()->size(); }, 10000));
  auto truth_client = attach("run1");
  auto frame = truth_client.next_frame(5000ms);
  REQUIRE(frame);
  const RenderedFrame f = w->view()->last_frame();  // what readout() reads: no events run below
  REQUIRE(f.link);
  const auto& d = truth_client.description();
  const auto& field = d.fields.at(static_cast<std::size_t>(f.field));
  int checked = 0;
  // A grid of pixels fine enough to land in the field whatever the window's layout (a narrow view
  // shows a wide flow as a band).
  for (int py = 5; py < f.image.height(); py += 13) {
    for (int px = 5; px < f.image.width(); px += 17) {
      const auto r = parse_readout(w->view()->readout({px, py}));
      if (!r) continue;  // outside the field (the view letterboxes it)
      const float* cell = frame->host_field(static_cast<std::size_t>(f.field)) +
                          (static_cast<std::size_t>(r->y) * d.extent().width() + r->x) * field.components;
      const double truth = shown_value(cell, static_cast<int>(field.components));
      INFO("pixel (" << px << ", " << py << ") reads " << r->value << ", cell (" << r->x << ", " << r->y << ") is "
                     << truth << "; bound " << f.link->error_bound);
      CHECK(std::abs(r->value - truth) <= f.link->error_bound + 1e-5 * std::abs(truth) + 1e-7);
      ++checked;
    }
  }
  CHECK(checked >= 10);

  // Overlays a gateway cannot send are disabled, saying why.
  auto* arrows = w->findChild<QCheckBox*>("arrows");
  REQUIRE(arrows);
  CHECK_FALSE(arrows->isEnabled());
  CHECK(arrows->toolTip().contains("not available remotely"));
}

TEST_CASE("a remote viewer shows a volume a plane at a time, hovering reads (x, y, z) and true values",
          "[gui][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("vol", Backend::host, {"--sim", "grayscott3d", "--paused"}, "24x16x12");
  REQUIRE(ctl("vol", {"step", "30"}).code == 0);
  (void)wait_stats("vol", [](const StatsView& s) { return s.step == 30; });
  auto gateway = start_gateway();
  auto w = open_remote_viewer("vol");
  REQUIRE(shows_frames(*w));
  auto* axis = w->findChild<QComboBox*>("slice_axis");
  REQUIRE(axis);
  axis->setCurrentText("y");  // the plane y = 8 (the middle): columns x, rows z
  REQUIRE(wait_for([&] {
    const auto& f = w->view()->last_frame();
    return f.slice && f.slice->axis == SliceAxis::y && f.image.size() == w->view()->size() &&
           distinct_colours(f.image) > 3;
  }, 10000));
  auto truth_client = attach("vol");
  auto frame = truth_client.next_frame(5000ms);
  REQUIRE(frame);
  const float* u = frame->host_field(0);
  const RenderedFrame f = w->view()->last_frame();
  REQUIRE(f.link);
  static const QRegularExpression re(R"(^\((\d+), (\d+), (\d+)\) = (\S+))");
  int checked = 0;
  for (int py = 5; py < f.image.height(); py += 13)
    for (int px = 5; px < f.image.width(); px += 17) {
      const auto m = re.match(w->view()->readout({px, py}));
      if (!m.hasMatch()) continue;
      const int x = m.captured(1).toInt(), y = m.captured(2).toInt(), z = m.captured(3).toInt();
      CHECK(y == static_cast<int>(f.slice->index));
      const double truth = u[(static_cast<std::size_t>(z) * 16 + y) * 24 + x];
      INFO("pixel (" << px << ", " << py << ") reads cell (" << x << ", " << y << ", " << z << ") = "
                     << m.captured(4).toStdString() << ", truth " << truth);
      CHECK(std::abs(m.captured(4).toDouble() - truth) <= f.link->error_bound + 1e-5 * std::abs(truth) + 1e-6);
      ++checked;
    }
  CHECK(checked >= 10);
}

TEST_CASE("a parameter changed in a remote viewer reaches the daemon; its Daemons list is the gateway's",
          "[gui][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  auto other = start_daemon("run2", Backend::host);
  auto gateway = start_gateway();
  auto w = open_remote_viewer("run1");
  REQUIRE(shows_frames(*w));
  w->set_parameter("F", 0.031);
  REQUIRE(wait_for([&] { return stats("run1").F == 0.031; }, 10000));
  REQUIRE(wait_for(
      [&] {
        auto names = w->daemon_names();
        names.sort();
        return names == QStringList{"run1", "run2"};
      },
      10000));
  auto* list = w->findChild<QListWidget*>("daemons");
  REQUIRE(list);
  CHECK(list->item(0)->text().contains("remote"));
}

TEST_CASE("a remote viewer shows frames again after its publisher and then its gateway restart", "[gui][remote]") {
  RuntimeDir rt;
  auto daemon = std::make_unique<ChildProcess>(start_daemon("run1", Backend::host));
  auto gateway = std::make_unique<ChildProcess>(start_gateway());
  auto w = open_remote_viewer("run1");
  REQUIRE(shows_frames(*w));

  const QString first_session = w->session();
  daemon->signal(SIGKILL);
  REQUIRE(daemon->wait_for(10s));
  REQUIRE(wait_for([&] { return w->connection() == Connection::waiting; }, 5000));
  daemon = std::make_unique<ChildProcess>(start_daemon("run1", Backend::host));
  REQUIRE(shows_frames(*w, w->frames_displayed()));
  CHECK(w->session() != first_session);

  gateway->signal(SIGKILL);
  REQUIRE(gateway->wait_for(10s));
  REQUIRE(wait_for([&] { return w->connection() == Connection::waiting; }, 5000));
  gateway = std::make_unique<ChildProcess>(start_gateway());
  const quint64 before = w->frames_displayed();
  REQUIRE(wait_for([&] { return w->connection() == Connection::connected && w->frames_displayed() > before; }, 10000));
}

TEST_CASE("a remote viewer shows a run of parts on two hosts as one field, reading true values across their border",
          "[gui][remote][mpi]") {
  if (mpirun_path().empty()) {
    WARN("mpirun is not installed (Debian: openmpi-bin): the run over two hosts is not tested here");
    return;
  }
  RuntimeDir rt;
  // Rank 0 on "host A", rank 1 on "host B": each host's gateway serves its own rank's part.
  const std::vector<std::filesystem::path> hosts{host_dir(rt.path() / "host-a"), host_dir(rt.path() / "host-b")};
  auto run = start_parts_on_hosts("two", hosts, Backend::host, {"--sim", "lbm", "--paused"}, "160x64");
  std::vector<ChildProcess> gateways;
  QStringList urls;
  for (const auto& h : hosts) {
    gateways.push_back(on_host(h, [] { return start_gateway(); }));
    urls << QString::fromStdString(on_host(h, [] { return gateway_url(); }));
  }
  auto leader = on_host(hosts[0], [] {
    return Client::attach({.name = "two", .client = "test", .import = Import::control_only, .part = 0});
  });
  leader.step(400);
  REQUIRE(wait_for([&] { return leader.stats().step == 400; }, 20000));
  // The truth: each part's frame, read on its own host.
  std::vector<Client> truth;
  std::vector<Frame> frames;
  for (std::uint32_t k = 0; k < 2; ++k) {
    truth.push_back(on_host(hosts[k], [&] { return Client::attach({.name = "two", .client = "truth", .part = k}); }));
    auto f = truth.back().next_frame(5000ms);
    REQUIRE(f);
    REQUIRE(f->info().step == 400);
    frames.push_back(std::move(*f));
  }
  const std::uint32_t border = truth[1].description().part->offset.at(0);  // part 1's first row

  ViewerOptions o;
  o.name = "two";
  o.remote = urls.join(' ');  // what `cuview-gui --remote A --remote B` makes
  o.announce_port = test_announce_port();
  MainWindow w(o);
  w.resize(900, 600);
  w.show();
  const bool shows = shows_frames(w);
  INFO(w.connection_detail().toStdString());
  REQUIRE(shows);
  CHECK(w.connection_detail().contains("2 parts"));
  CHECK(w.connection_detail().contains("host-1"));
  REQUIRE(wait_for([&] { return w.view()->last_frame().image.size() == w.view()->size(); }, 10000));
  const RenderedFrame f = w.view()->last_frame();
  REQUIRE(f.link);
  // The status bar counts the gateways (two URLs would push the encoding and bound out of sight)
  // and names them in its tooltip.
  auto* link = w.findChild<QLabel*>("remote");
  REQUIRE(link);
  REQUIRE(wait_for([&] { return link->text().startsWith("remote 2 gateways · "); }, 5000));
  CHECK(link->text().contains("±"));
  for (const auto& url : urls) CHECK(link->toolTip().contains(url));
  // Down one column of pixels, every cell row of the field: rows of both parts, the two rows that
  // meet at their border among them, each the true value within the bound the view states.
  std::set<int> rows;
  int wrong = 0;
  for (int py = 0; py < f.image.height(); ++py) {
    const auto r = parse_readout(w.view()->readout({f.image.width() / 2, py}));
    if (!r) continue;
    const std::uint32_t k = static_cast<std::uint32_t>(r->y) < border ? 0 : 1;
    const auto& d = truth[k].description();
    const auto& field = d.fields.at(static_cast<std::size_t>(f.field));
    const float* cell = frames[k].host_field(static_cast<std::size_t>(f.field)) +
                        (static_cast<std::size_t>(r->y - d.part->offset.at(0)) * d.extent().width() + r->x) * field.components;
    const double truth_value = shown_value(cell, static_cast<int>(field.components));
    if (std::abs(r->value - truth_value) > f.link->error_bound + 1e-5 * std::abs(truth_value) + 1e-7) {
      if (wrong++ == 0) UNSCOPED_INFO("pixel row " << py << ": cell (" << r->x << ", " << r->y << ") reads " << r->value
                                                  << ", is " << truth_value << "; bound " << f.link->error_bound);
    }
    rows.insert(r->y);
  }
  CHECK(wrong == 0);
  CHECK(rows.size() == 64);  // every row of the global grid, none missing at the seam
  CHECK(rows.count(static_cast<int>(border) - 1) == 1);
  CHECK(rows.count(static_cast<int>(border)) == 1);
}

TEST_CASE("a volume decomposed over ranks is one volume: its planes cross the slab border, locally and remotely",
          "[gui][remote][mpi]") {
  if (mpirun_path().empty()) {
    WARN("mpirun is not installed (Debian: openmpi-bin): the run of slabs is not tested here");
    return;
  }
  RuntimeDir rt;
  constexpr std::uint32_t W = 24, H = 16, D = 12;
  auto run = start_parts("slabs", 2, Backend::host, {"--sim", "lbm3d", "--paused"}, "24x16x12");
  auto leader = Client::attach({.name = "slabs", .client = "test", .import = Import::control_only, .part = 0});
  leader.step(30);
  REQUIRE(wait_for([&] { return leader.stats().step == 30; }, 20000));
  // The truth: each part's frame (a slab of layers), read on its own.
  std::vector<Client> truth;
  std::vector<Frame> frames;
  for (std::uint32_t k = 0; k < 2; ++k) {
    truth.push_back(Client::attach({.name = "slabs", .client = "truth", .part = k}));
    auto f = truth.back().next_frame(5000ms);
    REQUIRE(f);
    REQUIRE(f->info().step == 30);
    frames.push_back(std::move(*f));
  }
  const std::uint32_t border = truth[1].description().part->offset.at(0);  // part 1's first layer
  REQUIRE(border > 0);
  REQUIRE(border < D);
  // cuview-ctl names each part's slab.
  const auto status = ctl("slabs", {"status"});
  CHECK_THAT(status.out, Catch::Contains("layers 0-" + std::to_string(border - 1) + " rows 0-15 cols 0-23") &&
                             Catch::Contains("layers " + std::to_string(border) + "-11 rows 0-15 cols 0-23"));
  const auto truth_at = [&](std::uint32_t x, std::uint32_t y, std::uint32_t z) -> double {
    const std::size_t k = z < border ? 0 : 1;
    const std::uint32_t z0 = k == 0 ? 0 : border;
    const auto comps = static_cast<int>(truth[k].description().fields.at(0).components);  // the velocity
    return shown_value(frames[k].host_field(0) + (std::size_t{z - z0} * H + y) * W * comps + std::size_t{x} * comps,
                       comps);
  };
  static const QRegularExpression re(R"(^\((\d+), (\d+), (\d+)\) = (\S+))");
  // Down one column of pixels: the cells a plane shows there, each its true value within the bound
  // the view states. Returns the layers (z) seen.
  const auto check_column = [&](MainWindow& w, const Slice& slice) {
    const RenderedFrame f = w.view()->last_frame();
    const double bound = f.link ? f.link->error_bound : 0.0;
    std::set<std::uint32_t> layers;
    int wrong = 0;
    for (int py = 0; py < f.image.height(); ++py) {
      const auto m = re.match(w.view()->readout({f.image.width() / 2, py}));
      if (!m.hasMatch()) continue;
      const auto x = m.captured(1).toUInt(), y = m.captured(2).toUInt(), z = m.captured(3).toUInt();
      const std::uint32_t along = slice.axis == SliceAxis::z ? z : slice.axis == SliceAxis::y ? y : x;
      const double want = truth_at(x, y, z);
      if (along != slice.index || std::abs(m.captured(4).toDouble() - want) > bound + 1e-5 * std::abs(want) + 1e-6) {
        if (wrong++ == 0)
          UNSCOPED_INFO("pixel row " << py << " reads " << m.captured(0).toStdString() << ", truth " << want
                                     << ", bound " << bound);
      }
      layers.insert(z);
    }
    CHECK(wrong == 0);
    return layers;
  };
  const auto shows_plane = [](MainWindow& w, const Slice& slice) {
    const bool shown = wait_for([&] {
      const auto& f = w.view()->last_frame();
      return f.slice == slice && f.image.size() == w.view()->size() && distinct_colours(f.image) > 3;
    }, 10000);
    const auto& f = w.view()->last_frame();
    UNSCOPED_INFO("the view shows " << (f.slice ? to_string(f.slice->axis) : "no") << "-plane "
                                    << (f.slice ? f.slice->index : 0) << ", " << f.image.width() << "x"
                                    << f.image.height() << " pixels (the view: " << w.view()->width() << "x"
                                    << w.view()->height() << "), " << distinct_colours(f.image) << " colours");
    return shown;
  };

  std::optional<ChildProcess> gateway;
  std::unique_ptr<MainWindow> w;
  SECTION("locally") { w = open_viewer("slabs"); }
  SECTION("through a gateway") {
    gateway.emplace(start_gateway());
    w = open_remote_viewer("slabs");
  }
  REQUIRE(shows_frames(*w));
  CHECK(w->connection_detail().contains("2 parts"));
  auto* axis = w->findChild<QComboBox*>("slice_axis");
  auto* slider = w->findChild<QSlider*>("slice");
  REQUIRE(axis);
  REQUIRE(slider);
  // A y-plane crosses both slabs: every layer shows, the two that meet at the border among them.
  axis->setCurrentText("y");
  const Slice y_plane{SliceAxis::y, slider->value() >= 0 ? static_cast<std::uint32_t>(slider->value()) : 0};
  REQUIRE(shows_plane(*w, y_plane));
  const auto layers = check_column(*w, y_plane);
  CHECK(layers.size() == D);
  CHECK(layers.count(border - 1) == 1);
  CHECK(layers.count(border) == 1);
  // A z-plane of the second slab is that part's layer.
  axis->setCurrentText("z");
  slider->setValue(static_cast<int>(D - 2));
  REQUIRE(shows_plane(*w, Slice{SliceAxis::z, D - 2}));
  CHECK(check_column(*w, Slice{SliceAxis::z, D - 2}) == std::set<std::uint32_t>{D - 2});
  // Three planes through one cell: each part fills its share of each; every cell read lies on one
  // of them and holds its true value, in both slabs.
  auto* three = w->findChild<QCheckBox*>("three_planes");
  REQUIRE(three);
  three->setChecked(true);
  REQUIRE(wait_for([&] {
    const auto& f = w->view()->last_frame();
    return f.layout.panels.size() == 3 && f.image.size() == w->view()->size() && distinct_colours(f.image) > 3;
  }, 10000));
  const RenderedFrame f = w->view()->last_frame();
  const auto through = *f.layout.through;
  const double bound = f.link ? f.link->error_bound : 0.0;
  std::set<std::uint32_t> read_layers;
  int wrong = 0, read = 0;
  for (int py = 1; py < f.image.height(); py += 7)
    for (int px = 1; px < f.image.width(); px += 11) {
      const auto m = re.match(w->view()->readout({px, py}));
      if (!m.hasMatch()) continue;
      const auto x = m.captured(1).toUInt(), y = m.captured(2).toUInt(), z = m.captured(3).toUInt();
      const double want = truth_at(x, y, z);
      wrong += (x != through[0] && y != through[1] && z != through[2]) ||
               std::abs(m.captured(4).toDouble() - want) > bound + 1e-5 * std::abs(want) + 1e-6;
      read_layers.insert(z);
      ++read;
    }
  CHECK(wrong == 0);
  CHECK(read > 50);
  INFO("layers read: " << testing_join(read_layers));
  CHECK(read_layers.count(border - 1) == 1);
  CHECK(read_layers.count(border) == 1);
}

TEST_CASE("a gateway started with --announce is listed under On the network, with no publisher's name",
          "[gui][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("secret-run", Backend::host);
  const int port = test_announce_port();
  auto gateway = start_gateway({"--announce-port", std::to_string(port)});
  ViewerOptions o;
  o.announce_port = port;
  MainWindow w(o);
  w.show();
  auto* gateways = w.findChild<QListWidget*>("gateways");
  REQUIRE(gateways);
  const char* user = std::getenv("USER");
  INFO(gateway.err());
  REQUIRE(wait_for(
      [&] {
        for (int i = 0; i < gateways->count(); ++i)
          if (gateways->item(i)->data(Qt::UserRole).toString().startsWith("ssh://")) return true;
        return false;
      },
      10000));
  for (int i = 0; i < gateways->count(); ++i) {
    CHECK_FALSE(gateways->item(i)->text().contains("secret-run"));
    if (user != nullptr && gateways->item(i)->data(Qt::UserRole).toString().startsWith("ssh://"))
      CHECK(gateways->item(i)->text().startsWith(QString(user) + "@"));
  }
}

TEST_CASE("cuview-gui --remote shows the field in a real window", "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("run1", Backend::host);
  auto gateway = start_gateway();
  auto gui = start_viewer({"--remote", remote_url().toStdString(), "--name", "run1", "--announce-port",
                           std::to_string(test_announce_port())});
  INFO(gui.err());
  const auto window = x11::window_of(gui.pid());
  REQUIRE(window);
  REQUIRE(wait_for([&] { return x11::window_name(*window).find("cuview — run1") == 0; }, 15000));
  REQUIRE(wait_for([&] { return distinct_colours(screen_pixels(*window)) > 50; }, 10000));
}

TEST_CASE("a volume seen whole through a gateway: the brick it sends, drawn within its stated bound", "[gui][remote]") {
  RuntimeDir rt;
  auto daemon = start_daemon("vol", Backend::host, {"--sim", "grayscott3d", "--paused"}, "48x40x32");
  auto gateway = start_gateway();
  auto window = open_remote_mip("vol");
  auto& w = *window;
  REQUIRE(shows_frames(w));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return f.volume && f.link && f.image.size() == w.view()->size();
  }));
  const auto f = w.view()->last_frame();
  CHECK(f.volume->brick_w == 48);  // a fast link: the brick asked for (128 a side) holds every cell
  CHECK(f.volume->stride == 1);
  CHECK(f.volume->source.contains("±"));
  auto* status = w.findChild<QLabel*>("volume");
  REQUIRE(status != nullptr);
  CHECK(status->text().contains(f.link->encoding));

  // The same picture from the frame's own cells: every pixel within the bound the view states.
  auto c = Client::attach(AttachOptions{.name = "vol", .client = "test reader"});
  auto frame = c.next_frame(5s);
  REQUIRE(frame);
  REQUIRE(frame->info().step == f.info.step);
  const auto [drawn, off] = against_frame(f, *frame, c.description(), 0);
  CHECK(drawn > 10000);
  CHECK(off == 0);
  // Hovering reads the largest value along the ray, with the bound.
  QString text;
  for (int y = f.image.height() / 2; text.isEmpty() && y < f.image.height(); ++y) text = w.view()->readout({f.image.width() / 2, y});
  CHECK(text.startsWith("largest along the ray = "));
  CHECK(text.contains(" ± "));
}

TEST_CASE("a gateway's brick of every k-th cell: the run writes only those cells for it", "[gui][remote]") {
  // Issue 40: bricks of one stride are all the gateway watches, so it takes frames of every k-th
  // cell (Client::read_every), as a local volume view does, and the run writes only those.
  RuntimeDir rt;
  auto daemon = start_daemon("flow", Backend::host, {"--sim", "lbm3d", "--paused"}, "48x40x32");
  auto gateway = start_gateway();
  auto window = open_remote_mip("flow", "speed", 16);  // 48 cells along x: every 3rd cell
  auto& w = *window;
  REQUIRE(shows_frames(w));
  REQUIRE(wait_for([&] {
    const auto& f = w.view()->last_frame();
    return f.volume && f.link && f.volume->stride == 3 && f.image.size() == w.view()->size();
  }));
  const auto f = w.view()->last_frame();
  CHECK(f.volume->brick_w == 16);
  CHECK(f.volume->brick_h == 14);
  CHECK(f.volume->brick_d == 11);

  // A reader that takes every 3rd cell too receives frames the run wrote packed: the gateway asked.
  auto c = Client::attach(AttachOptions{.name = "flow", .client = "test reader"});
  const auto& d = c.description();
  const auto speed = static_cast<std::size_t>(
      std::find_if(d.fields.begin(), d.fields.end(), [](const auto& x) { return x.name == "speed"; }) - d.fields.begin());
  REQUIRE(speed < d.fields.size());
  c.read_fields({"speed"});
  c.read_every(3);
  std::optional<Frame> packed;
  REQUIRE(wait_for([&] {
    auto next = c.next_frame(200ms);
    if (next && next->every() == 3) packed = std::move(next);
    return packed.has_value();
  }));
  // The brick of a whole frame of the same (paused) step: the picture the viewer drew from the
  // gateway's brick is that one's, within the bound the view states.
  c.read_every(1);
  std::optional<Frame> whole;
  REQUIRE(wait_for([&] {
    auto next = c.next_frame(200ms);
    if (next && next->every() == 1 && next->holds(speed)) whole = std::move(next);
    return whole.has_value();
  }));
  REQUIRE(whole->info().step == f.info.step);
  const auto [drawn, off] = against_frame(f, *whole, d, speed);
  CHECK(drawn > 10000);
  CHECK(off == 0);
}
