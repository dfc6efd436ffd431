// The publisher's MPI layer for C and Fortran (cuview/publisher_mpi.h) on cuview/mpi_parts.hpp,
// in its own library (libcuview-publisher-mpi.so) so that libcuview-publisher.so never links MPI.
#include "cuview/publisher_mpi.h"

#include <memory>

#include "c_api/publisher_handle.hpp"
#include "cuview/mpi_parts.hpp"

using namespace cuview::capi;

namespace {

cuview_status create(MPI_Comm comm, const char* name, const char* backend, int device, const char* sharing,
                     const char* options, uint32_t ndim, const uint64_t* global, const uint64_t* offset,
                     cuview_publisher** out) {
  if (name == nullptr || global == nullptr || offset == nullptr || out == nullptr)
    return null_argument("cuview_publisher_mpi_create");
  *out = nullptr;
  return guarded([&] {
    std::vector<std::uint32_t> g, o;
    for (uint32_t i = 0; i < ndim && i < 4; ++i) {
      g.push_back(static_cast<std::uint32_t>(global[i]));
      o.push_back(static_cast<std::uint32_t>(offset[i]));
    }
    auto opts = options_of(name, backend, device, sharing, options);
    opts.part = cuview::mpi::part_options(comm, std::move(g), std::move(o));  // collective
    auto p = std::make_unique<cuview_publisher>(std::move(opts));
    p->params = p->pub.params();
    *out = p.release();
  });
}

cuview_status turn(cuview_publisher* pub, MPI_Comm comm, uint64_t wanted, int stop, uint64_t* steps) {
  if (pub == nullptr || steps == nullptr) return null_argument("cuview_publisher_mpi_turn");
  return guarded([&] {
    pub->check_started("cuview_publisher_mpi_turn");
    auto t = cuview::mpi::next_turn(pub->pub, comm, wanted, stop != 0);
    t.requests.shutdown = t.stop;
    pub->take(std::move(t.requests));
    pub->params = pub->pub.params();
    *steps = t.steps;
  });
}

cuview_status publish(cuview_publisher* pub, MPI_Comm comm, uint64_t step, double time, const void* const* data,
                      void* stream, int* published) {
  if (pub == nullptr) return null_argument("cuview_publisher_mpi_publish");
  return guarded([&] {
    pub->check_started("cuview_publisher_mpi_publish");
    const auto s = cuview::cuda::StreamRef(static_cast<CUstream_st*>(stream));
    bool p = false;
    if (data == nullptr) {
      p = cuview::mpi::publish(pub->pub, comm, step, time, s);
    } else {
      check_arrays(*pub, pub->field_names.size(), data);
      p = cuview::mpi::publish(pub->pub, comm, step, time, copier(*pub, data, s), s);
    }
    if (published != nullptr) *published = p ? 1 : 0;
  });
}

}  // namespace

extern "C" {

cuview_status cuview_publisher_mpi_create(MPI_Comm comm, const char* name, const char* backend, int device,
                                          const char* sharing, const char* options, uint32_t ndim,
                                          const uint64_t* global, const uint64_t* offset, cuview_publisher** out) {
  return create(comm, name, backend, device, sharing, options, ndim, global, offset, out);
}
cuview_status cuview_publisher_mpi_turn(cuview_publisher* pub, MPI_Comm comm, uint64_t wanted, int stop,
                                        uint64_t* steps) {
  return turn(pub, comm, wanted, stop, steps);
}
cuview_status cuview_publisher_mpi_publish(cuview_publisher* pub, MPI_Comm comm, uint64_t step, double time,
                                           const void* const* data, void* stream, int* published) {
  return publish(pub, comm, step, time, data, stream, published);
}

cuview_status cuview_publisher_mpi_create_f(MPI_Fint comm, const char* name, const char* backend, int device,
                                            const char* sharing, const char* options, uint32_t ndim,
                                            const uint64_t* global, const uint64_t* offset, cuview_publisher** out) {
  return create(MPI_Comm_f2c(comm), name, backend, device, sharing, options, ndim, global, offset, out);
}
cuview_status cuview_publisher_mpi_turn_f(cuview_publisher* pub, MPI_Fint comm, uint64_t wanted, int stop,
                                          uint64_t* steps) {
  return turn(pub, MPI_Comm_f2c(comm), wanted, stop, steps);
}
cuview_status cuview_publisher_mpi_publish_f(cuview_publisher* pub, MPI_Fint comm, uint64_t step, double time,
                                             const void* const* data, void* stream, int* published) {
  return publish(pub, MPI_Comm_f2c(comm), step, time, data, stream, published);
}

}  // extern "C"
