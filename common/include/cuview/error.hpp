// Errors that cross the cuview library boundary and the wire.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace cuview {

/// What went wrong, in terms a caller can act on. The names travel on the wire as strings
/// (`to_string`), so never renumber or rename one: add new ones at the end.
enum class Errc {
  bad_message,       ///< not decodable: not msgpack, truncated, not a map, wrong types
  unknown_op,        ///< the `op` is not one the daemon knows
  version_mismatch,  ///< client and daemon speak different protocol versions
  unknown_field,     ///< a map holds a key the message does not define
  missing_field,     ///< a required key is absent
  bad_value,         ///< a value of the right type that makes no sense (unknown parameter, preset)
  out_of_range,      ///< a number outside its documented range
  not_attached,      ///< the request needs a `hello` first
  stale_session,     ///< the session id is from an earlier daemon run
  too_many_clients,  ///< the lease or peer table is full
  no_daemon,         ///< no daemon runs under that name
  daemon_gone,       ///< the daemon exited or restarted while attached
  timeout,           ///< no answer in time
  access,            ///< a runtime directory or file with wrong owner or mode
  already_running,   ///< a daemon with that name already holds the lock
  cuda,              ///< a CUDA call failed
  system,            ///< an operating-system call failed
  internal,          ///< a bug in cuview: please report it
  unsupported,       ///< asked for a mechanism this backend, GPU or driver does not offer
};

std::string_view to_string(Errc code) noexcept;
/// Inverse of to_string; unknown names map to Errc::internal.
Errc errc_from_string(std::string_view name) noexcept;

/// The one exception type cuview's libraries throw. `what()` is a full sentence naming the
/// object that failed and what to do about it.
class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

/// `text` as valid UTF-8: every byte that does not belong to a well-formed UTF-8 sequence
/// (overlong forms, surrogates and code points above U+10FFFF included) is written as `\xNN`.
/// For a person reading an error, not a round trip: messages that quote what a peer sent pass
/// through it before they go on the wire, where a strict MessagePack decoder checks strings.
[[nodiscard]] std::string utf8_escaped(std::string_view text);
/// Whether `text` is well-formed UTF-8 (as utf8_escaped would leave it unchanged).
[[nodiscard]] bool is_utf8(std::string_view text) noexcept;

/// Throws Error(Errc::system) for a failed OS call: "<what>: <strerror(errno)> (errno N)".
[[noreturn]] void throw_errno(const std::string& what, int err);

}  // namespace cuview
