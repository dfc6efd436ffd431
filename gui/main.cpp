// cuview-gui: main() only parses the command line and shows the window.
//
// The command line is parsed (CLI11, like cuview-compute and cuview-ctl) before QApplication
// exists, for two reasons: `--help` and `--version` must work with no display, and Qt's own
// argument parsing must never see our options. QGuiApplication treats `--name` as its X11
// option `-name` (the WM_CLASS resource name) and removes it, with its value, from argv on the
// xcb platform: that is why `cuview-gui --name run1` once opened detached in a real window and
// attached only offscreen. Qt gets argv[0] and only the arguments we do not know
// (`-platform offscreen`, `-style fusion`, ...).
#include <CLI/CLI.hpp>
#include <QApplication>
#include <QIcon>
#include <QSettings>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "main_window.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/probe.hpp"
#endif

int main(int argc, char** argv) {
  cuview::gui::ViewerOptions o;
  std::string name, screenshot, colormap;
  bool attach_last = false, whole_window = false;
  CLI::App cli{
      "cuview-gui: watch a running cuview-compute simulation live; attach, detach and steer it.\n"
      "Without --name or --attach it opens with the list of running daemons: pick one, click Attach.\n"
      "Arguments it does not know go to Qt (e.g. -platform offscreen)."};
  cli.set_version_flag("--version", "cuview-gui " CUVIEW_VERSION);
  cli.allow_extras();
  cli.add_option("-n,--name", name, "attach to the daemon NAME at start");
  std::vector<std::string> remotes;
  cli.add_option("--remote", remotes,
                 "reach daemons through the cuview-gateway at URL: ssh://[user@]host[:port], tcp://host:port?key=KEY "
                 "or unix:PATH (docs/remote.md); the Daemons list shows its publishers. A run of parts over several "
                 "hosts: give --remote once per host");
  std::string listen;
  cli.add_option("--listen", listen,
                 "wait at tcp://ADDR:PORT?key=GATEWAYKEY for a gateway that dials out (cuview-gateway --dial), for "
                 "a GPU host that accepts no inbound connections; CURVE keys as for tcp:// (docs/remote.md)")
      ->excludes("--remote");
  cli.add_option("--announce-port", o.announce_port, "the UDP port gateways announce themselves on (LAN discovery)")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cli.add_flag("--attach", attach_last, "attach to the daemon used last (or 'default')");
  cli.add_option("--screenshot", screenshot,
                 "headless: save a PNG of the view of --name (or 'default') to PATH after --frames frames, then "
                 "exit (0 = saved); only these options count, never what the window remembers");
  cli.add_option("--frames", o.frames, "frames to wait for before --screenshot")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  cli.add_option("--timeout", o.timeout_s, "headless: seconds to wait for the frames")
      ->check(CLI::Range(1, 86'400))
      ->capture_default_str();
  cli.add_option("--colormap", colormap,
                 "viridis, magma, grayscale or diverging, for every field (default: the one chosen last, or "
                 "viridis; diverging around 0 for a field of both signs)")
      ->check(CLI::IsMember({"viridis", "magma", "grayscale", "diverging"}));
  std::string field;
  cli.add_option("--field", field,
                 "the field to show, or a particle set as \"SET (points by ATTRIBUTE)\" (\"SET (points)\": its first)");
  bool three_planes = false;
  cli.add_flag("--three-planes", three_planes,
               "a volume's planes across z, x and y side by side, through the cell --plane's plane and the middles "
               "of the other axes place");
  std::string plane;
  cli.add_option("--plane", plane, "a volume's plane to show first, as AXIS=INDEX (x, y or z; for example z=10)")
      ->check([](const std::string& p) {
        const auto eq = p.find('=');
        const bool ok = eq == 1 && std::string("xyz").find(p[0]) != std::string::npos && p.size() > 2 &&
                        p.find_first_not_of("0123456789", 2) == std::string::npos;
        return ok ? std::string() : "'" + p + "' is not AXIS=INDEX (x, y or z, then a cell index: z=10)";
      });
  std::string volume, opacity;
  cli.add_option("--volume", volume,
                 "see a volume whole: mip (the largest value along each ray), emission (colour and opacity along it) or "
                 "isosurface (the surface at --level); the Volume dock changes it")
      ->check(CLI::IsMember({"planes", "mip", "emission", "isosurface"}));
  std::optional<double> level;
  cli.add_option("--level", level, "the isosurface's level (default 0.5)");
  std::optional<int> brick;
  cli.add_option("--brick", brick,
                 "the volume's brick: its longest axis in cells (default 128); a larger volume is taken every k-th cell, "
                 "and a simulation that can writes only those")
      ->check(CLI::Range(8, 1024));
  cli.add_option("--opacity", opacity,
                 "emission: the opacity preset, auto (the values most cells hold clear, rarer ones opaque, as shells at five values), ramp, "
                 "peak or flat (default auto)")
      ->check(CLI::IsMember({"auto", "ramp", "peak", "flat"}));
  std::string camera;
  cli.add_option("--camera", camera,
                 "the volume's camera at start, as AZIMUTH,ELEVATION[,ZOOM] in degrees (0,0: looking along +z, y down; "
                 "the mouse moves it)")
      ->check([](const std::string& c) {
        double a = 0, e = 0, z = 1;
        char tail = 0;
        const int n = std::sscanf(c.c_str(), "%lf,%lf,%lf%c", &a, &e, &z, &tail);
        return (n == 2 || n == 3) && z > 0 ? std::string()
                                          : "'" + c + "' is not AZIMUTH,ELEVATION[,ZOOM] (30,20 or 30,20,1.5)";
      });
  cli.add_flag("--screenshot-window", whole_window, "screenshots show the whole window, not only the view");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; a mistake on the command line with 2, as usual.
    return cli.exit(e) == 0 ? 0 : 2;
  }

  std::vector<std::string> qt_args{argv[0]};
  for (const auto& extra : cli.remaining()) {
    if (extra.rfind("--", 0) == 0) {
      std::fprintf(stderr,
                   "cuview-gui: unknown option %s (see cuview-gui --help; Qt's own options take one dash, "
                   "e.g. -platform offscreen)\n",
                   extra.c_str());
      return 2;
    }
    qt_args.push_back(extra);
  }
  // Headless screenshots never need a display, whatever DISPLAY says (it may name an X server
  // that is gone): offscreen, unless a platform was chosen on purpose.
  const std::string platform = cuview::gui::chosen_platform(qt_args);
  if (!screenshot.empty() && platform.empty()) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  auto display = cuview::gui::check_display(cuview::gui::chosen_platform(qt_args));
  if (display.problem) {
    std::fprintf(stderr, "%s\n", display.problem->c_str());
    return 1;
  }
  std::vector<char*> qt_argv;
  for (auto& a : qt_args) qt_argv.push_back(a.data());
  qt_argv.push_back(nullptr);
  int qt_argc = static_cast<int>(qt_args.size());

  // The CUDA driver loads while Qt connects to the display and the window is built; the viewer's
  // worker then makes its context on the daemon's GPU only (no context on any other GPU).
#ifdef CUVIEW_HAVE_CUDA
  std::jthread driver(cuview::cuda::init_driver);
#endif
  cuview::gui::quiet_platform_noise();
  QApplication app(qt_argc, qt_argv.data());
  display.connection.reset();  // Qt has its own connection now
  QApplication::setOrganizationName("cuview");
  QApplication::setApplicationName("cuview-gui");
  QApplication::setApplicationVersion(CUVIEW_VERSION);
  QApplication::setDesktopFileName("cuview-gui");  // matches resources/cuview-gui.desktop
  QApplication::setWindowIcon(cuview::gui::application_icon());

  o.name = QString::fromStdString(name);
  if (!listen.empty()) remotes = {listen.rfind("tcp://", 0) == 0 ? "tcp+listen://" + listen.substr(6) : listen};
  QStringList urls;
  for (const auto& r : remotes) urls << QString::fromStdString(r);
  o.remote = urls.join(' ');
  o.screenshot = QString::fromStdString(screenshot);
  if (o.name.isEmpty() && attach_last) o.name = QSettings().value("daemon/name", "default").toString();
  if (o.name.isEmpty() && o.headless()) o.name = "default";
  o.colormap = QString::fromStdString(colormap);
  o.field = QString::fromStdString(field);
  o.plane = QString::fromStdString(plane);
  o.three_planes = three_planes;
  o.volume = QString::fromStdString(volume);
  o.level = level;
  o.brick = brick;
  o.opacity = QString::fromStdString(opacity);
  if (!camera.empty()) {
    cuview::gui::VolumeCamera c;
    double z = 1;
    (void)std::sscanf(camera.c_str(), "%lf,%lf,%lf", &c.azimuth_deg, &c.elevation_deg, &z);
    c.zoom = z;
    o.camera = c;
  }
  o.whole_window = whole_window;

  cuview::gui::MainWindow window(o);
  QObject::connect(&window, &cuview::gui::MainWindow::finished, &app, &QApplication::exit, Qt::QueuedConnection);
  window.show();
  return QApplication::exec();
}
