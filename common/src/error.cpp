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

namespace {
/// The length of the well-formed UTF-8 sequence at the start of `s`, or 0 (RFC 3629, table 3-7
/// of the Unicode standard).
std::size_t utf8_sequence(std::string_view s) noexcept {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (s.size() < n) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  return n;
}
}  // namespace

bool is_utf8(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size();) {
    const auto n = utf8_sequence(text.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (const auto n = utf8_sequence(text.substr(i)); n > 0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    static constexpr char kHex[] = "0123456789ABCDEF";
    const auto c = static_cast<unsigned char>(text[i++]);
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

void throw_errno(const std::string& what, int err) {
  throw Error(Errc::system, what + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")");
}

}  // namespace cuview
