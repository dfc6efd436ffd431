// A frame's checksum summed on the GPU that holds it (Frame::verify): reading a 26 GB slot there
// takes milliseconds; copying it to the host to sum there took half a minute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuview/frame_layout.hpp"

namespace cuview::detail {

/// The checksum terms (checksum_term) of `fields` of the slot at `slot` — device memory of the
/// current GPU, each field's offset and bytes as a frame holds them — summed on `stream` into
/// `total` (a word of that GPU's memory, nobody else's meanwhile); returns when the sum is back on
/// the host. `what` names the frame in errors (Error(cuda)).
std::uint64_t device_checksum(const std::byte* slot, const std::vector<SlotLayout::Field>& fields, cudaStream_t stream,
                              std::uint64_t* total, const std::string& what);

}  // namespace cuview::detail
