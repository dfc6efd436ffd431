#include "authorized_keys.hpp"

#include <sys/stat.h>

#include "cuview/error.hpp"

namespace cuview::remote {
namespace fs = std::filesystem;
using key_file::at;
using key_file::is_skipped;
using key_file::read_lines;
using key_file::set_key;
using key_file::split_word;

AuthorizedKeys AuthorizedKeys::read(const fs::path& file) {
  AuthorizedKeys keys;
  keys.path_ = file;
  keys.stamp_ = stamp_of(file);
  keys.load();
  return keys;
}

AuthorizedKeys::Stamp AuthorizedKeys::stamp_of(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  return {true, static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
          static_cast<std::uintmax_t>(st.st_size), static_cast<std::uintmax_t>(st.st_ino)};
}

void AuthorizedKeys::load() {
  keys_.clear();
  exists_ = false;
  const auto lines = read_lines(path_);
  if (!lines) return;
  std::vector<std::pair<std::string, std::string>> keys;
  for (std::size_t i = 0; i < lines->size(); ++i) {
    const auto [key, comment] = split_word((*lines)[i]);
    if (is_skipped(key)) continue;
    if (!is_valid_key(key))
      throw Error(Errc::bad_value, at(path_, i + 1) + ": expected '<public key: 40 Z85 characters> [comment]', got '" +
                                       std::string(key) + "'");
    keys.emplace_back(std::string(key), std::string(comment));
  }
  keys_ = std::move(keys);
  exists_ = true;
}

std::optional<std::string> AuthorizedKeys::comment_of(std::string_view public_z85) const {
  for (const auto& [key, comment] : keys_)
    if (key == public_z85) return comment;
  return std::nullopt;
}

bool AuthorizedKeys::reload_if_changed() {
  const Stamp now = stamp_of(path_);
  if (now == stamp_) return false;
  stamp_ = now;
  load();
  return true;
}

void apply_server_curve(zmq::socket_t& socket, const CurveKeyPair& server, std::string_view zap_domain) {
  if (zap_domain.empty()) throw Error(Errc::bad_value, "a CURVE server needs a ZAP domain (it must consult ZAP)");
  socket.set(zmq::sockopt::curve_server, 1);
  set_key(socket, ZMQ_CURVE_PUBLICKEY, server.public_key, "server's public key");
  set_key(socket, ZMQ_CURVE_SECRETKEY, server.secret_key, "server's secret key");
  socket.set(zmq::sockopt::zap_domain, std::string(zap_domain));
#ifdef ZMQ_ZAP_ENFORCE_DOMAIN
  constexpr int kZapEnforceDomain = ZMQ_ZAP_ENFORCE_DOMAIN;
#else
  constexpr int kZapEnforceDomain = 93;  // a draft option of libzmq 4.3; Debian's build accepts it
#endif
  // Without it, libzmq lets every client in when no ZAP handler is bound ("Stonehouse"); where this
  // libzmq lacks the option, the ZapHandler bound before bind() is the only guard.
  const int enforce = 1;
  (void)zmq_setsockopt(socket.handle(), kZapEnforceDomain, &enforce, sizeof enforce);
}

}  // namespace cuview::remote
