// Checkpoint files (compute/checkpoint/checkpoint_file.hpp) hold a state of every dtype as it was:
// written and read back, each dataset's bytes are the bytes that were written.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <vector>

#include "checkpoint/checkpoint_file.hpp"
#include "cuview/schema.hpp"
#include "process.hpp"

using namespace cuview;
using namespace cuview::test;

namespace {
/// A state buffer of `spec` holding `values`' bytes.
template <class T>
checkpoint::Block block_of(sim::StateSpec spec, const std::vector<T>& values) {
  REQUIRE(spec.bytes() == values.size() * sizeof(T));
  std::shared_ptr<std::byte> data(new std::byte[spec.bytes()], std::default_delete<std::byte[]>());
  std::memcpy(data.get(), values.data(), spec.bytes());
  return {std::move(spec), std::move(data)};
}
}  // namespace

TEST_CASE("a checkpoint of float64 and int64 state reads back bit for bit", "[checkpoint][dtype]") {
  RuntimeDir rt;
  const auto dir = rt.path() / "checkpoints";
  std::filesystem::create_directories(dir);
  // Values float32 cannot hold, the extremes, a NaN with a payload and a negative zero: any
  // conversion on the way would change some bit.
  const std::vector<double> doubles{0.1, -1.0 / 3, std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(),
                                    -0.0, std::bit_cast<double>(std::uint64_t{0x7ff8'0000'dead'beef}), 1e300, -2.5};
  const std::vector<std::int64_t> ints{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                                       (std::int64_t{1} << 53) + 1, -1, 0, 42, -(std::int64_t{1} << 40), 7};
  std::vector<checkpoint::Block> blocks;
  blocks.push_back(block_of(sim::StateSpec{"temperature", DType::float64, {2, 4}, "kelvin"}, doubles));
  blocks.push_back(block_of(sim::StateSpec{"count", DType::int64, {8}, "particles per cell"}, ints));
  checkpoint::Meta meta;
  meta.simulation = "dtype test", meta.dims = {2, 4}, meta.step = 12, meta.backend = "host";
  const auto file = dir / checkpoint::file_name(12);
  checkpoint::write(file, meta, blocks);

  const auto loaded = checkpoint::read(file);
  REQUIRE(loaded.blocks.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& got = loaded.blocks[k];
    INFO("dataset " << blocks[k].spec.name);
    CHECK(got.spec.name == blocks[k].spec.name);
    CHECK(got.spec.dtype == blocks[k].spec.dtype);
    CHECK(got.spec.shape == blocks[k].spec.shape);
    REQUIRE(got.spec.bytes() == blocks[k].spec.bytes());
    CHECK(std::memcmp(got.data.get(), blocks[k].data.get(), got.spec.bytes()) == 0);
  }
  CHECK(checkpoint::mismatch(loaded, meta, {blocks[0].spec, blocks[1].spec}).empty());
}
