// CURVE keys for the remote gateway's tcp:// transport, kept in files the way ssh keeps its keys:
// a secret key file readable by its owner only and a ".pub" beside it, an authorized_keys file on
// the gateway's host (who may connect: gateway/authorized_keys.hpp, the gateway's half) and a
// known_gateways file on the viewer's (which key each gateway had when first seen). Keys are Z85
// text, 40 characters (32 bytes).
//
// File formats (UTF-8 text, one record a line; in the files cuview reads, blank lines and lines
// starting with '#' are skipped, except that a line whose first word is a valid key is a key:
// Z85's alphabet holds '#'):
//   <name>.key        curve-secret <z85 secret> <z85 public> [comment]       mode 0600
//   <name>.key.pub    <z85 public> [comment]                                  mode 0644
//   authorized_keys   <z85 public> [comment]       (the comment names the user in the log)
//   known_gateways    <host>:<port> <z85 public>
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <zmq.hpp>

namespace cuview::remote {

struct CurveKeyPair {
  std::string public_key;  ///< Z85, 40 characters
  std::string secret_key;  ///< Z85, 40 characters
};

/// A fresh key pair from libzmq (libsodium's random source). Throws Error(unsupported) when this
/// libzmq was built without CURVE.
CurveKeyPair generate_keypair();

/// Whether `z85` is a well-formed key: 40 characters that decode to 32 bytes.
[[nodiscard]] bool is_valid_key(std::string_view z85) noexcept;
/// The public key of a Z85 secret key. Throws Error(bad_value) if `secret_z85` is not a key.
std::string public_key_of(std::string_view secret_z85);

/// $XDG_CONFIG_HOME/cuview, or ~/.config/cuview (XDG's rule: a relative XDG_CONFIG_HOME is
/// ignored). Not created here. Throws Error(bad_value) when neither variable nor a home exists.
std::filesystem::path config_dir();
/// The defaults under config_dir().
std::filesystem::path default_client_key();       ///< client.key: the viewer's own key
std::filesystem::path default_gateway_key();      ///< gateway.key: made on the gateway's first start
std::filesystem::path default_authorized_keys();  ///< who may connect to this host's gateway
std::filesystem::path default_known_gateways();   ///< the gateways' keys this viewer has pinned

/// Writes `secret_file` (mode 0600; its bytes are never visible to others, not even while being
/// written) and `secret_file` + ".pub" (0644), creating missing directories with mode 0700.
/// Refuses to replace an existing secret file: Error(bad_value) naming it. Error(system) for
/// failed OS calls, naming the file. A ".pub" already there is replaced.
void write_keypair(const std::filesystem::path& secret_file, const CurveKeyPair& keys, const std::string& comment);

/// Reads a secret key file. Throws Error(access) if the file is readable or writable by group or
/// others (with the chmod to run) or owned by another user; Error(bad_value) naming file:line if a
/// key is malformed or the public key does not belong to the secret one; Error(system) if it
/// cannot be opened.
CurveKeyPair read_keypair(const std::filesystem::path& secret_file);

/// The key in `secret_file`, made (and written with `comment`) when the file does not exist yet,
/// like sshd's host keys. Safe against a second process creating it at the same moment: the loser
/// reads the winner's key. Throws what read_keypair and write_keypair throw.
CurveKeyPair load_or_create_keypair(const std::filesystem::path& secret_file, const std::string& comment);

/// The gateways' keys this client has seen, like ssh's known_hosts: the first key a gateway
/// offers is pinned, a different one later is refused. Not thread-safe.
class KnownGateways {
 public:
  /// A missing file holds no keys. Throws Error(bad_value) naming file:line for a malformed line.
  static KnownGateways read(const std::filesystem::path& file);

  /// The key pinned for "host:port", if any (the first line naming it).
  [[nodiscard]] std::optional<std::string> key_for(std::string_view host_port) const;
  /// The line of the file that pins "host:port" (1-based), if any.
  [[nodiscard]] std::optional<std::size_t> line_for(std::string_view host_port) const;
  /// Appends "host:port key" to the file (made 0600, its directory 0700, when missing). Throws
  /// Error(bad_value) for a malformed host:port or key, Error(system) if the file cannot be written.
  void pin(std::string_view host_port, std::string_view public_z85);
  /// Pinned and equal: nothing. Not pinned: pin(). Pinned and different: Error(access), ssh's
  /// warning, naming the line of the file to remove if the new key is trusted.
  void check_or_pin(std::string_view host_port, std::string_view offered_z85);
  /// The key to use for "host:port": `offered` (from a URL's ?key=) after check_or_pin, or else the
  /// pinned one. Throws Error(access) when neither exists, saying how to learn the key.
  std::string require_key(std::string_view host_port, const std::optional<std::string>& offered);

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  struct Entry {
    std::string host_port, key;
    std::size_t line = 0;
  };
  [[nodiscard]] const Entry* find(std::string_view host_port) const;

  std::filesystem::path path_;
  std::vector<Entry> entries_;
  std::size_t lines_ = 0;  ///< lines in the file, for the line number of a pin
};

/// Makes `socket` a CURVE client of the server whose public key is `server_public`, as `mine`.
/// Call before connect(). Throws Error(bad_value) for a malformed key.
void apply_client_curve(zmq::socket_t& socket, const CurveKeyPair& mine, const std::string& server_public);

/// Reading key files and setting keys on sockets: what the client's files (above) and the
/// gateway's authorized_keys (gateway/authorized_keys.hpp) have in common.
namespace key_file {
/// "file:line", for messages.
std::string at(const std::filesystem::path& file, std::size_t line);
/// The first word of `line` and the rest, with surrounding blanks removed.
std::pair<std::string_view, std::string_view> split_word(std::string_view line);
/// Whether a line holds no record: blank, or a comment. A line whose first word is a valid key
/// is a record even when it starts with '#' (a Z85 character).
bool is_skipped(std::string_view first_word);
/// The lines of a text file; nullopt if it does not exist. Throws Error(system) otherwise.
std::optional<std::vector<std::string>> read_lines(const std::filesystem::path& file);
/// Sets the CURVE key option `option` of `socket` to the Z85 key `z85` (`what` names it in
/// messages). Throws Error(bad_value) for a malformed key, Error(unsupported) without CURVE.
void set_key(zmq::socket_t& socket, int option, std::string_view z85, const std::string& what);
}  // namespace key_file

}  // namespace cuview::remote
