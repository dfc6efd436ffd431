// The sharing mechanisms: the registry (names, import halves) and the publisher's exporters, one
// per mechanism, the messages a user sees when a
// mechanism does not apply, and (on a GPU) owners of CUDA objects that release exactly once.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "cuview/error.hpp"
#include "cuview/share/registry.hpp"
#include "share/exports.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/device_guard.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/pinned_buffer.hpp"
#include "cuview/cuda/stream.hpp"
#include "process.hpp"
#include "share/legacy/ipc_memory.hpp"
#include "share/pool/mem_pool.hpp"
#include "share/vmm/vmm_allocation.hpp"
#endif

using namespace cuview;
using Catch::Contains;

namespace {
template <class F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected an Error");
  throw;
}
}  // namespace

TEST_CASE("the registry lists exactly shm, legacy, vmm and pool, each with both halves", "[share]") {
  std::vector<std::string> names;
  REQUIRE(share::exporters().size() == share::mechanisms().size());
  std::size_t k = 0;
  for (const share::Mechanism& m : share::mechanisms()) {
    const share::Exporter& e = share::exporters()[k++];
    CHECK(e.mechanism == &m);
    CHECK(share::find_exporter(m.name) == &e);
    names.emplace_back(m.name);
    CHECK(share::find_mechanism(m.name) == &m);
    CHECK(m.backend == (m.name == "shm" ? share::Backend::host : share::Backend::cuda));
#ifdef CUVIEW_HAVE_CUDA
    const bool built = true;
#else
    const bool built = m.backend == share::Backend::host;
#endif
    if (built) {
      CHECK(e.export_ != nullptr);
      CHECK(m.import != nullptr);
      CHECK((e.unsupported != nullptr) == (m.backend == share::Backend::cuda));
    }
  }
  CHECK(names == std::vector<std::string>{"shm", "legacy", "vmm", "pool"});
  CHECK(share::find_mechanism("auto") == nullptr);
}

TEST_CASE("--sharing names only CUDA mechanisms, and a host publisher takes only auto", "[share][bad-input]") {
  const share::SlotPlace host{};
  CHECK_NOTHROW(share::check_sharing("auto", host, "publisher 'p'"));
  for (const char* unknown : {"shm", "ipc", ""}) {
    const auto e = error_of([&] { share::check_sharing(unknown, host, "publisher 'p'"); });
    CHECK(e.code() == Errc::bad_value);
    CHECK_THAT(e.what(), Contains("publisher 'p': unknown sharing mechanism '" + std::string(unknown) +
                                  "'; choose auto, legacy (cudaIpcGetMemHandle), vmm (cuMemCreate and a file "
                                  "descriptor) or pool (an IPC memory pool)"));
  }
  for (const char* cuda_only : {"legacy", "vmm", "pool"}) {
    const auto e = error_of([&] { share::check_sharing(cuda_only, host, "publisher 'p'"); });
    CHECK(e.code() == Errc::unsupported);
    CHECK_THAT(e.what(), Contains("sharing '" + std::string(cuda_only) + "' is a CUDA mechanism") &&
                             Contains("use --sharing auto"));
  }
}

TEST_CASE("a slot written through shm's export half reads back through its import half", "[share]") {
  const auto layout = SlotLayout::make({64, 128});
  auto exported = share::make_slot_memory(layout, 3, "auto", {}, "publisher 'p'");
  REQUIRE(std::string(exported->mechanism()) == "shm");
  REQUIRE(exported->count() == 3);
  proto::HandlesResult h;
  h.backend = "host";
  h.sharing = exported->mechanism();
  exported->fill_handles(h);
  const char text[] = "frame two";
  std::memcpy(exported->slot(2), text, sizeof text);

  bool fetched = false;
  auto imported = share::import_slots({h, layout.slot_bytes, -1, "daemon 'p'", [&] {
                                         fetched = true;
                                         return std::vector<UniqueFd>{};
                                       }});
  REQUIRE(imported->count() == 3);
  CHECK(std::memcmp(imported->slot(2), text, sizeof text) == 0);
  CHECK_FALSE(fetched);  // shm travels by name, never as a descriptor
}

TEST_CASE("a client refuses a mechanism it does not know, or one of the other backend", "[share][bad-input]") {
  proto::HandlesResult h;
  h.backend = "host";
  h.sharing = "legacy";
  const auto on_host = error_of([&] { (void)share::import_slots({h, 64, -1, "daemon 'p'", {}}); });
  CHECK(on_host.code() == Errc::bad_message);
  CHECK_THAT(on_host.what(), Contains("daemon 'p' runs on the host but shares by 'legacy'"));
  h.backend = "cuda";
  h.sharing = "carrier-pigeon";
  const auto unknown = error_of([&] { (void)share::import_slots({h, 64, 0, "daemon 'p'", {}}); });
  CHECK(unknown.code() == Errc::bad_message);
  CHECK_THAT(unknown.what(), Contains("shares its ring by 'carrier-pigeon', which this client does not know"));
}

#ifdef CUVIEW_HAVE_CUDA
namespace {
/// Moves `first` into a second owner, destroys the moved-from one, and returns the second: what
/// the owner holds must still be usable afterwards (the moved-from owner released nothing).
template <class Owner>
Owner survive_move(Owner first) {
  Owner second = std::move(first);
  CHECK(first.get() == nullptr);
  { Owner gone = std::move(first); }
  return second;
}
}  // namespace

TEST_CASE("a moved-from owner of each CUDA object releases nothing", "[share][raii][gpu]") {
  std::string reason;
  if (!test::cuda_usable(&reason)) FAIL("needs a usable CUDA device: " << reason);
  cuda::DeviceGuard guard(0);

  auto stream = survive_move(cuda::Stream::create());
  CHECK(cudaStreamQuery(stream.get()) == cudaSuccess);

  auto event = survive_move(cuda::Event(cuda::EventKind::interprocess));
  CHECK(cudaEventRecord(event.get(), stream.get()) == cudaSuccess);
  CHECK(cudaEventSynchronize(event.get()) == cudaSuccess);

  auto buffer = survive_move(cuda::DeviceBuffer(4096));
  CHECK(buffer.size() == 4096);
  CHECK(cudaMemsetAsync(buffer.get(), 1, buffer.size(), stream.get()) == cudaSuccess);
  (void)cuda::export_ipc_handle(buffer);  // a freed allocation has no handle

  cuda::PinnedBuffer pinned(4096);
  cuda::PinnedBuffer pinned_owner = std::move(pinned);
  CHECK(pinned.empty());
  CHECK(cudaMemcpyAsync(pinned_owner.data(), buffer.get(), 4096, cudaMemcpyDeviceToHost, stream.get()) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream.get()) == cudaSuccess);
  CHECK(pinned_owner.as<unsigned char>()[4095] == 1);

  auto pool = survive_move(cuda::MemPool::create_ipc(0));
  // As the export half does: the pool's descriptor is made before a pointer is exported (without
  // it, cudaMemPoolExportPointer refuses with cudaErrorInvalidValue).
  const UniqueFd pool_fd = pool.export_fd();
  CHECK(pool_fd);
  constexpr std::size_t kSlotBytes = 4096;
  auto slot = survive_move(cuda::PoolAllocation::allocate(pool, kSlotBytes, stream.ref()));
  CHECK(cudaMemsetAsync(slot.get(), 0, kSlotBytes, stream.get()) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream.get()) == cudaSuccess);
  CHECK(slot.export_record().size() == 64);

  if (!share::find_exporter("vmm")->unsupported(0)) {
    auto vmm = survive_move(cuda::VmmAllocation::create(0, 1));
    CHECK(vmm.size() > 0);
    CHECK(cudaMemset(vmm.get(), 0, vmm.size()) == cudaSuccess);
    CHECK(vmm.export_fd());
  }
  CHECK(cuda::IpcMemory().get() == nullptr);  // opening one needs another process: tests/integration
}
#endif
