#include "remote/remote_url.hpp"

#include <charconv>

#include "cuview/error.hpp"

namespace cuview::remote {
namespace {
[[noreturn]] void bad(const std::string& url, const std::string& why) {
  throw Error(Errc::bad_value, "remote '" + url + "': " + why +
                                   "; write ssh://[user@]host[:port], tcp://host:port[?key=KEY] unix:/path/to/socket or tcp+listen://addr:port?key=KEY");
}

int parse_port(const std::string& url, std::string_view s) {
  int port = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
  if (ec != std::errc() || p != s.data() + s.size() || port < 1 || port > 65535)
    bad(url, "port '" + std::string(s) + "' is not a number from 1 to 65535");
  return port;
}

bool host_ok(std::string_view h) {
  if (h.empty() || h.front() == '-') return false;  // never an ssh option
  for (char c : h)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  return true;
}
}  // namespace

RemoteUrl RemoteUrl::parse(const std::string& url) {
  RemoteUrl r;
  r.text = url;
  auto starts = [&](std::string_view p) { return url.rfind(p, 0) == 0; };
  if (starts("unix:")) {
    r.scheme = Scheme::unix_socket;
    r.path = url.substr(5);
    if (r.path.rfind("//", 0) == 0) r.path = r.path.substr(2);
    if (r.path.empty() || r.path.front() != '/') bad(url, "a unix socket needs an absolute path");
    return r;
  }
  std::string rest;
  if (starts("ssh://")) {
    r.scheme = Scheme::ssh;
    rest = url.substr(6);
  } else if (starts("tcp://")) {
    r.scheme = Scheme::tcp;
    rest = url.substr(6);
  } else if (starts("tcp+listen://")) {
    r.scheme = Scheme::tcp;
    r.listen = true;
    rest = url.substr(13);
  } else {
    bad(url, "unknown scheme");
  }
  if (r.scheme == Scheme::tcp) {
    if (const auto q = rest.find('?'); q != std::string::npos) {
      const std::string query = rest.substr(q + 1);
      rest.resize(q);
      if (query.rfind("key=", 0) != 0 || query.size() != 4 + 40)
        bad(url, "the only query is key=<the gateway's 40-character public key> (cuview-gateway --print-key)");
      r.key = query.substr(4);
    }
  }
  // A trailing '/' after the host and port (not in the key: Z85 keys may end with one).
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (r.scheme == Scheme::ssh) {
    if (const auto at = rest.find('@'); at != std::string::npos) {
      r.user = rest.substr(0, at);
      rest = rest.substr(at + 1);
      if (!host_ok(r.user)) bad(url, "user name '" + r.user + "' has characters ssh would not take");
    }
  }
  const auto colon = rest.rfind(':');
  if (colon != std::string::npos) {
    r.port = parse_port(url, std::string_view(rest).substr(colon + 1));
    rest.resize(colon);
  }
  r.host = rest;
  if (!host_ok(r.host)) bad(url, "host '" + r.host + "' is empty or has characters a host name cannot have");
  if (r.scheme == Scheme::tcp && r.port == 0) bad(url, "tcp needs a port");
  return r;
}

}  // namespace cuview::remote
