// What real codes hold, published as it is: float64 and int64 fields, arrays with ghost cells read
// in place (the publisher copies their interior into the ring), and a grid with the program's
// coordinates — read back cell for cell by a client, described to every client, and refused by
// name where a layout cannot be read.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "backend_test.hpp"
#include "cuview/publisher.hpp"
#include "cuview/volume_ray.hpp"
#include "protocol_client.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace cuview;
using namespace cuview::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("no cuview::Error was thrown");
  return {};
}

/// The program's array where `backend` reads it: the host vector itself, or a copy in device
/// memory (freed with the object).
class ProgramArray {
 public:
  ProgramArray(const void* host, std::size_t bytes, Backend backend) : host_(host) {
#ifdef CUVIEW_HAVE_CUDA
    if (backend == Backend::cuda) {
      REQUIRE(cudaMalloc(&device_, bytes) == cudaSuccess);
      REQUIRE(cudaMemcpy(device_, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    }
#else
    (void)bytes, (void)backend;
#endif
  }
  ~ProgramArray() {
#ifdef CUVIEW_HAVE_CUDA
    if (device_ != nullptr) (void)cudaFree(device_);
#endif
  }
  ProgramArray(const ProgramArray&) = delete;
  ProgramArray& operator=(const ProgramArray&) = delete;
  [[nodiscard]] const std::byte* data() const {
    return static_cast<const std::byte*>(device_ != nullptr ? device_ : host_);
  }
  [[nodiscard]] Memory memory() const { return device_ != nullptr ? Memory::device : Memory::host; }

 private:
  const void* host_;
  void* device_ = nullptr;
};

/// The slot bytes of a frame `cuview-ctl attach --save` took (another process: on CUDA a process
/// cannot import its own ring), while this process publishes a new step every few milliseconds.
std::vector<std::byte> frame_saved_by_ctl(Publisher& pub, const std::string& name) {
  const auto file = std::filesystem::path(std::getenv("XDG_RUNTIME_DIR")) / (name + "-frame.bin");
  std::atomic<bool> done{false};
  std::thread program([&] {
    for (std::uint64_t step = 1; !done; ++step) {
      (void)pub.publish(step, 0.5 * double(step));
      std::this_thread::sleep_for(5ms);
    }
  });
  const auto saved = ctl(name, {"attach", "--frames", "1", "--verify", "--save", file.string()});
  done = true;
  program.join();
  INFO(saved.out << saved.err);
  REQUIRE(saved.code == 0);
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

template <class T>
T cell_at(const std::vector<std::byte>& slot, std::uint64_t offset) {
  T v{};
  REQUIRE(offset + sizeof v <= slot.size());
  std::memcpy(&v, slot.data() + offset, sizeof v);
  return v;
}

/// Publisher `name`'s answer to describe from a client of protocol `version` (hello first).
proto::Reply describe_as_protocol(const std::string& name, std::uint32_t version = 7) {
  RawPeer peer(name);
  const auto hello =
      peer.send({proto::encode_request("hello", 1, "", proto::HelloArgs{"old", ::getpid()}, version)});
  REQUIRE(hello.ok);
  const auto session = proto::decode_as<proto::HelloResult>(hello.result, "hello").session;
  return peer.send({proto::encode_request("describe", 2, session, proto::NoArgs{}, version)});
}

/// A cell's value that no neighbour shares, and that float64 holds exactly where float32 would not.
double value(std::size_t z, std::size_t y, std::size_t x) { return 1e8 * double(z + 1) + 1e4 * double(y) + x + 0.125; }
}  // namespace

BACKEND_TEST("a float64 volume with ghost cells is published in place and read back cell for cell, with its "
             "grid's coordinates",
             "[integration][layouts]") {
  RuntimeDir rt;
  const std::size_t halo = GENERATE(1, 2);
  constexpr std::size_t D = 5, H = 6, W = 7;
  const std::size_t d = D + 2 * halo, h = H + 2 * halo, w = W + 2 * halo;  // the program's array, halo included
  std::vector<double> T(d * h * w, -1.0);                                  // ghost cells: -1, never published
  for (std::size_t z = 0; z < D; ++z)
    for (std::size_t y = 0; y < H; ++y)
      for (std::size_t x = 0; x < W; ++x) T[((z + halo) * h + y + halo) * w + x + halo] = value(z, y, x);
  const ProgramArray array(T.data(), T.size() * sizeof(double), backend);

  Publisher pub({.name = "halo", .backend = to_string(backend), .title = "ghosts", .max_fps = 0, .max_cost = 1});
  pub.add_grid({.name = "volume", .dims = {D, H, W}, .origin = {-1.0, 0.5, 2.0}, .spacing = {0.25, 0.5, 0.125},
                .units = "m"});
  FieldDecl f{.name = "T", .data = array.data() + ((halo * h + halo) * w + halo) * sizeof(double)};
  f.dtype = DType::float64;
  f.memory = array.memory();
  f.grid = "volume";
  f.strides = {std::int64_t(h * w * 8), std::int64_t(w * 8), 8};
  pub.add_field(f);
  pub.start();

  // What a client is told: the field as the ring holds it (packed), the grid with its coordinates.
  const auto json = nlohmann::json::parse(ctl("halo", {"describe", "--json"}).out);
  CHECK(json["dims"] == nlohmann::json::array({D, H, W}));
  const auto& field = json["fields"][0];
  CHECK(field["dtype"] == "float64");
  CHECK(field["grid"] == "volume");
  CHECK(field["shape"] == nlohmann::json::array({D, H, W}));
  CHECK(field["strides"] == nlohmann::json::array({H * W * 8, W * 8, 8}));
  const auto& grid = json["grids"][0];
  CHECK(grid["name"] == "volume");
  CHECK(grid["dims"] == nlohmann::json::array({D, H, W}));
  CHECK(grid["origin"] == nlohmann::json::array({-1.0, 0.5, 2.0}));
  CHECK(grid["spacing"] == nlohmann::json::array({0.25, 0.5, 0.125}));
  CHECK(grid["axes"] == nlohmann::json::array({"z", "y", "x"}));
  CHECK(grid["units"] == "m");

  const auto slot = frame_saved_by_ctl(pub, "halo");
  const std::uint64_t offset = field["offset"];
  std::size_t wrong = 0;
  for (std::size_t z = 0; z < D; ++z)
    for (std::size_t y = 0; y < H; ++y)
      for (std::size_t x = 0; x < W; ++x)
        wrong += cell_at<double>(slot, offset + ((z * H + y) * W + x) * 8) != value(z, y, x);
  CHECK(wrong == 0);

  // What a person reads: the grid and where it lies.
  const auto described = ctl("halo", {"describe"});
  CHECK(described.code == 0);
  CHECK_THAT(described.out, Contains("float64") && Contains("7x6x5"));
  CHECK_THAT(described.out, Contains("grid volume 7x6x5: x from 2 by 0.125, y from 0.5 by 0.5, z from -1 by 0.25 (m)"));
}

BACKEND_TEST("an int64 field strided in rows is published in place and read back exactly",
             "[integration][layouts]") {
  RuntimeDir rt;
  constexpr std::size_t H = 9, W = 11, pitch = 16;  // rows of 16 values, 11 of them the field's
  std::vector<std::int64_t> n(H * pitch, -7);
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t x = 0; x < W; ++x) n[y * pitch + x] = (std::int64_t{1} << 40) + std::int64_t(y * 1000 + x);
  const ProgramArray array(n.data(), n.size() * 8, backend);
  Publisher pub({.name = "rows", .backend = to_string(backend), .max_fps = 0, .max_cost = 1});
  FieldDecl f{.name = "count", .data = array.data(), .dims = {H, W}};
  f.dtype = DType::int64;
  f.memory = array.memory();
  f.strides = {std::int64_t(pitch * 8), 8};
  pub.add_field(f);
  pub.start();
  const auto json = nlohmann::json::parse(ctl("rows", {"describe", "--json"}).out);
  CHECK(json["fields"][0]["dtype"] == "int64");
  CHECK(json["grids"][0]["spacing"] == nlohmann::json::array({1.0, 1.0}));  // a grid no one named: cell units
  const auto slot = frame_saved_by_ctl(pub, "rows");
  const std::uint64_t offset = json["fields"][0]["offset"];
  std::size_t wrong = 0;
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t x = 0; x < W; ++x)
      wrong += cell_at<std::int64_t>(slot, offset + (y * W + x) * 8) != (std::int64_t{1} << 40) + std::int64_t(y * 1000 + x);
  CHECK(wrong == 0);
}

TEST_CASE("layouts and grids a publisher cannot read are refused naming what is wrong",
          "[integration][layouts][host]") {
  RuntimeDir rt;
  std::vector<double> a(10 * 10 * 10);
  Publisher pub({.name = "bad-layouts", .backend = "host", .max_fps = 0, .max_cost = 1});
  auto field = [&](std::vector<std::int64_t> strides) {
    FieldDecl f{.name = "a", .data = a.data(), .dims = {4, 4, 4}};
    f.dtype = DType::float64;
    f.memory = Memory::host;
    f.strides = std::move(strides);
    return f;
  };
  CHECK_THAT(error_of([&] { pub.add_field(field({800, 80, 16})); }),
             Contains("field 'a' has strides {800, 80, 16}") && Contains("fastest axis's stride must be one cell's size (8 bytes)") &&
                 Contains("2 times the memory traffic"));
  CHECK_THAT(error_of([&] { pub.add_field(field({80, 800, 8})); }),
             Contains("axis 0's stride is less than the extent of the axes inside it"));
  CHECK_THAT(error_of([&] { pub.add_field(field({800, 80})); }), Contains("one stride per axis of the grid (3)"));
  CHECK_THAT(error_of([&] {
               auto f = field({800, 80, 8});
               f.bytes = 1000;
               pub.add_field(f);
             }),
             Contains("span 2672 bytes") && Contains("more than the buffer's 1000"));
  CHECK_THAT(error_of([&] { pub.add_grid({.name = "g", .dims = {4, 4}, .spacing = {1, 0}}); }),
             Contains("grid 'g'") && Contains("each spacing above 0"));
  CHECK_THAT(error_of([&] { pub.add_grid({.name = "g", .dims = {4, 4}, .origin = {1}}); }),
             Contains("grid 'g' has 2 axes but 1 origin values"));
  pub.add_grid({.name = "g", .dims = {4, 4, 4}});
  CHECK_THAT(error_of([&] { pub.add_grid({.name = "g", .dims = {4, 4}}); }), Contains("grid 'g' is declared twice"));
  pub.add_grid({.name = "h", .dims = {4, 4}});  // a second grid: fields name it
  CHECK_THAT(error_of([&] {
               auto f = field({});
               f.grid = "nowhere";
               pub.add_field(f);
             }),
             Contains("lies on grid 'nowhere', which is not declared") && Contains("name one of 'g', 'h'"));
  auto ok = field({800, 80, 8});  // a 4×4×4 block of the 10×10×10 array
  pub.add_field(ok);
  pub.start();
}

TEST_CASE("a client of protocol 7 is refused a float64 field by name, and reads a float32 publisher's grid as before",
          "[integration][layouts][host]") {
  RuntimeDir rt;
  std::vector<double> a(8 * 8);
  Publisher pub({.name = "wide", .backend = "host", .max_fps = 0, .max_cost = 1});
  pub.add_field({"T", a.data(), a.size() * 8, {8, 8}, DType::float64, 1, Memory::host, ""});
  pub.start();
  const auto refused = describe_as_protocol("wide");
  CHECK_FALSE(refused.ok);
  CHECK(refused.error.code == "version_mismatch");
  CHECK_THAT(refused.error.message, Contains("field 'T' is float64, which protocol 8 added") &&
                                        Contains("this client speaks protocol 7") && Contains("update it"));
}

BACKEND_TEST("a bfloat16 field, as PyTorch holds it, is read back bit for bit; a client of protocol 8 is refused it "
             "by name",
             "[integration][layouts]") {
  RuntimeDir rt;
  constexpr std::size_t H = 6, W = 10;
  std::vector<std::uint16_t> b(H * W);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint16_t>(0x3f80 + 3 * i);  // 1.0 and up
  const ProgramArray array(b.data(), b.size() * 2, backend);
  Publisher pub({.name = "bf16", .backend = to_string(backend), .max_fps = 0, .max_cost = 1});
  FieldDecl f{.name = "w", .data = array.data(), .bytes = b.size() * 2, .dims = {H, W}};
  f.dtype = DType::bfloat16, f.memory = array.memory();
  pub.add_field(f);
  pub.start();
  const auto json = nlohmann::json::parse(ctl("bf16", {"describe", "--json"}).out);
  CHECK(json["fields"][0]["dtype"] == "bfloat16");
  CHECK(json["fields"][0]["strides"] == nlohmann::json::array({W * 2, 2}));
  const auto slot = frame_saved_by_ctl(pub, "bf16");
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < b.size(); ++i)
    wrong += cell_at<std::uint16_t>(slot, json["fields"][0]["offset"].get<std::uint64_t>() + i * 2) != b[i];
  CHECK(wrong == 0);
  CHECK(load_value(&b[1], DType::bfloat16) == 1.0 + 3.0 / 128);  // what viewers show of cell 1
  const auto refused = describe_as_protocol("bf16", 8);
  CHECK_FALSE(refused.ok);
  CHECK(refused.error.code == "version_mismatch");
  CHECK_THAT(refused.error.message, Contains("field 'w' is bfloat16, which protocol 9 added") &&
                                        Contains("this client speaks protocol 8"));
}

BACKEND_TEST("fields on several grids — a volume, a surface, a probe line — are described and read back each on "
             "its own grid",
             "[integration][layouts][grids]") {
  RuntimeDir rt;
  constexpr std::size_t D = 4, H = 5, W = 6, N = 10;
  std::vector<double> T(D * H * W);
  std::vector<float> s(H * W);
  std::vector<std::int64_t> p(N);
  for (std::size_t z = 0; z < D; ++z)
    for (std::size_t y = 0; y < H; ++y)
      for (std::size_t x = 0; x < W; ++x) T[(z * H + y) * W + x] = value(z, y, x);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = 0.5f * float(i) - 3.0f;
  for (std::size_t i = 0; i < N; ++i) p[i] = (std::int64_t{1} << 42) + std::int64_t(i);
  const ProgramArray t_array(T.data(), T.size() * 8, backend), s_array(s.data(), s.size() * 4, backend),
      p_array(p.data(), p.size() * 8, backend);

  Publisher pub({.name = "grids", .backend = to_string(backend), .max_fps = 0, .max_cost = 1});
  pub.add_grid({.name = "volume", .dims = {D, H, W}, .spacing = {2.0, 1.0, 1.0}, .units = "mm"});
  pub.add_grid({.name = "surface", .dims = {H, W}, .origin = {0.0, 10.0}, .units = "mm"});
  pub.add_grid({.name = "probe", .dims = {N}, .spacing = {0.5}, .units = "mm"});
  FieldDecl ft{.name = "T", .data = t_array.data(), .bytes = T.size() * 8, .grid = "volume"};
  ft.dtype = DType::float64, ft.memory = t_array.memory();
  FieldDecl fs{.name = "height", .data = s_array.data(), .bytes = s.size() * 4, .grid = "surface"};
  fs.memory = s_array.memory();
  FieldDecl fp{.name = "count", .data = p_array.data(), .bytes = p.size() * 8, .grid = "probe"};
  fp.dtype = DType::int64, fp.memory = p_array.memory();
  pub.add_field(ft), pub.add_field(fs), pub.add_field(fp);
  pub.start();

  // Described: every grid, the first one's dims as the run's; each field its own shape and grid.
  const auto json = nlohmann::json::parse(ctl("grids", {"describe", "--json"}).out);
  CHECK(json["dims"] == nlohmann::json::array({D, H, W}));
  REQUIRE(json["grids"].size() == 3);
  CHECK(json["grids"][1]["name"] == "surface");
  CHECK(json["grids"][1]["dims"] == nlohmann::json::array({H, W}));
  CHECK(json["grids"][1]["origin"] == nlohmann::json::array({0.0, 10.0}));
  CHECK(json["grids"][2]["dims"] == nlohmann::json::array({N}));
  const auto& fields = json["fields"];
  CHECK(fields[0]["grid"] == "volume");
  CHECK(fields[1]["grid"] == "surface");
  CHECK(fields[1]["shape"] == nlohmann::json::array({H, W}));
  CHECK(fields[2]["grid"] == "probe");
  CHECK(fields[2]["shape"] == nlohmann::json::array({N}));
  const auto described = ctl("grids", {"describe"});
  CHECK_THAT(described.out, Contains("grid surface 6x5: x from 10 by 1, y from 0 by 1 (mm)") &&
                                Contains("field height float32 [5, 6] on surface") &&
                                Contains("field count int64 [10] on probe"));

  // Read back cell for cell, each field on its own grid.
  const auto slot = frame_saved_by_ctl(pub, "grids");
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < T.size(); ++i) wrong += cell_at<double>(slot, fields[0]["offset"].get<std::uint64_t>() + i * 8) != T[i];
  for (std::size_t i = 0; i < s.size(); ++i) wrong += cell_at<float>(slot, fields[1]["offset"].get<std::uint64_t>() + i * 4) != s[i];
  for (std::size_t i = 0; i < N; ++i) wrong += cell_at<std::int64_t>(slot, fields[2]["offset"].get<std::uint64_t>() + i * 8) != p[i];
  CHECK(wrong == 0);
}

TEST_CASE("a field of another grid is refused where it cannot be read: by a client of protocol 7, by a part of a "
          "decomposed run, without a grid of its shape",
          "[integration][layouts][grids][host]") {
  RuntimeDir rt;
  std::vector<float> a(4 * 4 * 4), b(4 * 4);
  Publisher pub({.name = "two", .backend = "host", .max_fps = 0, .max_cost = 1});
  pub.add_grid({.name = "volume", .dims = {4, 4, 4}});
  pub.add_grid({.name = "surface", .dims = {4, 4}});
  pub.add_field({.name = "u", .data = a.data(), .bytes = a.size() * 4, .memory = Memory::host});  // the first grid
  CHECK_THAT(error_of([&] {
               pub.add_field({.name = "w", .data = b.data(), .bytes = b.size() * 4, .dims = {4, 4},
                              .memory = Memory::host});
             }),
             Contains("field 'w' is 4x4 but grid 'volume' is 4x4x4") && Contains("a grid of its own"));
  pub.add_field({.name = "h", .data = b.data(), .bytes = b.size() * 4, .memory = Memory::host, .grid = "surface"});
  pub.start();
  const auto refused = describe_as_protocol("two");
  CHECK_FALSE(refused.ok);
  CHECK(refused.error.code == "version_mismatch");
  CHECK_THAT(refused.error.message, Contains("field 'h' lies on grid 'surface' (4x4 cells)") &&
                                        Contains("fields on several grids came with protocol 8") &&
                                        Contains("this client speaks protocol 7"));

  PartOptions part{.index = 0, .count = 1, .group = "g-1", .rank = 0, .host = {}};
  part.offset = {0, 0, 0};
  part.global_dims = {4, 4, 4};
  Publisher ranked({.name = "ranked", .backend = "host", .max_fps = 0, .part = part});
  ranked.add_grid({.name = "volume", .dims = {4, 4, 4}});
  ranked.add_grid({.name = "surface", .dims = {4, 4}});
  ranked.add_field({.name = "u", .data = a.data(), .bytes = a.size() * 4, .memory = Memory::host});
  ranked.add_field({.name = "h", .data = b.data(), .bytes = b.size() * 4, .memory = Memory::host, .grid = "surface"});
  CHECK_THAT(error_of([&] { ranked.start(); }),
             Contains("field 'h' lies on grid 'surface'") && Contains("decompose one grid, their first ('volume')"));
}

BACKEND_TEST("a publisher casts pictures of a volume field where its frames are, from every cell, as the CPU "
             "caster casts them",
             "[integration][layouts][render]") {
  RuntimeDir rt;
  // A ball and a gradient on cells twice as deep as wide, in the program's memory (the GPU's on CUDA).
  constexpr std::uint32_t D = 20, H = 40, W = 40;
  std::vector<float> u(std::size_t{D} * H * W);
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y)
      for (std::uint32_t x = 0; x < W; ++x)
        u[(std::size_t{z} * H + y) * W + x] =
            0.3f * x / W + (std::hypot(x - 22.0, y - 18.0, 2.0 * (z - 9.0)) <= 9 ? 0.7f : 0.0f);
  const ProgramArray array(u.data(), u.size() * sizeof(float), backend);
  Publisher pub({.name = "pictures", .backend = to_string(backend), .max_fps = 0, .max_cost = 1});
  pub.add_grid({.name = "tank", .dims = {D, H, W}, .spacing = {2, 1, 1}});
  pub.add_field({.name = "u", .data = array.data(), .bytes = u.size() * 4, .memory = array.memory(), .grid = "tank"});
  pub.add_grid({.name = "surface", .dims = {H, W}});
  pub.add_field({.name = "h", .data = array.data(), .bytes = std::size_t{H} * W * 4, .memory = array.memory(),
                 .grid = "surface"});
  pub.start();
  auto c = Client::attach(AttachOptions{.name = "pictures", .client = "test", .import = Import::control_only});

  proto::RenderArgs v;
  v.field = "u", v.width = 120, v.height = 80, v.azimuth = 30, v.elevation = 20;
  v.lo = 0, v.hi = 1;
  for (std::uint32_t i = 0; i < 256; ++i) v.lut.push_back(0xff000000u | i << 16 | i << 8 | i);
  v.opacity.assign(256, 4.0f / W);
  for (const char* mode : {"mip", "emission", "isosurface"}) {
    v.mode = mode;
    auto r = c.render(v);
    CHECK(r.pending);  // a new view: the next frame brings it
    for (std::uint64_t step = 1; step < 100 && r.pending; ++step) {
      (void)pub.publish(step, 0.0);
      r = c.render(v);
    }
    REQUIRE_FALSE(r.pending);
    REQUIRE((r.width == 120 && r.height == 80 && r.every == 1));
    REQUIRE(r.argb.size() == 120 * 80 * 4);
    REQUIRE(r.values.size() == 120 * 80 * 4);
    // The same view cast here, on the CPU, from the program's own cells.
    VolumeBrick brick{u.data(), int(W), int(H), int(D)};
    brick.cell = {1, 1, 2};
    VolumeStyle style;
    std::copy(v.lut.begin(), v.lut.end(), style.lut.begin());
    std::copy(v.opacity.begin(), v.opacity.end(), style.opacity.begin());
    style.lo = v.lo, style.hi = v.hi, style.level = v.level;
    const VolumeMode m = v.mode == "mip" ? VolumeMode::mip : v.mode == "emission" ? VolumeMode::emission
                                                                                  : VolumeMode::isosurface;
    VolumeTables tables;
    const auto rays = volume_rays(brick, {30, 20, 1, 0, 0}, m, style, 120, 80, tables);
    std::size_t differing = 0, shown = 0;
    for (int y = 0; y < 80; ++y)
      for (int x = 0; x < 120; ++x) {
        std::uint32_t want = 0, got = 0;
        float want_v = 0, got_v = 0;
        cast_ray(rays, x, y, want, want_v);
        const std::size_t at = static_cast<std::size_t>(y) * 120 + x;
        std::memcpy(&got, r.argb.data() + at * 4, 4);
        std::memcpy(&got_v, r.values.data() + at * 4, 4);
        shown += std::isnan(want_v) ? 0 : 1;
        bool same = std::isnan(want_v) == std::isnan(got_v) && (std::isnan(want_v) || std::abs(want_v - got_v) <= 1e-3f);
        for (int shift = 0; shift < 24 && same; shift += 8)
          same = std::abs(int((want >> shift) & 0xff) - int((got >> shift) & 0xff)) <= 2;
        differing += same ? 0 : 1;
      }
    INFO(mode << ": " << differing << " of 9600 pixels differ; " << shown << " show the field");
    CHECK(shown > 200);  // the isosurface's fewest: the ball's disc
    // The host casts with the same code on the same cells: the same picture. A GPU's fused
    // multiply-adds may move a sample across a cell: at most 0.2 % of the pixels.
    if (backend == Backend::host) CHECK(differing == 0);
    CHECK(differing * 500 <= 9600);
  }
  // What cannot be cast is refused by name.
  v.field = "h";
  CHECK_THAT(error_of([&] { (void)c.render(v); }), Contains("field 'h'") && Contains("volume (3 axes)"));
  v.field = "T";
  CHECK_THAT(error_of([&] { (void)c.render(v); }), Contains("no field 'T'") && Contains("u, h"));
  v.field = "u", v.lut.resize(3);
  CHECK_THAT(error_of([&] { (void)c.render(v); }), Contains("lut has 3 colours") && Contains("256"));
}

BACKEND_TEST("a publisher shows a plane of a field where its frames are: each pixel its cell's value, as it is",
             "[integration][layouts][render][plane]") {
  RuntimeDir rt;
  // A volume on a grid twice as deep as wide and a 2-D field beside it, in the program's memory
  // (the GPU's on CUDA): each cell's value says where it is.
  constexpr std::uint32_t D = 20, H = 30, W = 40;
  std::vector<float> u(std::size_t{D} * H * W);
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y)
      for (std::uint32_t x = 0; x < W; ++x) u[(std::size_t{z} * H + y) * W + x] = 10000.0f * z + 100.0f * y + x;
  const ProgramArray array(u.data(), u.size() * sizeof(float), backend);
  // A vector field beside it, (3, 4, 0) · (x + 1): its magnitude 5 (x + 1).
  std::vector<float> vel(std::size_t{D} * H * W * 3);
  for (std::size_t i = 0; i < std::size_t{D} * H * W; ++i) {
    const float x = static_cast<float>(i % W) + 1;
    vel[i * 3] = 3 * x, vel[i * 3 + 1] = 4 * x, vel[i * 3 + 2] = 0;
  }
  const ProgramArray vel_array(vel.data(), vel.size() * sizeof(float), backend);
  Publisher pub({.name = "planes", .backend = to_string(backend), .max_fps = 0, .max_cost = 1});
  pub.add_field({.name = "u", .data = array.data(), .bytes = u.size() * 4, .dims = {D, H, W}, .memory = array.memory()});
  pub.add_field({.name = "velocity", .data = vel_array.data(), .bytes = vel.size() * 4, .dims = {D, H, W},
                 .components = 3, .memory = vel_array.memory()});
  pub.start();
  auto c = Client::attach(AttachOptions{.name = "planes", .client = "test", .import = Import::control_only});
  proto::RenderArgs v;
  v.field = "u", v.mode = "plane", v.lo = 0, v.hi = 1;
  for (std::uint32_t i = 0; i < 256; ++i) v.lut.push_back(0xff000000u | i);
  // One pixel a cell: the x-plane at 11 is z × y (rows z, columns y); the picture its own size.
  v.axis = "x", v.index = 11, v.width = H, v.height = D;
  proto::RenderResult r;
  for (std::uint64_t step = 1; step < 100 && r.pending; ++step) {
    (void)pub.publish(step, 0.0);
    r = c.render(v);
  }
  REQUIRE_FALSE(r.pending);
  REQUIRE(r.values.size() == std::size_t{H} * D * 4);
  std::size_t wrong = 0;
  for (std::uint32_t z = 0; z < D; ++z)
    for (std::uint32_t y = 0; y < H; ++y) {
      float got = 0;
      std::memcpy(&got, r.values.data() + (std::size_t{z} * H + y) * 4, 4);
      wrong += got == 10000.0f * z + 100.0f * y + 11 ? 0 : 1;
    }
  CHECK(wrong == 0);
  // Every value above the range: the lut's last colour everywhere.
  std::uint32_t colour = 0;
  std::memcpy(&colour, r.argb.data() + 4 * 17, 4);
  CHECK(colour == (0xff000000u | 255u));
  // The middle z-plane by default, fitted into a wider picture: its middle pixel is cell
  // (W/2, H/2, D/2), and the columns left and right of the plane show nothing.
  v.axis.reset(), v.index.reset();
  v.width = 2 * W, v.height = H;
  r = {};
  for (std::uint64_t step = 100; step < 200 && r.pending; ++step) {
    (void)pub.publish(step, 0.0);
    r = c.render(v);
  }
  REQUIRE_FALSE(r.pending);
  float middle = 0, left = 0;
  std::memcpy(&middle, r.values.data() + (std::size_t{H / 2} * 2 * W + W) * 4, 4);
  std::memcpy(&left, r.values.data() + (std::size_t{H / 2} * 2 * W + 3) * 4, 4);
  CHECK(middle == 10000.0f * (D / 2) + 100.0f * (H / 2) + W / 2);
  CHECK(std::isnan(left));
  // The vector field's plane: each pixel its cell's magnitude (what a viewer's first picture of a
  // flow's velocity shows).
  v.field = "velocity", v.width = W, v.height = H;
  r = {};
  for (std::uint64_t step = 200; step < 300 && r.pending; ++step) {
    (void)pub.publish(step, 0.0);
    r = c.render(v);
  }
  REQUIRE_FALSE(r.pending);
  std::size_t off = 0;
  for (std::uint32_t y = 0; y < H; ++y)
    for (std::uint32_t x = 0; x < W; ++x) {
      float got = 0;
      std::memcpy(&got, r.values.data() + (std::size_t{y} * W + x) * 4, 4);
      off += std::abs(got - 5.0f * static_cast<float>(x + 1)) <= 1e-4f * static_cast<float>(x + 1) ? 0 : 1;
    }
  CHECK(off == 0);
}
