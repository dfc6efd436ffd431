// One turn of a run decomposed over ranks: what rank 0 decided from its clients' requests, and
// its bytes as rank 0 broadcasts them (cuview/mpi_parts.hpp's next_turn, which cuview-compute's
// own decomposed runs call too). No MPI here: a program that only holds a Turn, and the tests of
// the codec, need no <mpi.h>. Header-only, as mpi_parts.hpp is.
//
// The bytes: fixed-size fields in this machine's byte order (every rank of one job runs the same
// program on the same architecture), strings and lists prefixed by their length:
//   u8 version (kTurnVersion) · u8 flags (1 reset, 2 paused, 4 stop, 8 checkpoint) · u64 steps ·
//   u32 count, then per parameter: string name, f64 value ·
//   u32 count, then per stroke: string input, f64 x, f64 y, f64 radius, u8 has_z, f64 z, i32 value
// where a string is u32 length then its bytes. Nothing may follow the last stroke.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "cuview/error.hpp"
#include "cuview/publisher.hpp"

namespace cuview::mpi {

/// What every rank does next, as rank 0 decided it.
struct Turn {
  /// Rank 0's poll(): `params` (every parameter, when any changed), `reset`, `strokes` (in global
  /// grid coordinates: each rank applies the part that falls in its block) and `shutdown` (=
  /// stop). The same on every rank, except `checkpoints` and `reader_arrived`, which are rank 0's
  /// own and empty/false elsewhere.
  Requests requests;
  std::uint64_t steps =
      0;  ///< steps every rank takes now: steps_wanted while running, 0 or a `step` request's while paused
  bool paused = false;  ///< rank 0 is paused (`cuview-ctl pause`)
  bool stop = false;    ///< end the run: rank 0's `stop` argument or a `shutdown` request
  /// Every rank checkpoints this turn's step before stepping: rank 0 had `checkpoint` requests
  /// (their tickets in its requests.checkpoints) or said one was due. Never with `stop`.
  bool checkpoint = false;
};

/// The version of the bytes below; a rank that reads another refuses the turn.
inline constexpr std::uint8_t kTurnVersion = 3;

namespace detail {

class TurnWriter {
 public:
  template <typename T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    bytes_.append(p, sizeof v);
  }
  void put_string(const std::string& s) {
    put(static_cast<std::uint32_t>(s.size()));
    bytes_ += s;
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

/// Reads a turn's fields in order; each read names its field, so that a turn that does not decode
/// is refused naming the field where it went wrong. Never allocates more than the bytes hold.
class TurnReader {
 public:
  TurnReader(std::string_view bytes, std::string_view doing) : bytes_(bytes), doing_(doing) {}
  template <typename T>
  T get(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string get_string(const std::string& field) {
    const auto n = get<std::uint32_t>(field + "'s length");
    need(n, field + " (" + std::to_string(n) + " bytes)");
    std::string s(bytes_.substr(at_, n));
    at_ += n;
    return s;
  }
  void finish() const {
    if (at_ != bytes_.size())
      fail(std::to_string(bytes_.size() - at_) + " bytes follow the last stroke (a turn of another layout?)");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(Errc::bad_message, std::string(doing_) + ": the turn from rank 0 (" + std::to_string(bytes_.size()) +
                                       " bytes) does not decode: " + why +
                                       "; every rank must run the same program built against the same cuview");
  }

 private:
  void need(std::size_t n, const std::string& field) const {
    if (bytes_.size() - at_ < n)
      fail("it ends at byte " + std::to_string(bytes_.size()) + ", inside " + field + " (at byte " +
           std::to_string(at_) + ")");
  }
  std::string_view bytes_;
  std::string_view doing_;
  std::size_t at_ = 0;
};

inline constexpr std::uint8_t kReset = 1, kPaused = 2, kStop = 4, kCheckpoint = 8;

}  // namespace detail

/// The turn as rank 0 broadcasts it: every field but rank 0's own `checkpoints` and
/// `reader_arrived` (`requests.shutdown` travels as `stop`).
[[nodiscard]] inline std::string encode_turn(const Turn& turn) {
  detail::TurnWriter w;
  w.put(kTurnVersion);
  w.put(static_cast<std::uint8_t>((turn.requests.reset ? detail::kReset : 0) | (turn.paused ? detail::kPaused : 0) |
                                  (turn.stop ? detail::kStop : 0) | (turn.checkpoint ? detail::kCheckpoint : 0)));
  w.put(turn.steps);
  w.put(static_cast<std::uint32_t>(turn.requests.params.size()));
  for (const auto& [name, value] : turn.requests.params) {
    w.put_string(name);
    w.put(value);
  }
  w.put(static_cast<std::uint32_t>(turn.requests.strokes.size()));
  for (const auto& s : turn.requests.strokes) {
    w.put_string(s.input);
    w.put(s.x), w.put(s.y), w.put(s.radius);
    w.put(static_cast<std::uint8_t>(s.z ? 1 : 0)), w.put(s.z.value_or(0.0));
    w.put(static_cast<std::int32_t>(s.value));
  }
  return std::move(w.bytes());
}

/// The turn that encode_turn() made of `bytes`, with `requests.shutdown` = `stop`. Throws
/// Error(bad_message), starting with `doing` (who was receiving it), naming what does not decode:
/// another version, unknown flags, a field the bytes end in, bytes left over.
[[nodiscard]] inline Turn decode_turn(std::string_view bytes, std::string_view doing) {
  detail::TurnReader r(bytes, doing);
  if (const auto version = r.get<std::uint8_t>("the version"); version != kTurnVersion)
    r.fail("it is of version " + std::to_string(version) + ", this rank reads version " +
           std::to_string(kTurnVersion));
  Turn turn;
  const auto flags = r.get<std::uint8_t>("the flags");
  constexpr auto known = detail::kReset | detail::kPaused | detail::kStop | detail::kCheckpoint;
  if ((flags & ~known) != 0) r.fail("its flags " + std::to_string(flags) + " hold bits this rank does not know");
  turn.requests.reset = (flags & detail::kReset) != 0;
  turn.paused = (flags & detail::kPaused) != 0;
  turn.stop = turn.requests.shutdown = (flags & detail::kStop) != 0;
  turn.checkpoint = (flags & detail::kCheckpoint) != 0;
  turn.steps = r.get<std::uint64_t>("the steps");
  const auto params = r.get<std::uint32_t>("the parameters' count");
  for (std::uint32_t i = 0; i < params; ++i) {
    const std::string which = "parameter " + std::to_string(i + 1) + " of " + std::to_string(params);
    std::string name = r.get_string(which + "'s name");
    const auto value = r.get<double>(which + " ('" + name + "')'s value");
    turn.requests.params[std::move(name)] = value;
  }
  const auto strokes = r.get<std::uint32_t>("the strokes' count");
  for (std::uint32_t i = 0; i < strokes; ++i) {
    const std::string which = "stroke " + std::to_string(i + 1) + " of " + std::to_string(strokes);
    Stroke s;
    s.input = r.get_string(which + "'s input");
    s.x = r.get<double>(which + "'s x"), s.y = r.get<double>(which + "'s y");
    s.radius = r.get<double>(which + "'s radius");
    const auto has_z = r.get<std::uint8_t>(which + "'s z flag");
    if (has_z > 1) r.fail(which + "'s z flag is " + std::to_string(has_z) + ", not 0 or 1");
    if (const double z = r.get<double>(which + "'s z"); has_z != 0) s.z = z;
    s.value = r.get<std::int32_t>(which + "'s value");
    turn.requests.strokes.push_back(std::move(s));
  }
  r.finish();
  return turn;
}

}  // namespace cuview::mpi
