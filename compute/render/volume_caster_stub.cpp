// A build without CUDA: the GPU caster says so (the CPU caster, gui/render/volume_render.hpp,
// draws volumes there).
#include "cuview/error.hpp"
#include "render/volume_caster.hpp"

namespace cuview {
struct VolumeCaster::Impl {};
VolumeCaster::VolumeCaster() = default;
VolumeCaster::~VolumeCaster() = default;
namespace {
[[noreturn]] void no_cuda() {
  throw Error(Errc::unsupported, "the GPU volume caster needs a build with CUDA (this one has none); "
                                 "the CPU caster draws volumes without it");
}
}  // namespace
void VolumeCaster::cast_on_device(const VolumeBrick&, const VolumeCamera&, VolumeMode, const VolumeStyle&, int, int,
                                  cuda::StreamRef, std::uint32_t*, float*) {
  no_cuda();
}
void VolumeCaster::reserve(const VolumeBrick&) { no_cuda(); }
void VolumeCaster::cast(const VolumeBrick&, const VolumeCamera&, VolumeMode, const VolumeStyle&, int, int,
                        cuda::StreamRef, VolumePicture&) {
  no_cuda();
}
struct AsyncPicture::Impl {};
AsyncPicture::AsyncPicture(int) { no_cuda(); }
AsyncPicture::~AsyncPicture() = default;
void AsyncPicture::queue(const VolumeBrick&, const VolumeCamera&, VolumeMode, const VolumeStyle&, int, int,
                         cuda::StreamRef, bool) {
  no_cuda();
}
void AsyncPicture::queue_plane(const PlaneCells&, const std::uint32_t*, float, float, int, int, cuda::StreamRef, bool) {
  no_cuda();
}
bool AsyncPicture::busy() const noexcept { return false; }
std::optional<double> AsyncPicture::collect(VolumePicture&) { return std::nullopt; }
void AsyncPicture::hold(cuda::StreamRef) const {}
}  // namespace cuview
