// Boost.Beast (Debian's libboost-dev, header-only) lives in this file alone: it is slow to compile.
// Under GCC 12 and C++20, Boost 1.74's asio needs <utility> first (std::exchange).
#include <utility>

#include "web_server.hpp"

#include <poll.h>
#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "cuview/error.hpp"
#include "cuview/protocol_json.hpp"
#include "cuview/remote/picture_codec.hpp"
#include "cuview/run.hpp"
#include "cuview/runtime_dir.hpp"
#include "render/colormap.hpp"
#include "render/volume_render.hpp"

namespace cuview::gateway {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

std::string make_web_token() {
  unsigned char bytes[24];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const auto n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Errc::internal, std::string("getrandom (the web page's token): ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string token;
  for (const unsigned char b : bytes) token += hex[b >> 4], token += hex[b & 15];
  return token;
}

namespace {
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

/// A request's answer: status, type, body; and the page's cookie when it was opened with the token.
struct Answer {
  http::status status = http::status::ok;
  std::string type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

Answer refuse(http::status status, std::string why) { return {status, "text/plain; charset=utf-8", std::move(why) + "\n", {}}; }

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> query_of(std::string_view target) {
  std::map<std::string, std::string> q;
  const auto at = target.find('?');
  if (at == std::string_view::npos) return q;
  std::string_view rest = target.substr(at + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const auto pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    q[percent_decoded(pair.substr(0, eq))] = eq == std::string_view::npos ? "" : percent_decoded(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return q;
}

/// The host part of a Host header ("localhost:8765" → "localhost", "[::1]:8765" → "[::1]").
std::string host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') return std::string(host.substr(0, host.find(']') + 1));
  return std::string(host.substr(0, host.find(':')));
}

bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string cookie_token(std::string_view cookies) {
  constexpr std::string_view key = "cuview_token=";
  for (std::size_t at = cookies.find(key); at != std::string_view::npos; at = cookies.find(key, at + 1)) {
    if (at != 0 && cookies[at - 1] != ' ' && cookies[at - 1] != ';') continue;
    const auto begin = at + key.size();
    return std::string(cookies.substr(begin, cookies.find(';', begin) - begin));
  }
  return {};
}

double number(const std::map<std::string, std::string>& q, const std::string& key, double fallback) {
  const auto it = q.find(key);
  if (it == q.end() || it->second.empty()) return fallback;
  try {
    std::size_t used = 0;
    const double v = std::stod(it->second, &used);
    if (used != it->second.size() || !std::isfinite(v)) throw std::invalid_argument(key);
    return v;
  } catch (const std::exception&) {
    throw Error(Errc::bad_value, "'" + key + "' is '" + it->second + "', not a number");
  }
}

using Query = std::map<std::string, std::string>;

std::string text_of(const Query& q, const char* key, const char* fallback) {
  const auto it = q.find(key);
  return it == q.end() || it->second.empty() ? std::string(fallback) : it->second;
}

/// Host, Origin and token: a request that fails one is refused before it is read further.
std::optional<Answer> gate(const Request& req, const std::string& token) {
  const std::string host = host_name(sv(req[http::field::host]));
  if (host != "127.0.0.1" && host != "localhost" && host != "[::1]")
    return refuse(http::status::forbidden,
                  "cuview-gateway answers its page at 127.0.0.1 or localhost only (this request named '" + host +
                      "'); from another machine, forward the port: ssh -L PORT:localhost:PORT THIS-HOST");
  const std::string origin(sv(req[http::field::origin]));
  if (!origin.empty() && origin != "http://" + std::string(sv(req[http::field::host])))
    return refuse(http::status::forbidden,
                  "a page of " + origin + " may not use cuview-gateway's page; open the URL the gateway printed");
  const auto q = query_of(sv(req.target()));
  const auto given = q.count("token") ? q.at("token") : cookie_token(sv(req[http::field::cookie]));
  if (given.empty() || !same_token(given, token))
    return refuse(http::status::forbidden,
                  given.empty() ? "this page needs the token cuview-gateway printed: open the URL it printed "
                                  "(http://127.0.0.1:PORT/?token=...)"
                                : "the token does not match this gateway's: open the URL it printed when it started");
  return std::nullopt;
}

nlohmann::json describe_of(Run& r) {
  auto j = proto::to_json(r.leader().description());
  j["dims"] = r.extent().dims;  // the whole run's grid
  j["parts"] = r.size();
  return j;
}

nlohmann::json stats_of(Run& r) {
  auto j = nlohmann::json::array();
  for (const auto& s : r.stats()) j.push_back(proto::to_json(s));
  return j;
}

/// What cuview-ctl does, through part 0 (which takes a run's steering); a refusal is the
/// publisher's own message (thrown as Error).
nlohmann::json control_of(Run& r, const Query& q) {
  auto& leader = r.leader();
  const auto op = text_of(q, "op", "");
  if (op == "pause") {
    leader.pause();
  } else if (op == "resume") {
    leader.resume();
  } else if (op == "step") {
    leader.step(static_cast<std::uint64_t>(std::clamp(number(q, "n", 1), 1.0, 1e15)));
  } else if (op == "reset") {
    leader.reset();
  } else if (op == "set") {
    std::map<std::string, double> params;
    for (const auto& [k, v] : q)
      if (k != "name" && k != "op" && k != "token" && k != "preset") params[k] = number(q, k, 0);
    leader.set(params, q.count("preset") ? std::optional(q.at("preset")) : std::nullopt);
  } else if (op == "draw") {
    Stroke s;
    s.input = text_of(q, "input", "");
    if (s.input.empty() && !leader.description().inputs.empty()) s.input = leader.description().inputs.front().name;
    s.x = number(q, "x", 0), s.y = number(q, "y", 0), s.radius = number(q, "radius", 3);
    s.value = number(q, "value", 1) != 0 ? 1 : 0;
    if (q.count("z")) s.z = number(q, "z", 0);
    leader.draw(s);
  } else if (op == "checkpoint") {
    return {{"ticket", leader.checkpoint(text_of(q, "path", ""))}};
  } else {
    throw Error(Errc::bad_value, "no control op '" + op +
                                     "': there are pause, resume, step (n), reset, set (NAME=VALUE, preset), draw (input, x, "
                                     "y, z, radius, value), checkpoint (path)");
  }
  return nlohmann::json::object();
}

/// The run's picture of the view `q` asks for: WebP colours, or (`want_values`) its values as
/// little-endian float32, row-major (NaN where the picture shows nothing). `about` gets the
/// picture's step, seq, size, and the range and mean of the values it shows; the headers say the
/// same (X-Cuview-Step, …), numbers in full. `304` when the run's newest picture of the view is
/// still the one of `unless_seq` (nothing is encoded or sent again).
Answer picture_of(Run& r, const Query& q, bool want_values, remote::PictureEncoder& encoder, nlohmann::json& about,
                  std::uint64_t unless_seq = 0) {
  proto::RenderArgs a;
  a.field = text_of(q, "field", "");
  a.mode = text_of(q, "mode", "plane");
  a.width = static_cast<std::uint32_t>(std::clamp(number(q, "width", 640), 1.0, 4096.0));
  a.height = static_cast<std::uint32_t>(std::clamp(number(q, "height", 480), 1.0, 4096.0));
  a.zoom = number(q, "zoom", 1), a.pan_x = number(q, "pan_x", 0), a.pan_y = number(q, "pan_y", 0);
  a.azimuth = number(q, "azimuth", 0), a.elevation = number(q, "elevation", 0);
  a.lo = static_cast<float>(number(q, "lo", 0)), a.hi = static_cast<float>(number(q, "hi", 1));
  a.level = static_cast<float>(number(q, "level", (a.lo + a.hi) / 2));
  a.step = 1;
  a.of_step = static_cast<std::uint64_t>(std::clamp(number(q, "step", 0), 0.0, 1e18));  // the picture of that step, if held
  if (q.count("axis")) a.axis = q.at("axis");
  if (q.count("index")) a.index = static_cast<std::uint32_t>(std::clamp(number(q, "index", 0), 0.0, 4294967295.0));
  const auto map = gui::parse_colormap(text_of(q, "colormap", "viridis"));
  if (!map) throw Error(Errc::bad_value, "no colormap '" + text_of(q, "colormap", "") + "': there are viridis, magma, grayscale, diverging");
  const auto lut = gui::make_lut(*map);
  a.lut.assign(lut.begin(), lut.end());
  const auto dims = r.extent().dims;
  const auto longest = dims.empty() ? 1u : *std::max_element(dims.begin(), dims.end());
  const auto preset = text_of(q, "opacity", "ramp");
  if (preset != "ramp" && preset != "peak" && preset != "flat")
    throw Error(Errc::bad_value, "no opacity preset '" + preset + "': there are ramp, peak, flat");
  const auto curve = gui::opacity_preset(preset.c_str(), static_cast<int>(longest));
  a.opacity.assign(curve.begin(), curve.end());
  // A new view's first picture is cast from the newest frame or the next: asked until it comes.
  proto::RenderResult p;
  for (const auto until = std::chrono::steady_clock::now() + 3s; std::chrono::steady_clock::now() < until;) {
    p = r.render(a);
    if (!p.pending) break;
    std::this_thread::sleep_for(10ms);
  }
  if (p.pending)
    return refuse(http::status::service_unavailable,
                  "'" + r.name() + "' cast no picture of this view within 3 s (paused before its first frame, or its "
                  "budget is spent): ask again");
  if (unless_seq != 0 && p.seq == unless_seq) return {http::status::not_modified, "text/plain", {}, {}};
  const std::size_t n = std::size_t{p.width} * p.height;
  Answer out{http::status::ok, "application/octet-stream", {}, {}};
  about = {{"step", p.step}, {"seq", p.seq}, {"width", p.width}, {"height", p.height}};
  // The same figures as headers (X-Cuview-Step, …; the range as "LO HI"), numbers in full.
  const auto headers = [&] {
    for (const auto& [key, v] : about.items()) {
      std::string name = "X-Cuview-" + key;
      name[9] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[9])));
      out.headers.emplace_back(name, v.is_array() ? v[0].dump() + " " + v[1].dump() : v.dump());
    }
  };
  if (want_values) {
    out.body.assign(p.values.begin(), p.values.end());
    headers();
    return out;
  }
  std::vector<std::uint32_t> argb(n);
  std::vector<float> values(n);
  std::memcpy(argb.data(), p.argb.data(), std::min(p.argb.size(), n * 4));
  std::memcpy(values.data(), p.values.data(), std::min(p.values.size(), n * 4));
  float lo = INFINITY, hi = -INFINITY;
  double sum = 0;
  std::size_t count = 0;
  for (const float v : values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v), sum += v, ++count;
  out.type = "image/webp";
  encoder.encode(remote::PictureCodec::webp, argb, p.width, p.height, out.body);
  if (count > 0) about["range"] = {lo, hi}, about["mean"] = sum / static_cast<double>(count);
  headers();
  return out;
}
}  // namespace

struct WebServer::Impl {
  WebOptions o;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::thread thread;
  std::atomic<bool> stop{false};
  std::string page;
  /// The runs the HTTP API (scripts, curl) asks about, each over a control-only connection (no
  /// CUDA, no ring), by name, and when it was last asked about: a run not asked about for kIdle is
  /// let go, so that the publisher sees its client leave and stops casting its views.
  struct Watched {
    std::unique_ptr<Run> run;
    std::chrono::steady_clock::time_point used;
  };
  std::map<std::string, Watched> runs;
  static constexpr auto kIdle = std::chrono::seconds(5);
  remote::PictureEncoder encoder;
  /// The pages' live connections (/api/live): each a WebSocket on a thread and io_context of its
  /// own, holding its own connection to its run for as long as the tab is open.
  struct Live {
    asio::io_context ioc;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::vector<std::unique_ptr<Live>> live;
  static constexpr std::size_t kMaxLive = 32;

  void serve();
  void handle(tcp::socket socket, std::unique_ptr<Live> own);
  Answer answer(const Request& req);
  Answer api(std::string_view path, const Query& q);
  Run& run(const std::string& name);
  void reap_live(bool all);
};

WebServer::WebServer(WebOptions options) : impl_(std::make_unique<Impl>()) {
  auto& im = *impl_;
  im.o = std::move(options);
  std::ifstream in(im.o.root / "index.html", std::ios::binary);
  if (!in)
    throw Error(Errc::bad_value, "cuview-gateway --http: the web page " + (im.o.root / "index.html").string() +
                                     " is missing; reinstall cuview, or give its folder with --web-root");
  std::stringstream page;
  page << in.rdbuf();
  im.page = page.str();
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(im.o.address, ec);
  if (ec)
    throw Error(Errc::bad_value, "cuview-gateway --http: '" + im.o.address + "' is not an IP address; give ADDR:PORT, "
                                     "e.g. 127.0.0.1:8765");
  const tcp::endpoint at(address, im.o.port);
  im.acceptor.open(at.protocol(), ec);
  if (!ec) im.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) im.acceptor.bind(at, ec);
  if (!ec) im.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw Error(Errc::bad_value, "cuview-gateway --http: cannot listen on " + im.o.address + ":" +
                                     std::to_string(im.o.port) + ": " + ec.message() + "; pick another port");
  im.thread = std::thread([&im] { im.serve(); });
}

WebServer::~WebServer() {
  auto& im = *impl_;
  im.stop = true;
  // A connection of our own wakes the accept.
  boost::system::error_code ec;
  tcp::socket wake(im.ioc);
  wake.connect(tcp::endpoint(im.acceptor.local_endpoint(ec).address(), port()), ec);
  if (im.thread.joinable()) im.thread.join();
  im.reap_live(true);
}

std::uint16_t WebServer::port() const noexcept {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

std::string WebServer::url() const {
  const std::string host = impl_->o.address == "0.0.0.0" || impl_->o.address == "127.0.0.1" ? "127.0.0.1" : impl_->o.address;
  return "http://" + host + ":" + std::to_string(port()) + "/?token=" + impl_->o.token;
}

void WebServer::Impl::reap_live(bool all) {
  for (auto& l : live)
    if (all) l->ioc.stop();
  std::erase_if(live, [&](const std::unique_ptr<Live>& l) {
    if (!all && !l->done) return false;
    if (l->thread.joinable()) l->thread.join();
    return true;
  });
}

void WebServer::Impl::serve() {
  while (!stop) {
    // Waits for a connection a second at a time, letting go of the runs no page asks about and
    // of the live connections that ended.
    pollfd ready{acceptor.native_handle(), POLLIN, 0};
    const int n = ::poll(&ready, 1, 1000);
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(runs, [&](const auto& r) { return now - r.second.used > kIdle; });
    reap_live(false);
    if (stop) break;
    if (n <= 0) continue;
    // Each connection on an io_context of its own: a WebSocket keeps it, on its own thread.
    auto own = std::make_unique<Live>();
    tcp::socket socket(own->ioc);
    boost::system::error_code ec;
    acceptor.accept(socket, ec);
    if (stop) break;
    if (ec) continue;
    try {
      handle(std::move(socket), std::move(own));
    } catch (const std::exception& e) {
      spdlog::warn("web: a request failed: {}", e.what());
    }
  }
}

namespace {
/// One page's live connection (GET /api/live?name=NAME, upgraded to a WebSocket): the run's
/// description when it opens, its figures every half second (the page's plots), and an answer to
/// each message the page sends. Everything on one thread (the connection's own): reads, writes
/// and the timer are asynchronous; a picture is cast while they wait. docs/remote.md "The web
/// viewer" says what travels.
class LiveSession {
 public:
  LiveSession(asio::io_context& ioc, websocket::stream<beast::tcp_stream>& ws, std::unique_ptr<Run> run)
      : ioc_(ioc), ws_(ws), run_(std::move(run)), tick_(ioc) {}

  void start() {
    send_text({{"describe", describe_of(*run_)}});
    read();
    tick();
  }

 private:
  struct Out {
    bool binary;
    std::string data;
  };

  void read() {
    ws_.async_read(in_, [this](boost::system::error_code ec, std::size_t) {
      if (ec) return end();  // closed, broken, or too large (Beast has answered 1009 and closes)
      const std::string message = beast::buffers_to_string(in_.data());
      in_.consume(in_.size());
      const bool binary = ws_.got_binary();
      on_message(message, binary);
      if (!ended_) read();
    });
  }

  void on_message(const std::string& text, bool binary) {
    nlohmann::json id = nullptr;
    try {
      if (binary) throw Error(Errc::bad_message, "the page sends text messages (JSON), not binary ones");
      auto m = nlohmann::json::parse(text, nullptr, false);
      if (m.is_discarded() || !m.is_object())
        throw Error(Errc::bad_message, "a message is one JSON object, e.g. {\"view\": {...}, \"id\": 1}; this one is not");
      if (m.contains("id")) id = m["id"];
      if (m.contains("view") || m.contains("values")) {
        const bool values = m.contains("values");
        const auto q = query_of(m[values ? "values" : "view"]);
        // The same view asked again: a new picture when the run cast one, else a word that it has not.
        const bool again = !values && q == last_view_;
        nlohmann::json head;
        auto a = picture_of(*run_, q, values, encoder_, head, again ? last_seq_ : 0);
        if (a.status == http::status::not_modified) return send_text({{"unchanged", true}, {"reply", id}});
        if (a.status != http::status::ok) throw Error(Errc::timeout, a.body);
        head["kind"] = values ? "values" : "picture", head["id"] = id;
        if (!values) last_view_ = q, last_seq_ = head.value("seq", std::uint64_t{0});
        const auto colormap = text_of(q, "colormap", "viridis");
        if (!values && colormap != colormap_) {  // the colour bar's colours, once a colormap
          colormap_ = colormap;
          const auto lut = gui::make_lut(*gui::parse_colormap(colormap));
          head["colormap"] = colormap;
          head["lut"] = std::vector<std::uint32_t>(lut.begin(), lut.end());
        }
        const std::string h = head.dump();
        std::string msg(4, '\0');
        const auto len = static_cast<std::uint32_t>(h.size());
        for (int i = 0; i < 4; ++i) msg[static_cast<std::size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xff);
        msg += h;
        msg += a.body;
        send({true, std::move(msg)});
      } else if (m.contains("control")) {
        auto reply = control_of(*run_, query_of(m["control"]));
        reply["reply"] = id;
        send_text(reply);
      } else {
        throw Error(Errc::bad_message, "a message holds one of view, values or control (docs/remote.md); this one holds "
                                       "none");
      }
    } catch (const Error& e) {
      send_text({{"error", e.what()}, {"reply", id}});
      if (e.code() == Errc::daemon_gone || e.code() == Errc::no_daemon) end_after_sending();
    } catch (const std::exception& e) {
      send_text({{"error", std::string("the message was not understood: ") + e.what()}, {"reply", id}});
    }
  }

  /// A message's object as the HTTP API's query: strings as they are, numbers as numbers.
  static Query query_of(const nlohmann::json& o) {
    if (!o.is_object()) throw Error(Errc::bad_message, "view, values and control each hold an object of names and values");
    Query q;
    for (const auto& [k, v] : o.items()) {
      if (v.is_string()) q[k] = v.get<std::string>();
      else if (v.is_number() || v.is_boolean()) q[k] = v.is_boolean() ? (v.get<bool>() ? "1" : "0") : v.dump();
      else if (!v.is_null()) throw Error(Errc::bad_message, "'" + k + "' holds " + std::string(v.type_name()) + ", not a number or a string");
    }
    return q;
  }

  void tick() {
    tick_.expires_after(500ms);
    tick_.async_wait([this](boost::system::error_code ec) {
      if (ec || ended_) return;
      // The run's figures for the page's plots; skipped while the link still carries earlier ones.
      if (out_.size() < 4) {
        try {
          send_text({{"stats", stats_of(*run_)}});
        } catch (const Error& e) {
          send_text({{"error", e.what()}, {"gone", true}});
          return end_after_sending();
        }
      }
      tick();
    });
  }

  /// Text as JSON; bytes that are not UTF-8 (in a message echoed back) become U+FFFD.
  void send_text(const nlohmann::json& j) {
    send({false, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  }

  void send(Out out) {
    if (ended_) return;
    out_.push_back(std::move(out));
    if (!writing_) write();
  }

  void write() {
    writing_ = true;
    ws_.binary(out_.front().binary);
    ws_.async_write(asio::buffer(out_.front().data), [this](boost::system::error_code ec, std::size_t) {
      if (ec) return end();
      out_.pop_front();
      writing_ = false;
      if (!out_.empty()) write();
      else if (closing_) close();
    });
  }

  /// The run went: what is queued is sent, then the connection closes (the page opens it again).
  void end_after_sending() {
    closing_ = true;
    tick_.cancel();
    if (!writing_) close();
  }

  void close() {
    ended_ = true;
    ws_.async_close(websocket::close_code::going_away, [this](boost::system::error_code) { end(); });
  }

  /// The connection is over: whatever the stream still waits for (its own timers too) is dropped
  /// with it, and the thread lets go of the run at once.
  void end() {
    ended_ = true;
    tick_.cancel();
    boost::system::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
    ioc_.stop();
  }

  asio::io_context& ioc_;
  websocket::stream<beast::tcp_stream>& ws_;
  std::unique_ptr<Run> run_;
  asio::steady_timer tick_;
  beast::flat_buffer in_;
  std::deque<Out> out_;
  bool writing_ = false, closing_ = false, ended_ = false;
  remote::PictureEncoder encoder_;
  std::string colormap_;
  Query last_view_;  ///< the view of the last picture sent, and its seq
  std::uint64_t last_seq_ = 0;
};

/// The live connection's thread: the handshake, the run opened, then the session until either
/// side ends it.
void live_connection(asio::io_context& ioc, beast::tcp_stream stream, const std::string& bytes, std::string name) {
  websocket::stream<beast::tcp_stream> ws(std::move(stream));
  beast::get_lowest_layer(ws).expires_never();
  ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws.read_message_max(64 * 1024);  // the page's messages are small; a larger one is refused (1009)
  ws.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& res) { res.set(http::field::server, "cuview-gateway"); }));
  boost::system::error_code ec;
  ws.accept(asio::buffer(bytes), ec);
  if (ec) return;
  std::unique_ptr<Run> run;
  try {
    run = open({name, {}, "cuview-gateway (web page)", Import::control_only, 1500ms});
  } catch (const Error& e) {
    ws.text(true);
    ws.write(asio::buffer(nlohmann::json{{"error", e.what()}, {"gone", true}}.dump()), ec);
    ws.close(websocket::close_code::going_away, ec);
    return;
  }
  LiveSession session(ioc, ws, std::move(run));
  session.start();
  try {
    ioc.run();
  } catch (const std::exception& e) {
    spdlog::warn("web: the live connection to '{}' failed: {}", name, e.what());
  }
}
}  // namespace

void WebServer::Impl::handle(tcp::socket socket, std::unique_ptr<Live> own) {
  // One request a connection, each read within 5 s: a silent or slow peer holds this thread no
  // longer than that. A WebSocket (/api/live) goes on to a thread of its own.
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(5s);
  beast::flat_buffer buffer;
  http::request_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(64 * 1024);
  boost::system::error_code ec;
  http::read(stream, buffer, parser, ec);
  Answer a;
  if (ec == http::error::body_limit || ec == http::error::header_limit) {
    a = refuse(http::status::payload_too_large, "the request is larger than the page ever sends (" + ec.message() + ")");
  } else if (ec) {
    return;  // not HTTP, or the peer went: nothing to answer
  } else if (websocket::is_upgrade(parser.get())) {
    const auto& req = parser.get();
    const std::string_view target = sv(req.target());
    const auto q = query_of(target);
    if (auto refused = gate(req, o.token)) a = std::move(*refused);
    else if (target.substr(0, target.find('?')) != "/api/live")
      a = refuse(http::status::not_found, "the page's live connection is /api/live?name=NAME");
    else if (text_of(q, "name", "").empty())
      a = refuse(http::status::bad_request, "give the run's name: /api/live?name=NAME");
    else if (live.size() >= kMaxLive)
      a = refuse(http::status::service_unavailable,
                 "this gateway holds " + std::to_string(kMaxLive) + " live pages already: close one");
    else {
      stream.expires_never();
      // The request as read, and whatever followed it (a client may send its first frame at once).
      std::ostringstream request;
      request << req;
      auto bytes = request.str() + beast::buffers_to_string(buffer.data());
      auto* l = own.get();
      l->thread = std::thread([l, stream = std::move(stream), bytes = std::move(bytes), name = q.at("name")]() mutable {
        live_connection(l->ioc, std::move(stream), bytes, std::move(name));
        l->done = true;
      });
      live.push_back(std::move(own));
      return;
    }
  } else {
    a = answer(parser.get());
  }
  Response res{a.status, 11};
  res.set(http::field::server, "cuview-gateway");
  res.set(http::field::content_type, a.type);
  res.set(http::field::cache_control, "no-store");
  res.set(http::field::connection, "close");
  for (const auto& [k, v] : a.headers) res.set(k, v);
  res.body() = std::move(a.body);
  res.prepare_payload();
  stream.expires_after(30s);
  http::write(stream, res, ec);
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

Answer WebServer::Impl::answer(const Request& req) {
  if (auto refused = gate(req, o.token)) return std::move(*refused);
  const std::string_view target = sv(req.target());
  const auto q = query_of(target);
  const std::string_view path = target.substr(0, target.find('?'));
  // Reading is GET; steering is POST (/api/control), which a page of another site cannot send
  // with the cookie (SameSite=Strict) nor past the Origin check.
  const bool control = path == "/api/control";
  if (req.method() != (control ? http::verb::post : http::verb::get))
    return refuse(http::status::method_not_allowed, control ? "steering is POST /api/control" : "only GET is served here");
  if (path == "/" || path == "/index.html") {
    Answer a{http::status::ok, "text/html; charset=utf-8", page, {}};
    a.headers.emplace_back("Set-Cookie", "cuview_token=" + o.token + "; HttpOnly; SameSite=Strict; Path=/");
    return a;
  }
  if (path.substr(0, 5) == "/api/") {
    try {
      return api(path.substr(5), q);
    } catch (const Error& e) {
      const auto status = e.code() == Errc::no_daemon || e.code() == Errc::daemon_gone ? http::status::not_found
                                                                                         : http::status::bad_request;
      return refuse(status, e.what());
    }
  }
  return refuse(http::status::not_found, "no page '" + std::string(path) + "' here: open / with the token");
}

Run& WebServer::Impl::run(const std::string& name) {
  auto it = runs.find(name);
  if (it != runs.end() && !it->second.run->alive()) runs.erase(it), it = runs.end();
  if (it == runs.end())
    it = runs.emplace(name, Watched{open({name, {}, "cuview-gateway (web page)", Import::control_only, 1500ms}), {}}).first;
  it->second.used = std::chrono::steady_clock::now();
  return *it->second.run;
}

Answer WebServer::Impl::api(std::string_view path, const Query& q) {
  const auto name = [&] {
    const auto n = text_of(q, "name", "");
    if (n.empty()) throw Error(Errc::bad_value, "give the run's name: ?name=NAME");
    return n;
  };
  if (path == "runs") {
    nlohmann::json j;
    j["runs"] = nlohmann::json::array();
    for (const auto& r : list_instances()) j["runs"].push_back({{"name", r.name}, {"parts", std::max(1u, r.parts)}});
    return {http::status::ok, "application/json", j.dump(), {}};
  }
  if (path == "describe") return {http::status::ok, "application/json", describe_of(run(name())).dump(), {}};
  if (path == "stats") return {http::status::ok, "application/json", stats_of(run(name())).dump(), {}};
  if (path == "picture" || path == "values") {
    nlohmann::json about;  // said in the headers
    return picture_of(run(name()), q, path == "values", encoder, about);
  }
  if (path == "control") return {http::status::ok, "application/json", control_of(run(name()), q).dump(), {}};
  return refuse(http::status::not_found,
                "no API '" + std::string(path) + "': there are runs, describe, stats, picture, values, control, live");
}

}  // namespace cuview::gateway
