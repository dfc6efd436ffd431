// The executor writes a frame in one pass where it can: a copy into the slot adds the checksum as
// it goes, a writer's kernel adds it as it writes (sum_into), seal() reads only the rest. Whatever
// path each field took, the trailer holds the checksum an outside client computes over the slot.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "backend_test.hpp"
#include "executor/executor.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuview/cuda/device_buffer.hpp"
#endif

using namespace cuview;
using namespace cuview::test;

namespace {
std::vector<std::uint32_t> random_words(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& w : v) w = rng();
  return v;
}
}  // namespace

BACKEND_TEST("a frame's checksum is the readers' whichever way each field was written", "[executor]") {
  auto executor = make_executor(backend == Backend::cuda ? "cuda" : "host");
  // Field 0: a whole-field copy from the executor's own memory (the fused copy on CUDA); field 1: a
  // copy from host memory (pageable: a plain copy on CUDA, summed by seal); field 2: written
  // directly by "the program" (summed by seal); field 3: a part copied (not a whole field).
  const SlotLayout layout = SlotLayout::make({4000, 4096 * 4, 12, 1024});
  std::vector<std::byte> host_slot(layout.slot_bytes);
  void* slot = host_slot.data();
  const void* own0 = nullptr;
#ifdef CUVIEW_HAVE_CUDA
  cuda::DeviceBuffer device_slot, device_src;
  if (backend == Backend::cuda) {
    device_slot = cuda::DeviceBuffer(layout.slot_bytes);
    device_src = cuda::DeviceBuffer(4000);
    slot = device_slot.get();
  }
#endif
  auto* base = static_cast<std::byte*>(slot);
  for (std::uint32_t frame = 1; frame <= 3; ++frame) {  // the same slot again: the checksum starts afresh
    const auto w0 = random_words(1000, frame), w1 = random_words(4096, 100 + frame), w2 = random_words(3, 7 * frame),
               w3 = random_words(256, 9 * frame);
    own0 = w0.data();
#ifdef CUVIEW_HAVE_CUDA
    if (backend == Backend::cuda) {
      REQUIRE(cudaMemcpy(device_src.get(), w0.data(), 4000, cudaMemcpyHostToDevice) == cudaSuccess);
      own0 = device_src.get();
    }
#endif
    executor->begin_frame(slot, layout, executor->stream());
    executor->copy(base + layout.fields[0].offset, own0, 4000, executor->stream());
    executor->copy(base + layout.fields[1].offset, w1.data(), w1.size() * 4, executor->stream());
    executor->copy(base + layout.fields[3].offset, w3.data(), 512, executor->stream());  // half of field 3
    executor->copy(base + layout.fields[3].offset + 512, w3.data() + 128, 512, executor->stream());
#ifdef CUVIEW_HAVE_CUDA
    if (backend == Backend::cuda) {
      executor->finish();
      REQUIRE(cudaMemcpy(base + layout.fields[2].offset, w2.data(), 12, cudaMemcpyHostToDevice) == cudaSuccess);
    } else
#endif
      std::memcpy(base + layout.fields[2].offset, w2.data(), 12);
    executor->seal(frame, 10 * frame, executor->stream());
    executor->finish();
#ifdef CUVIEW_HAVE_CUDA
    if (backend == Backend::cuda)
      REQUIRE(cudaMemcpy(host_slot.data(), slot, layout.slot_bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
#endif
    SlotTrailer t{};
    std::memcpy(&t, host_slot.data() + layout.trailer_offset, sizeof t);
    CHECK(t.seq == frame);
    CHECK(t.step == 10 * frame);
    CHECK(t.checksum == slot_checksum(host_slot.data(), layout));
    CHECK(std::memcmp(host_slot.data() + layout.fields[0].offset, w0.data(), 4000) == 0);
    CHECK(std::memcmp(host_slot.data() + layout.fields[1].offset, w1.data(), w1.size() * 4) == 0);
    CHECK(std::memcmp(host_slot.data() + layout.fields[3].offset, w3.data(), 1024) == 0);
  }
}

BACKEND_TEST("sum_into refuses a target that is not a field of the frame being written", "[executor]") {
  auto executor = make_executor(backend == Backend::cuda ? "cuda" : "host");
  const SlotLayout layout = SlotLayout::make({1024});
  std::vector<std::byte> host_slot(layout.slot_bytes);
  void* slot = host_slot.data();
#ifdef CUVIEW_HAVE_CUDA
  cuda::DeviceBuffer device_slot;
  if (backend == Backend::cuda) {
    device_slot = cuda::DeviceBuffer(layout.slot_bytes);
    slot = device_slot.get();
  }
#endif
  // Outside a frame (a test writing fields into its own buffers): the terms go nowhere.
  CHECK(executor->sum_into({slot, 1024}).sum != nullptr);
  executor->begin_frame(slot, layout, executor->stream());
  try {
    (void)executor->sum_into({static_cast<std::byte*>(slot) + 4, 512});
    FAIL("a part of a field was taken for a whole one");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("not a whole field"));
  }
  const auto sink = executor->sum_into({slot, 1024});
  CHECK(sink.first_word == 0);
  executor->seal(1, 1, executor->stream());
  executor->finish();
}
