// The handle behind cuview_publisher (cuview/publisher.h), shared by the C API's two halves:
// publisher_c.cpp and the MPI layer (publisher_mpi_c.cpp, libcuview-publisher-mpi.so).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "c_api/status.hpp"
#include "cuview/publisher.h"
#include "cuview/publisher.hpp"

struct cuview_publisher {
  explicit cuview_publisher(cuview::PublisherOptions options);
  cuview::Publisher pub;
  cuview::Requests requests;                            // the last poll's (or MPI turn's)
  std::vector<std::pair<std::string, double>> changed;  // requests.params, indexable
  std::map<std::string, double> params;                 // in effect
  cuview::proto::CheckpointStatus checkpoint;
  std::vector<std::size_t> field_bytes;  // per declared field, for cuview_publisher_publish_data
  std::vector<std::string> field_names;
  std::vector<std::optional<cuview::Section>> field_sections;  // a strided field's layout (publish_data reads it)
  bool started = false;                 // cuview_publisher_start was called
  mutable std::string backend, device;  // the last cuview_publisher_backend / _device

  /// Makes `r` the requests the accessors read (and its parameters those in effect).
  void take(cuview::Requests r);
  /// Hands `checkpoint` to the publisher (stats).
  void report();
  /// Throws Error(bad_value) naming `call` before cuview_publisher_start.
  void check_started(const char* call) const;
};

namespace cuview::capi {
/// What cuview_publisher_create's arguments say (its options string parsed); throws
/// Error(bad_value | out_of_range) naming an option that is not one.
cuview::PublisherOptions options_of(const char* name, const char* backend, int device, const char* sharing,
                                    const char* options);
/// What the typed options say, checked (the one conversion: the options string is parsed into them).
cuview::PublisherOptions options_from(const char* name, const char* backend, int device, const char* sharing,
                                      const cuview_publisher_options& options);
/// Throws Error(bad_value) naming the field when `data` does not hold one array per field, each
/// where the publisher can read it.
void check_arrays(const cuview_publisher& pub, std::size_t count, const void* const* data);
/// Throws Error(bad_value) naming the field whose array is on another GPU than the publisher's.
void check_devices(const cuview_publisher& pub, std::size_t count, const void* const* data);
/// The FieldWriter that copies data[k] into field k's target (the fields read), on `stream`,
/// after check_devices: what publish_data gives the publisher (also the MPI layer's).
cuview::FieldWriter copier(const cuview_publisher& pub, const void* const* data, cuview::cuda::StreamRef stream);
}  // namespace cuview::capi
