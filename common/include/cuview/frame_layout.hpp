// Layout of one ring slot, identical on both backends: the fields one after another, each
// aligned to 256 bytes, then a trailer the daemon writes together with the data.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuview/hd.hpp"

namespace cuview {

/// Written by the daemon into every slot, after the fields, in the same GPU pass (or CPU loop)
/// that copies the data. A reader that recomputes `checksum` over the fields and finds the
/// same value, with `seq` equal to the frame it acquired, has read an intact, untorn frame.
struct SlotTrailer {
  std::uint64_t seq;       ///< frame sequence number
  std::uint64_t step;      ///< simulation step of the data
  std::uint64_t checksum;  ///< frame_checksum over all fields
  /// When the frame was complete: the GPU's global timer (ns) on CUDA, written by the GPU after
  /// the copy; CLOCK_REALTIME on the host backend. For latency measurements (cuview-bench).
  std::uint64_t done_ns;
};

inline constexpr std::size_t kFieldAlign = 256;
inline constexpr std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

struct SlotLayout {
  std::size_t cells = 0;          ///< width * height
  std::size_t field_stride = 0;   ///< bytes from one field to the next
  std::size_t field_count = 0;
  std::size_t trailer_offset = 0;
  std::size_t slot_bytes = 0;

  static SlotLayout make(std::size_t width, std::size_t height, std::size_t fields) {
    SlotLayout l;
    l.cells = width * height;
    l.field_stride = align_up(l.cells * sizeof(float), kFieldAlign);
    l.field_count = fields;
    l.trailer_offset = l.field_stride * fields;
    l.slot_bytes = l.trailer_offset + kFieldAlign;
    return l;
  }
};

/// One term of the frame checksum: position-dependent (a value moved to another cell changes
/// the sum) and order-independent (terms add modulo 2^64), so a GPU reduction and a CPU loop
/// give the same result. `index` runs over all fields: field * cells + cell.
CUVIEW_HD inline std::uint64_t checksum_term(std::uint32_t bits, std::uint64_t index) {
  const std::uint64_t weight = (index * 0x9E3779B97F4A7C15ull) | 1ull;
  return (static_cast<std::uint64_t>(bits) ^ 0x5bd1e9955bd1e995ull) * weight;
}

}  // namespace cuview
