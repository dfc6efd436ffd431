// The turn of a run split over ranks (cuview/mpi_turn.hpp), as rank 0 broadcasts it to the others
// in cuview::mpi::next_turn and in cuview-compute's own decomposed runs: every field arrives as
// rank 0 decided it, and bytes that are not such a turn are refused naming what was wrong.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>

#include "cuview/error.hpp"
#include "cuview/mpi_turn.hpp"

using namespace cuview;
using Catch::Matchers::Contains;

namespace {

constexpr const char* kReceiving = "rank 1 of 'heat'";

/// A turn with every field set to something other than its default.
mpi::Turn full_turn() {
  mpi::Turn t;
  t.requests.params = {{"feed", 0.0367}, {"kill", 0.0649}, {"steps_per_frame", 16}};
  t.requests.reset = true;
  t.requests.strokes.push_back({"obstacle", 12.5, 40.25, 3.0, 1, std::nullopt});
  t.requests.strokes.push_back({"seed", -1.0, 1e9, 0.5, -7, 11.75});
  t.steps = 0x1'0000'0003;  // beyond 32 bits
  t.paused = true;
  t.checkpoint = true;
  return t;
}

std::string refusal_of(const std::string& bytes) {
  try {
    (void)mpi::decode_turn(bytes, kReceiving);
  } catch (const Error& e) {
    CHECK(e.code() == Errc::bad_message);
    return e.what();
  }
  FAIL("the bytes decoded as a turn");
  return {};
}

}  // namespace

TEST_CASE("a turn encoded and decoded arrives with every field rank 0 decided", "[mpi-turn]") {
  const mpi::Turn sent = full_turn();
  const mpi::Turn got = mpi::decode_turn(mpi::encode_turn(sent), kReceiving);
  CHECK(got.requests.params == sent.requests.params);
  CHECK(got.requests.reset);
  REQUIRE(got.requests.strokes.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const Stroke &a = sent.requests.strokes[i], &b = got.requests.strokes[i];
    CHECK(b.input == a.input);
    CHECK(b.x == a.x);
    CHECK(b.y == a.y);
    CHECK(b.radius == a.radius);
    CHECK(b.value == a.value);
    CHECK(b.z == a.z);
  }
  CHECK(got.steps == sent.steps);
  CHECK(got.paused);
  CHECK(got.checkpoint);
  CHECK_FALSE(got.stop);
  CHECK_FALSE(got.requests.shutdown);
  // Rank 0's own: its tickets and its arrivals are not the other ranks' business.
  CHECK(got.requests.checkpoints.empty());
  CHECK_FALSE(got.requests.reader_arrived);
}

TEST_CASE("each flag of a turn travels on its own", "[mpi-turn]") {
  mpi::Turn sent;
  SECTION("stop, which is the other ranks' shutdown") {
    sent.stop = true;
    const auto got = mpi::decode_turn(mpi::encode_turn(sent), kReceiving);
    CHECK(got.stop);
    CHECK(got.requests.shutdown);
    CHECK_FALSE((got.paused || got.checkpoint || got.requests.reset));
  }
  SECTION("an empty turn: running, nothing asked") {
    sent.steps = 8;
    const auto got = mpi::decode_turn(mpi::encode_turn(sent), kReceiving);
    CHECK(got.steps == 8);
    CHECK_FALSE((got.stop || got.paused || got.checkpoint || got.requests.reset));
    CHECK(got.requests.params.empty());
    CHECK(got.requests.strokes.empty());
  }
}

TEST_CASE("a malformed turn is refused naming what was wrong", "[mpi-turn][bad-input]") {
  const std::string good = mpi::encode_turn(full_turn());

  SECTION("no bytes at all") {
    const auto what = refusal_of("");
    CHECK_THAT(what, Contains(kReceiving) && Contains("the version") && Contains("same cuview"));
  }
  SECTION("another version") {
    std::string bytes = good;
    bytes[0] = static_cast<char>(mpi::kTurnVersion + 1);
    CHECK_THAT(refusal_of(bytes), Contains("version " + std::to_string(mpi::kTurnVersion + 1)) &&
                                      Contains("reads version " + std::to_string(mpi::kTurnVersion)));
  }
  SECTION("flags this rank does not know") {
    std::string bytes = good;
    bytes[1] = static_cast<char>(0x40);
    CHECK_THAT(refusal_of(bytes), Contains("flags 64"));
  }
  SECTION("cut short inside a stroke") {
    // The last stroke ends with its value (i32) after its z (f64): cut into the z.
    const auto what = refusal_of(good.substr(0, good.size() - 6));
    CHECK_THAT(what, Contains("stroke 2 of 2's z") && Contains(std::to_string(good.size() - 6) + " bytes"));
  }
  SECTION("cut short inside a parameter's name") {
    // version, flags, steps, count, then the first name's length and its first byte.
    const auto what = refusal_of(good.substr(0, 1 + 1 + 8 + 4 + 4 + 1));
    CHECK_THAT(what, Contains("parameter 1 of 3's name"));
  }
  SECTION("a z flag that is neither 0 nor 1") {
    std::string bytes = good;
    // The last stroke: ... u8 has_z, f64 z, i32 value.
    bytes[bytes.size() - 4 - 8 - 1] = 2;
    CHECK_THAT(refusal_of(bytes), Contains("stroke 2 of 2's z flag is 2"));
  }
  SECTION("a length that claims more than the bytes hold") {
    std::string bytes = good;
    const std::uint32_t huge = 0xffff'fff0;
    std::memcpy(bytes.data() + 1 + 1 + 8 + 4, &huge, sizeof huge);  // the first parameter's name
    CHECK_THAT(refusal_of(bytes), Contains("parameter 1 of 3's name (4294967280 bytes)"));
  }
  SECTION("bytes after the last stroke") {
    CHECK_THAT(refusal_of(good + "xyz"), Contains("3 bytes follow the last stroke"));
  }
}
