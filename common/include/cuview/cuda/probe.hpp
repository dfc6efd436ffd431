// Whether the CUDA backend can run on a GPU here, and if not, why in words. Only built with CUDA
// (CUVIEW_HAVE_CUDA).
#pragma once

#include <string>

namespace cuview::cuda {

/// What `probe` found: whether the CUDA backend can run here, and if not, why.
struct Probe {
  bool usable = false;
  std::string reason;  ///< when not usable: a sentence naming the failing call
  int device = -1;
  std::string name;  ///< e.g. "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;
  int driver_version = 0, runtime_version = 0;
};
/// Whether `device` can run the CUDA backend. Never throws: a machine without a driver is an
/// answer, not an error.
Probe probe(int device = 0) noexcept;

/// Loads and initialises the CUDA driver (tens of milliseconds) without making a context on any
/// GPU, so that a program can do it on a thread of its own while it starts (cuview-gui does).
void init_driver() noexcept;

}  // namespace cuview::cuda
