// The gateway's half of CURVE keys (cuview/remote/curve_keys.hpp has the files both sides keep):
// who may connect, from authorized_keys, and a socket made a CURVE server that asks ZAP
// (zap_handler.hpp) about every client.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "cuview/remote/curve_keys.hpp"

namespace cuview::remote {

/// The public keys allowed to connect, from an authorized_keys file. A missing file holds no keys
/// (exists() tells the caller, who should say so: everyone is refused). Not thread-safe: the
/// gateway keeps it on its ZAP handler's thread.
class AuthorizedKeys {
 public:
  /// Throws Error(bad_value) naming file:line for a malformed line, Error(system) if the file
  /// exists but cannot be read.
  static AuthorizedKeys read(const std::filesystem::path& file);

  /// The comment of an authorised key ("" when the line has none), or nullopt if not authorised.
  [[nodiscard]] std::optional<std::string> comment_of(std::string_view public_z85) const;
  [[nodiscard]] std::size_t size() const noexcept { return keys_.size(); }
  [[nodiscard]] bool exists() const noexcept { return exists_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// Reads the file again if its modification time, size or inode changed (or it appeared or
  /// went away) since the last read; true if it did. If the new contents are malformed, every key
  /// is dropped (everyone is refused until the file is fixed: failing closed) and Error(bad_value)
  /// is thrown, once per change.
  bool reload_if_changed();

 private:
  struct Stamp {
    bool exists = false;
    std::int64_t mtime_ns = 0;
    std::uintmax_t size = 0, inode = 0;
    bool operator==(const Stamp&) const = default;
  };
  static Stamp stamp_of(const std::filesystem::path& file);
  void load();

  std::filesystem::path path_;
  Stamp stamp_;
  bool exists_ = false;
  std::vector<std::pair<std::string, std::string>> keys_;  ///< (public key, comment), file order
};


/// Makes `socket` a CURVE server with `server`'s keys that asks ZAP about every client
/// (ZMQ_ZAP_DOMAIN `zap_domain`) and, where libzmq offers ZMQ_ZAP_ENFORCE_DOMAIN, refuses every
/// client while no ZAP handler is bound. Construct the ZapHandler before bind(). Throws
/// Error(bad_value) for a malformed key or an empty domain.
void apply_server_curve(zmq::socket_t& socket, const CurveKeyPair& server, std::string_view zap_domain);

}  // namespace cuview::remote
