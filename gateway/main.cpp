// cuview-gateway: serves this host's publishers to remote viewers (docs/remote.md). One per user
// and host, a process apart from every simulation: a bug or crash in network-facing code never
// reaches one. main() only parses, sets up logging, and decides how the process ends.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cuview/error.hpp"
#include "cuview/runtime_dir.hpp"
#include "gateway.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "web_server.hpp"

namespace {
std::atomic<bool> g_stop{false};

/// The web page's folder: --web-root, else share/cuview/web beside the installed program, else
/// the source tree's (a build run in place).
std::filesystem::path web_root(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "cuview" / "web";
    if (std::filesystem::exists(installed / "index.html")) return installed;
  }
  return CUVIEW_SOURCE_WEB_DIR;
}

/// --http [ADDR:]PORT into the web server's address and port; false when it is neither.
bool parse_http(const std::string& text, cuview::gateway::WebOptions& o) {
  const auto colon = text.rfind(':');
  const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  if (colon != std::string::npos) o.address = text.substr(0, colon);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  const int p = std::stoi(port);
  if (p > 65535) return false;
  o.port = static_cast<std::uint16_t>(p);
  return !o.address.empty();
}
void on_signal(int) { g_stop = true; }

/// --ensure: a gateway runs when this returns (this one started it, detached, if none did).
/// Prints the socket's path, which is what ssh forwards to.
int ensure(const cuview::gateway::GatewayPaths& paths, char* self) {
  using cuview::gateway::GatewayLock;
  if (!GatewayLock::is_held(paths)) {
    const pid_t child = ::fork();
    if (child < 0) {
      std::perror("cuview-gateway --ensure: fork");
      return 1;
    }
    if (child == 0) {
      // A daemon of its own session, its output in the log, detached from the ssh session that
      // asked for it (which ends at once).
      ::setsid();
      if (::fork() != 0) ::_exit(0);
      const int null = ::open("/dev/null", O_RDWR);
      const int log = ::open(paths.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      ::dup2(null, 0);
      ::dup2(log >= 0 ? log : null, 1);
      ::dup2(log >= 0 ? log : null, 2);
      char* args[] = {self, nullptr};
      ::execv("/proc/self/exe", args);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    for (int i = 0; i < 200 && !(GatewayLock::is_held(paths) && std::filesystem::exists(paths.socket)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (!GatewayLock::is_held(paths) || !std::filesystem::exists(paths.socket)) {
      std::fprintf(stderr, "cuview-gateway --ensure: the gateway did not start within 5 s; see %s\n",
                   paths.log.c_str());
      return 1;
    }
  }
  std::printf("%s\n", paths.socket.c_str());
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  ::umask(077);
  cuview::gateway::GatewayOptions o;
  std::string log_level = "info";
  bool ensure_running = false, print_key = false;
  std::string key_file, authorized_file;
  CLI::App app{
      "cuview-gateway: serves this host's cuview publishers to remote viewers, through ssh (its Unix socket in "
      "your 0700 runtime directory) or over TCP with CURVE keys. One per user and host; see docs/remote.md."};
  app.set_version_flag("--version", "cuview-gateway " CUVIEW_VERSION);
  app.add_option("--listen", o.listen,
                 "also serve tcp://HOST:PORT, encrypted and authenticated with CURVE (clients' keys in "
                 "--authorized-keys)");
  app.add_option("--dial", o.dial,
                 "connect out to a viewer listening at tcp://HOST:PORT (cuview-gui --listen), for a host that "
                 "accepts no inbound connections; CURVE as with --listen");
  app.add_option("--key", key_file, "this gateway's CURVE key (made on first use; default ~/.config/cuview/gateway.key)");
  app.add_option("--authorized-keys", authorized_file,
                 "clients' public keys, one per line (default ~/.config/cuview/authorized_keys)");
  app.add_option("--target-fps", o.feed.target_fps,
                 "the frame rate automatic encodings aim for: the finest encoding that reaches it on a client's "
                 "link is chosen")
      ->check(CLI::Range(1.0, 240.0))
      ->capture_default_str();
  int announce_port = 0;
  app.add_flag("--announce{" + std::to_string(cuview::gateway::kDefaultAnnouncePort) + "}", announce_port,
               "announce this gateway on the LAN every second (UDP broadcast to --announce=PORT, default " +
                   std::to_string(cuview::gateway::kDefaultAnnouncePort) +
                   "): its host, user and tcp:// URL, never a publisher's name (docs/remote.md)");
  app.add_option("--announce-port", announce_port, "announce, on this UDP port (as --announce=PORT)")
      ->check(CLI::Range(1, 65535));
  app.add_flag("--ensure", ensure_running,
               "start a gateway in the background unless one runs, then print its socket's path (what "
               "ssh:// clients run over ssh)");
  app.add_flag("--print-key", print_key, "print this gateway's public key (making the key on first use) and exit");
  std::string http, web_dir;
  app.add_option("--http", http,
                 "also serve the web viewer at http://[ADDR:]PORT (ADDR 127.0.0.1 unless given; 0: any free port), "
                 "with a token in the URL it prints; from afar: ssh -L PORT:localhost:PORT (docs/remote.md)");
  app.add_option("--web-root", web_dir, "the web viewer's files (default: the installed share/cuview/web)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (announce_port < 0 || announce_port > 65535) {
    std::fprintf(stderr, "cuview-gateway: --announce=%d is not a UDP port (1..65535)\n", announce_port);
    return 2;
  }
  o.announce_port = static_cast<std::uint16_t>(announce_port);
  cuview::gateway::WebOptions web;
  if (!http.empty() && !parse_http(http, web)) {
    std::fprintf(stderr, "cuview-gateway: --http %s is not [ADDR:]PORT (e.g. 8765 or 127.0.0.1:8765)\n", http.c_str());
    return 2;
  }

  try {
    cuview::ensure_private_dir(cuview::runtime_root());
    cuview::ensure_private_dir(o.paths.dir);
    o.key = key_file.empty() ? cuview::remote::default_gateway_key() : std::filesystem::path(key_file);
    o.authorized =
        authorized_file.empty() ? cuview::remote::default_authorized_keys() : std::filesystem::path(authorized_file);
    if (print_key) {
      std::printf("%s\n", cuview::remote::load_or_create_keypair(o.key, "cuview-gateway").public_key.c_str());
      return 0;
    }
    if (ensure_running) return ensure(o.paths, argv[0]);

    spdlog::set_default_logger(spdlog::stderr_color_mt("cuview-gateway"));
    spdlog::set_level(spdlog::level::from_str(log_level));
    spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
    cuview::gateway::GatewayLock lock(o.paths);
    if (FILE* f = std::fopen(o.paths.pid.c_str(), "w")) {
      std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
      std::fclose(f);
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    cuview::gateway::Gateway gateway(o);
    std::unique_ptr<cuview::gateway::WebServer> page;
    if (!http.empty()) {
      web.root = web_root(web_dir);
      web.token = cuview::gateway::make_web_token();
      page = std::make_unique<cuview::gateway::WebServer>(web);
      // The URL on stdout, alone on its line (what a script or a person copies), and in the log.
      std::printf("%s\n", page->url().c_str());
      std::fflush(stdout);
      spdlog::info("web viewer: open {}", page->url());
    }
    gateway.run(g_stop);
    spdlog::info("gateway: stopping");
    std::error_code ec;
    std::filesystem::remove(o.paths.pid, ec);
    return 0;
  } catch (const cuview::Error& e) {
    std::fprintf(stderr, "cuview-gateway: %s\n", e.what());
    return e.code() == cuview::Errc::already_running ? 3 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-gateway: %s\n", e.what());
    return 1;
  }
}
