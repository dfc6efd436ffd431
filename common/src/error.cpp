#include "cuview/error.hpp"

#include <array>
#include <cstring>
#include <utility>

namespace cuview {
namespace {
constexpr std::array<std::pair<Errc, std::string_view>, 19> kNames{{
    {Errc::bad_message, "bad_message"},
    {Errc::unknown_op, "unknown_op"},
    {Errc::version_mismatch, "version_mismatch"},
    {Errc::unknown_field, "unknown_field"},
    {Errc::missing_field, "missing_field"},
    {Errc::bad_value, "bad_value"},
    {Errc::out_of_range, "out_of_range"},
    {Errc::not_attached, "not_attached"},
    {Errc::stale_session, "stale_session"},
    {Errc::too_many_clients, "too_many_clients"},
    {Errc::no_daemon, "no_daemon"},
    {Errc::daemon_gone, "daemon_gone"},
    {Errc::timeout, "timeout"},
    {Errc::access, "access"},
    {Errc::already_running, "already_running"},
    {Errc::cuda, "cuda"},
    {Errc::system, "system"},
    {Errc::internal, "internal"},
    {Errc::unsupported, "unsupported"},
}};
}  // namespace

std::string_view to_string(Errc code) noexcept {
  for (const auto& [c, name] : kNames) {
    if (c == code) return name;
  }
  return "internal";
}

Errc errc_from_string(std::string_view name) noexcept {
  for (const auto& [c, n] : kNames) {
    if (n == name) return c;
  }
  return Errc::internal;
}

void throw_errno(const std::string& what, int err) {
  throw Error(Errc::system, what + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")");
}

}  // namespace cuview
