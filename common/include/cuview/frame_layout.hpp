// Layout of one ring slot, identical on every executor: the fields one after another, each
// aligned to 256 bytes, then a trailer the publisher writes after the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuview/host_device.hpp"

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

/// A set of a slot's blocks (fields in declaration order, then every particle attribute): bit i
/// is block i; blocks from 64 on are always in it. What a frame holds (SlotMeta::fields) and what
/// a reader reads (Lease::reads, where 0 means every block).
inline constexpr std::uint64_t kAllBlocks = ~std::uint64_t{0};
inline constexpr bool has_block(std::uint64_t blocks, std::size_t block) {
  return block >= 64 || ((blocks >> block) & 1u) != 0;
}

/// Whether a frame holding `fields` has every block a reader of `reads` reads (0: every block,
/// so only a frame holding all of them).
inline constexpr bool holds_all(std::uint64_t fields, std::uint64_t reads) {
  const std::uint64_t want = reads == 0 ? kAllBlocks : reads;
  return (fields & want) == want;
}

/// Whether a reader that takes frames of every `reader`-th cell (1: whole frames only) takes one
/// whose fields hold every `frame`-th cell (FrameInfo::every).
inline constexpr bool takes_every(std::uint32_t frame, std::uint32_t reader) { return frame <= 1 || frame == reader; }

inline constexpr std::size_t kFieldAlign = 256;
inline constexpr std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

/// Where each field lies in a slot. Every field starts at a multiple of kFieldAlign and covers
/// whole 32-bit words (its padding is zero); the trailer follows the last field.
struct SlotLayout {
  struct Field {
    std::size_t offset = 0;  ///< bytes from the start of the slot
    std::size_t bytes = 0;   ///< the field's bytes rounded up to a multiple of 4
  };
  std::vector<Field> fields;
  std::size_t trailer_offset = 0;
  std::size_t slot_bytes = 0;

  /// Fields of these sizes (bytes, any), one after another.
  static SlotLayout make(const std::vector<std::size_t>& field_bytes) {
    SlotLayout l;
    std::size_t at = 0;
    for (std::size_t b : field_bytes) {
      l.fields.push_back({at, align_up(b, 4)});
      at = align_up(at + b, kFieldAlign);
    }
    l.trailer_offset = at;
    l.slot_bytes = at + kFieldAlign;
    return l;
  }
};

/// One term of the frame checksum, for one 32-bit word of a field: position-dependent (a value
/// moved elsewhere changes the sum) and order-independent (terms add modulo 2^64), so a GPU
/// reduction and a CPU loop give the same result. `index` is the word's byte offset in the slot / 4.
CUVIEW_HD inline std::uint64_t checksum_term(std::uint32_t bits, std::uint64_t index) {
  const std::uint64_t weight = (index * 0x9E3779B97F4A7C15ull) | 1ull;
  return (static_cast<std::uint64_t>(bits) ^ 0x5bd1e9955bd1e995ull) * weight;
}

/// The checksum terms of `bytes` (a multiple of 4) in host memory that lie at byte `slot_offset`
/// of a slot: a field, or a piece of one copied out on its own.
inline std::uint64_t span_checksum(const void* data, std::size_t bytes, std::size_t slot_offset) {
  const auto* base = static_cast<const unsigned char*>(data);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < bytes / 4; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, base + 4 * i, sizeof bits);
    sum += checksum_term(bits, slot_offset / 4 + i);
  }
  return sum;
}

/// One field's part of the frame checksum, for a slot in host memory.
inline std::uint64_t field_checksum(const void* slot, const SlotLayout::Field& f) {
  return span_checksum(static_cast<const unsigned char*>(slot) + f.offset, f.bytes, f.offset);
}

/// The frame checksum of a slot in host memory: checksum_term over every 32-bit word of every
/// block the layout lists that the frame holds (`blocks`). The host executor seals with it (field
/// by field); clients verify with it.
inline std::uint64_t slot_checksum(const void* slot, const SlotLayout& layout, std::uint64_t blocks = kAllBlocks) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < layout.fields.size(); ++i)
    if (has_block(blocks, i)) sum += field_checksum(slot, layout.fields[i]);
  return sum;
}

}  // namespace cuview
