// Volumes as a user meets them through cuview-ctl and a gateway: every listing and description
// names all three axes of the grid (40x30x16, fastest first as --size takes it), and a volume run
// as parts whose field holds NaN values of its own is seen whole through the gateway, every cell
// where it is: the gateway sends each part's brick rows by the part's block, never by its values.
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>
#include <zmq_addon.hpp>

#include "backend_test.hpp"
#include "cuview/client.hpp"
#include "cuview/publisher.hpp"
#include "cuview/remote_protocol.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {
/// A volume of kDepth × kHeight × kWidth cells run as two parts split along depth: part 0 holds
/// layers 0-3, part 1 layers 4-7.
constexpr std::uint32_t kDepth = 8, kHeight = 6, kWidth = 10, kSplit = 4;

/// Whether cell (x, y, z) holds NaN: all of layer 3 (part 0's last), all of layer 4 (part 1's
/// first), and two cells inside part 1.
bool is_nan_cell(std::uint32_t z, std::uint32_t y, std::uint32_t x) {
  return z == kSplit - 1 || z == kSplit || (z == 6 && y == 2 && x == 7) || (z == 7 && y == 5 && x == 0);
}
/// What cell (x, y, z) holds at `step`.
float cell_value(std::uint32_t z, std::uint32_t y, std::uint32_t x, std::uint64_t step) {
  return is_nan_cell(z, y, x) ? std::numeric_limits<float>::quiet_NaN() : float(z * 100 + y * 10 + x + step * 1000);
}

/// The two parts of run `name`, each an embedded publisher of this process (as two MPI ranks
/// are), publishing steps 1, 2, … from a thread of their own until destroyed.
class VolumeParts {
 public:
  explicit VolumeParts(const std::string& name) {
    for (std::uint32_t k = 0; k < 2; ++k) {
      PartOptions p{.index = k, .count = 2, .group = name + "-1", .rank = static_cast<int>(k), .host = {}};
      p.offset = {k * kSplit, 0, 0};
      p.global_dims = {kDepth, kHeight, kWidth};
      pubs_.push_back(std::make_unique<Publisher>(
          PublisherOptions{.name = name, .backend = "host", .title = "slabs", .max_fps = 0, .max_cost = 1, .part = p}));
      data_[k].resize(std::size_t{kSplit} * kHeight * kWidth);
      pubs_[k]->add_field({"u", data_[k].data(), data_[k].size() * sizeof(float), {kSplit, kHeight, kWidth}, DType::float32, 1,
                           Memory::host, "z·100 + y·10 + x + step·1000; NaN in layers 3 and 4 and two cells"});
      pubs_[k]->start();
    }
    thread_ = std::thread([this] {
      for (std::uint64_t step = 1; !stop_; ++step) {
        for (std::uint32_t k = 0; k < 2; ++k) {
          fill(k, step);
          (void)pubs_[k]->publish(step, static_cast<double>(step));
        }
        std::this_thread::sleep_for(20ms);  // the program's own pace: 50 steps a second
      }
    });
  }
  ~VolumeParts() {
    stop_ = true;
    thread_.join();
  }
  VolumeParts(const VolumeParts&) = delete;
  VolumeParts& operator=(const VolumeParts&) = delete;

 private:
  void fill(std::uint32_t k, std::uint64_t step) {
    auto& d = data_[k];
    for (std::uint32_t z = 0; z < kSplit; ++z)
      for (std::uint32_t y = 0; y < kHeight; ++y)
        for (std::uint32_t x = 0; x < kWidth; ++x)
          d[(std::size_t{z} * kHeight + y) * kWidth + x] = cell_value(k * kSplit + z, y, x, step);
  }

  std::vector<std::unique_ptr<Publisher>> pubs_;
  std::vector<float> data_[2];
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// The header of the first brick of field "u" that publisher `address` sends through the test's
/// gateway to a client written from docs/remote.md alone (a DEALER on the gateway's socket asking
/// for a `view` with `brick`), as it came: for a part, before any client places it.
remote::ViewHeader first_brick_of(const std::string& address) {
  zmq::context_t ctx;
  zmq::socket_t s{ctx, zmq::socket_type::dealer};
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, 10000);
  s.connect("ipc://" + gateway_url().substr(5));
  remote::ViewArgs args;
  args.name = address;
  args.field = "u";
  args.view_w = args.view_h = 1;
  args.encoding = "f32";
  args.credits = 1;
  args.brick = 16;  // more than the longest axis: every cell
  const auto body = remote::encode_gateway_request(remote::Op::view, 1, args);
  s.send(zmq::buffer(std::string()), zmq::send_flags::sndmore);
  s.send(zmq::buffer(body), zmq::send_flags::none);
  for (;;) {
    std::vector<zmq::message_t> parts;
    const auto got = zmq::recv_multipart(s, std::back_inserter(parts));
    if (!got) FAIL("no view of " << address << " through the gateway within 10 s");
    REQUIRE(parts.size() >= 3);
    if (parts[0].to_string_view() == remote::kReply) {
      const auto reply = remote::decode_gateway_reply(parts[2].to_string_view());
      INFO("the gateway answered 'view' of " << address << ": " << reply.error.code << " " << reply.error.message);
      REQUIRE(reply.ok);
    } else if (parts[0].to_string_view() == remote::kView) {
      return proto::decode_bytes<remote::ViewHeader>(parts[2].to_string_view(), "view header");
    }
  }
}
}  // namespace

BACKEND_TEST("cuview-ctl lists and describes a volume by all three axes here and through a gateway",
             "[integration][remote][ctl]") {
  RuntimeDir rt;
  auto daemon = start_daemon("vol", backend, {"--sim", "grayscott3d", "--paused"}, "40x30x16");
  REQUIRE(ctl("vol", {"step", "2"}).code == 0);
  (void)wait_stats("vol", [](const StatsView& s) { return s.step == 2; });

  const auto list = ctl("vol", {"list"});
  INFO(list.out << list.err);
  REQUIRE(list.code == 0);
  CHECK_THAT(list.out, Contains("grayscott3d 40x30x16 on"));

  auto gateway = start_gateway();
  const auto remote_list = ctl("vol", {"--remote", gateway_url(), "list"});
  INFO(remote_list.out << remote_list.err);
  REQUIRE(remote_list.code == 0);
  CHECK_THAT(remote_list.out, Contains("grayscott3d 40x30x16 on"));

  const auto att = ctl("vol", {"--remote", gateway_url(), "attach", "--frames", "1", "--encoding", "f32"});
  INFO(att.out << att.err);
  REQUIRE(att.code == 0);
  CHECK_THAT(att.out, Contains("grayscott3d 40x30x16 on") && Contains("received 1 views"));
}

TEST_CASE("cuview-ctl names a volume run as parts and each part's block by all three axes",
          "[integration][remote][ctl][host]") {
  RuntimeDir rt;
  VolumeParts run("slabs");
  const auto list = ctl("slabs", {"list"});
  INFO(list.out << list.err);
  REQUIRE(list.code == 0);
  CHECK_THAT(list.out, Contains("slabs (2 parts)") && Contains("10x6x8 on host"));

  auto gateway = start_gateway();
  const auto att = ctl("slabs", {"--remote", gateway_url(), "attach", "--frames", "1", "--encoding", "f32"});
  INFO(att.out << att.err);
  REQUIRE(att.code == 0);
  CHECK_THAT(att.out, Contains("slabs 10x6x8 on host") && Contains("block 10x6x4 at (0, 0, 0)") &&
                          Contains("block 10x6x4 at (0, 0, 4)") && Contains("received 1 views"));
}

TEST_CASE("a volume of parts whose field holds NaN is seen whole through a gateway with each NaN in its cell",
          "[integration][remote][group][host]") {
  RuntimeDir rt;
  VolumeParts run("slabs");
  auto gateway = start_gateway();
  ViewWatch whole;
  whole.field = "u";
  whole.encoding = "f32";
  whole.brick = 16;  // more than the longest axis: every cell

  SECTION("each part sends the rows of its whole block, its NaN layer included") {
    for (std::uint32_t k = 0; k < 2; ++k) {
      INFO("part " << k);
      const auto h = first_brick_of("slabs/part-" + std::to_string(k));
      REQUIRE(h.brick);
      CHECK(*h.brick == std::vector<std::uint32_t>{kDepth, kHeight, kWidth, 1});
      REQUIRE(h.rect);
      // Brick rows are (layer, row) pairs, each of the whole width: the part's layers, all of them.
      CHECK(h.rect->x == 0);
      CHECK(h.rect->w == kWidth);
      CHECK(h.rect->y == k * kSplit * kHeight);
      CHECK(h.rect->h == kSplit * kHeight);
    }
  }

  SECTION("the brick assembled from both parts holds every value and every NaN in its cell") {
    const auto group = open(OpenOptions{.name = "slabs", .remote = {gateway_url()}, .client = "remote grids test",
                                        .import = Import::control_only});
    REQUIRE(group->decomposed());
    CHECK(group->extent() == Extent{{kDepth, kHeight, kWidth}});
    auto* views = dynamic_cast<RemoteGroup*>(group.get());
    REQUIRE(views != nullptr);
    views->watch(whole);
    RemoteView v;
    REQUIRE(views->next_view(v, 10s));
    REQUIRE(v.header.brick);
    CHECK(*v.header.brick == std::vector<std::uint32_t>{kDepth, kHeight, kWidth, 1});
    REQUIRE(v.view.values.size() == std::size_t{kDepth} * kHeight * kWidth);
    std::size_t wrong = 0, nan_cells = 0;
    for (std::uint32_t z = 0; z < kDepth; ++z)
      for (std::uint32_t y = 0; y < kHeight; ++y)
        for (std::uint32_t x = 0; x < kWidth; ++x) {
          const float got = v.view.values[(std::size_t{z} * kHeight + y) * kWidth + x];
          const float want = cell_value(z, y, x, v.header.step);
          if (std::isnan(want)) {
            ++nan_cells;
            wrong += !std::isnan(got);
          } else {
            wrong += got != want;
          }
        }
    INFO("brick of step " << v.header.step);
    CHECK(nan_cells == 2 * kHeight * kWidth + 2);
    CHECK(wrong == 0);
  }
}
