// The ranks of a decomposed run through MPI (Debian's Open MPI, not CUDA-aware: only host
// memory goes through it), and the device halo through NCCL, which is loaded at run time
// (dlopen): it is large, ships with the CUDA installation or the GPU host, and a cuview-compute
// that never runs on several GPUs must not need it.
#include <dlfcn.h>
#define OMPI_SKIP_MPICXX 1  // the C API only: Open MPI's deprecated C++ bindings need libmpi_cxx
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
// The turn of every program split over ranks (it includes <mpi.h> with the same C-only settings).
#include "cuview/mpi_parts.hpp"
#include <time.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cuview/error.hpp"
#include "parts/comm.hpp"

#ifdef CUVIEW_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

namespace cuview::parts {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(Errc::system, std::string("MPI ") + what + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

/// Waits for a nonblocking collective: spins briefly (a turn's collectives meet within
/// microseconds while the run steps), then sleeps between checks (while rank 0 waits for
/// requests of a paused run, the other ranks must not burn the CPU viewers need).
void wait_sleeping(MPI_Request& req, const char* what) {
  int done = 0;
  for (int i = 0; i < 2000 && !done; ++i) check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), what);
  const timespec pause{0, 200'000};
  while (!done) {
    ::nanosleep(&pause, nullptr);
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), what);
  }
}

#ifdef CUVIEW_HAVE_NCCL
/// The NCCL functions the halo uses, from libnccl.so.2.
struct Nccl {
  void* lib = nullptr;
  ncclResult_t (*GetUniqueId)(ncclUniqueId*) = nullptr;
  ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*CommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*Send)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*Recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*GroupStart)() = nullptr;
  ncclResult_t (*GroupEnd)() = nullptr;
  const char* (*GetErrorString)(ncclResult_t) = nullptr;
  ncclResult_t (*GetVersion)(int*) = nullptr;

  static Nccl& get() {
    static Nccl n = load();
    return n;
  }
  void check(ncclResult_t rc, const char* what) const {
    if (rc != ncclSuccess)
      throw Error(Errc::cuda, std::string("NCCL ") + what + " failed: " + GetErrorString(rc));
  }

 private:
  static Nccl load() {
    Nccl n;
    n.lib = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (n.lib == nullptr)
      throw Error(Errc::unsupported, std::string("cannot load NCCL (libnccl.so.2: ") + ::dlerror() +
                                         "), which moves halos between GPUs; install NCCL (Debian/Ubuntu: "
                                         "libnccl2) or add its directory to LD_LIBRARY_PATH");
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(n.lib, name));
      if (fn == nullptr)
        throw Error(Errc::unsupported, std::string("libnccl.so.2 lacks ") + name + "; use NCCL 2.7 or newer");
    };
    sym(n.GetUniqueId, "ncclGetUniqueId");
    sym(n.CommInitRank, "ncclCommInitRank");
    sym(n.CommDestroy, "ncclCommDestroy");
    sym(n.Send, "ncclSend");
    sym(n.Recv, "ncclRecv");
    sym(n.GroupStart, "ncclGroupStart");
    sym(n.GroupEnd, "ncclGroupEnd");
    sym(n.GetErrorString, "ncclGetErrorString");
    sym(n.GetVersion, "ncclGetVersion");
    return n;
  }
};
#endif

class MpiComm;

/// Halos between y-neighbours: rank − 1 above, rank + 1 below.
class MpiHalo final : public sim::Halo {
 public:
  MpiHalo(MpiComm& comm, int cuda_device);
  ~MpiHalo() override;
  void exchange(const void* to_up, void* from_up, const void* to_down, void* from_down, std::size_t bytes,
                bool device, cuda::StreamRef stream) override;
  [[nodiscard]] bool has_up() const override { return up_ != MPI_PROC_NULL; }
  [[nodiscard]] bool has_down() const override { return down_ != MPI_PROC_NULL; }

 private:
  int up_ = MPI_PROC_NULL, down_ = MPI_PROC_NULL;
#ifdef CUVIEW_HAVE_NCCL
  ncclComm_t nccl_ = nullptr;
#endif
};

class MpiComm final : public Comm {
 public:
  MpiComm() {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // an error becomes a message
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "splitting the ranks by host");
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_free(&local);
  }
  ~MpiComm() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }

  mpi::Turn next_turn(Publisher& pub, std::uint64_t steps_wanted, bool stop, bool checkpoint_due) override {
    return mpi::next_turn(pub, MPI_COMM_WORLD, steps_wanted, stop, checkpoint_due);
  }
  void broadcast(std::string& bytes) override {
    std::uint64_t n = bytes.size();
    MPI_Request req;
    check(MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req), "broadcasting the size of rank 0's bytes");
    wait_sleeping(req, "broadcasting the size of rank 0's bytes");
    bytes.resize(n);
    if (n == 0) return;
    check(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_BYTE, 0, MPI_COMM_WORLD), "broadcasting rank 0's bytes");
  }
  void max(std::span<std::int64_t> values) override {
    MPI_Request req;
    check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_MAX,
                         MPI_COMM_WORLD, &req),
          "agreeing on a turn's outcome");
    wait_sleeping(req, "agreeing on a turn's outcome");
  }
  std::vector<std::string> allgather(const std::string& mine) override {
    int n = static_cast<int>(mine.size());
    std::vector<int> sizes(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD), "gathering sizes");
    int total = 0;
    for (int r = 0; r < size_; ++r) offsets[r] = total, total += sizes[r];
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
          "gathering the ranks' descriptions");
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(offsets[r], sizes[r]));
    return out;
  }
  void barrier() override {
    MPI_Request req;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &req), "waiting for every rank");
    wait_sleeping(req, "waiting for every rank");
  }
  std::unique_ptr<sim::Halo> make_halo(int cuda_device) override {
    return std::make_unique<MpiHalo>(*this, cuda_device);
  }
  [[noreturn]] void abort(int code) noexcept override {
    MPI_Abort(MPI_COMM_WORLD, code);
    ::_exit(code);
  }

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

MpiHalo::MpiHalo(MpiComm& comm, int cuda_device) {
  if (comm.rank() > 0) up_ = comm.rank() - 1;
  if (comm.rank() + 1 < comm.size()) down_ = comm.rank() + 1;
  if (cuda_device < 0) return;
#ifdef CUVIEW_HAVE_NCCL
  // NCCL needs one GPU per rank: say so instead of NCCL's "duplicate GPU".
  char host[256] = {};
  (void)::gethostname(host, sizeof host - 1);
  char pci[32] = {};
  if (cudaDeviceGetPCIBusId(pci, sizeof pci, cuda_device) != cudaSuccess) std::snprintf(pci, sizeof pci, "%d", cuda_device);
  const auto where = comm.allgather(std::string(host) + " GPU " + pci);
  for (int r = 0; r < comm.size(); ++r)
    for (int q = 0; q < r; ++q)
      if (where[r] == where[q])
        throw Error(Errc::bad_value, "ranks " + std::to_string(q) + " and " + std::to_string(r) + " both run on " +
                                         where[r] + ": NCCL moves halos between distinct GPUs; run at most one rank per "
                                         "GPU (mpirun -n ≤ the GPUs of each host), or use --backend host");
  const Nccl& nccl = Nccl::get();
  ncclUniqueId id{};
  if (comm.rank() == 0) nccl.check(nccl.GetUniqueId(&id), "ncclGetUniqueId");
  std::string bytes(reinterpret_cast<const char*>(&id), sizeof id);
  comm.broadcast(bytes);
  std::memcpy(&id, bytes.data(), sizeof id);
  int before = 0;
  cudaGetDevice(&before);
  cudaSetDevice(cuda_device);  // NCCL binds the communicator to the current device
  const ncclResult_t rc = nccl.CommInitRank(&nccl_, comm.size(), id, comm.rank());
  cudaSetDevice(before);
  nccl.check(rc, "ncclCommInitRank");
  int version = 0;
  nccl.GetVersion(&version);
  if (comm.rank() == 0) spdlog::info("halos between GPUs through NCCL {}", version);
#else
  throw Error(Errc::unsupported,
              "this cuview-compute was built without NCCL (nccl.h was not found), so its CUDA ranks cannot "
              "exchange halos; rebuild with NCCL's headers, or run with --backend host");
#endif
}

MpiHalo::~MpiHalo() {
#ifdef CUVIEW_HAVE_NCCL
  if (nccl_ != nullptr) Nccl::get().CommDestroy(nccl_);
#endif
}

void MpiHalo::exchange(const void* to_up, void* from_up, const void* to_down, void* from_down, std::size_t bytes,
                       bool device, cuda::StreamRef stream) {
  if (device) {
#ifdef CUVIEW_HAVE_NCCL
    // One group: NCCL's point-to-point calls of one exchange must be grouped or they can deadlock.
    const Nccl& nccl = Nccl::get();
    auto* s = reinterpret_cast<cudaStream_t>(stream.get());
    nccl.check(nccl.GroupStart(), "ncclGroupStart");
    if (up_ != MPI_PROC_NULL) {
      nccl.check(nccl.Send(to_up, bytes, ncclChar, up_, nccl_, s), "ncclSend (halo up)");
      nccl.check(nccl.Recv(from_up, bytes, ncclChar, up_, nccl_, s), "ncclRecv (halo up)");
    }
    if (down_ != MPI_PROC_NULL) {
      nccl.check(nccl.Send(to_down, bytes, ncclChar, down_, nccl_, s), "ncclSend (halo down)");
      nccl.check(nccl.Recv(from_down, bytes, ncclChar, down_, nccl_, s), "ncclRecv (halo down)");
    }
    nccl.check(nccl.GroupEnd(), "ncclGroupEnd");
    return;
#else
    throw Error(Errc::unsupported, "device halo without NCCL");
#endif
  }
  (void)stream;
  MPI_Request reqs[4];
  const int n = static_cast<int>(bytes);
  check(MPI_Irecv(from_up, n, MPI_BYTE, up_, 1, MPI_COMM_WORLD, &reqs[0]), "receiving the halo from above");
  check(MPI_Irecv(from_down, n, MPI_BYTE, down_, 0, MPI_COMM_WORLD, &reqs[1]), "receiving the halo from below");
  check(MPI_Isend(to_up, n, MPI_BYTE, up_, 0, MPI_COMM_WORLD, &reqs[2]), "sending the halo up");
  check(MPI_Isend(to_down, n, MPI_BYTE, down_, 1, MPI_COMM_WORLD, &reqs[3]), "sending the halo down");
  check(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE), "exchanging halos");
}

}  // namespace

std::unique_ptr<Comm> init_mpi(int* argc, char*** argv) {
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "initialising");
  return std::make_unique<MpiComm>();
}

}  // namespace cuview::parts
