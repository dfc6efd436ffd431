// Frame (one held slot, or a fetched frame in host memory) and FrameGroup (the frames of one step
// from every part of a run).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "client/imports.hpp"
#include "client/run_state.hpp"
#include "cuview/frame.hpp"
#include "cuview/schema.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "client/device_checksum.hpp"
#include "cuview/cuda/check.hpp"
#endif

namespace cuview {

namespace detail {
/// The slot layout a description states, checked before anything is mapped: fields in order,
/// aligned, whole words, inside the slot and before the trailer.
SlotLayout layout_of(const proto::DescribeResult& d) {
  SlotLayout l;
  std::size_t end = 0;
  auto add = [&](const proto::FieldDesc& f, const std::string& what) {
    if (f.offset % kFieldAlign != 0 || f.bytes % 4 != 0 || f.offset < end || f.offset + f.bytes > d.trailer_offset)
      throw Error(Errc::bad_message, what + " '" + f.name + "' at offset " + std::to_string(f.offset) + " with " +
                                         std::to_string(f.bytes) + " bytes does not fit a slot whose trailer is at " +
                                         std::to_string(d.trailer_offset) + "; the daemon's description is corrupt");
    l.fields.push_back({f.offset, f.bytes});
    end = f.offset + f.bytes;
  };
  // The slot holds the fields, then each particle set's attributes, in that order.
  for (const auto& f : d.fields) add(f, "field");
  for (const auto& set : d.particles)
    for (const auto& a : set.attributes) add(a, "particle attribute " + set.name + ".");
  if (d.trailer_offset + sizeof(SlotTrailer) > d.slot_bytes)
    throw Error(Errc::bad_message, "the trailer at " + std::to_string(d.trailer_offset) + " does not fit a slot of " +
                                       std::to_string(d.slot_bytes) + " bytes; the daemon's description is corrupt");
  l.trailer_offset = d.trailer_offset;
  l.slot_bytes = d.slot_bytes;
  return l;
}

namespace {
/// One slot of host memory, as a sharing mechanism would have mapped it.
class FetchedSlots final : public share::ImportedSlots {
 public:
  explicit FetchedSlots(std::size_t bytes) : ImportedSlots(1), memory_(bytes) { slots_[0] = memory_.data(); }
  std::byte* data() { return memory_.data(); }

 private:
  void map(std::uint32_t) override {}  // its one slot exists from the start
  std::vector<std::byte> memory_;
};
}  // namespace

FetchedFrame make_fetched_frame(const proto::DescribeResult& d) {
  auto imp = std::make_shared<Imports>();
  imp->backend = "host";
  imp->layout = layout_of(d);
  auto slots = std::make_unique<FetchedSlots>(imp->layout.slot_bytes);
  std::byte* data = slots->data();
  imp->slots = std::move(slots);
  return {std::move(imp), data};
}

Frame finish_fetched_frame(FetchedFrame f, const FrameInfo& info) {
  const auto& l = f.imports->layout;
  const SlotTrailer t{info.seq, info.step, slot_checksum(f.data, l, info.fields), static_cast<std::uint64_t>(info.stamp_ns)};
  std::memcpy(f.data + l.trailer_offset, &t, sizeof t);
  return FrameAccess::frame(std::move(f.imports), info);
}
}  // namespace detail

// ---------------------------------------------------------------- Frame

Frame::Frame(std::shared_ptr<const detail::Imports> imports, const FrameInfo& info) noexcept
    : imports_(std::move(imports)), info_(info) {}

Frame::Frame(Frame&& other) noexcept : imports_(std::move(other.imports_)), info_(other.info_) {}

Frame& Frame::operator=(Frame&& other) noexcept {
  if (this != &other) {
    if (imports_) imports_->ring.release(info_.slot);
    imports_ = std::move(other.imports_);
    info_ = other.info_;
  }
  return *this;
}

Frame::~Frame() {
  if (imports_) imports_->ring.release(info_.slot);
}

const float* Frame::host_field(std::size_t field) const noexcept {
  if (!imports_ || imports_->is_cuda() || field >= imports_->layout.fields.size() || !holds(field)) return nullptr;
  return reinterpret_cast<const float*>(imports_->slots->slot(info_.slot) + imports_->layout.fields[field].offset);
}

const void* Frame::device_slot() const noexcept {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) return imports_->slots->slot(info_.slot);
#endif
  return nullptr;
}

int Frame::device() const noexcept {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) return imports_->device;
#endif
  return -1;
}

const void* Frame::slot_data() const noexcept {
  if (!imports_) return nullptr;
  if (const void* d = device_slot()) return d;
  return imports_->slots->slot(info_.slot);
}

void Frame::wait_on([[maybe_unused]] cuda::StreamRef stream) const {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) {
    cuda::DeviceGuard guard(imports_->device);
    cuda::check(cudaStreamWaitEvent(stream.get(), imports_->event(info_.slot).get(), 0),
                "cudaStreamWaitEvent on the interprocess event of frame " + std::to_string(info_.seq));
  }
#endif
}

void Frame::wait() const {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) {
    cuda::DeviceGuard guard(imports_->device);
    cuda::check(cudaEventSynchronize(imports_->event(info_.slot).get()),
                "cudaEventSynchronize on the interprocess event of frame " + std::to_string(info_.seq));
  }
#endif
}

bool Frame::ready() const {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) {
    cuda::DeviceGuard guard(imports_->device);
    const cudaError_t e = cudaEventQuery(imports_->event(info_.slot).get());
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();  // not an error: clear it from the thread's state
      return false;
    }
    cuda::check(e, "cudaEventQuery on the interprocess event of frame " + std::to_string(info_.seq));
  }
#endif
  return true;
}

SlotTrailer Frame::trailer() const {
  if (!imports_) throw Error(Errc::bad_value, "trailer() on a moved-from Frame");
  SlotTrailer t{};
  const auto offset = imports_->layout.trailer_offset;
#ifdef CUVIEW_HAVE_CUDA
  if (imports_->is_cuda()) {
    wait();
    cuda::DeviceGuard guard(imports_->device);
    const auto* src = imports_->slots->slot(info_.slot) + offset;
    cuda::check(cudaMemcpy(&t, src, sizeof t, cudaMemcpyDeviceToHost),
                "copying the trailer of frame " + std::to_string(info_.seq) + " to the host");
    return t;
  }
#endif
  std::memcpy(&t, imports_->slots->slot(info_.slot) + offset, sizeof t);
  return t;
}

void Frame::copy_to_host(std::span<std::byte> dst) const {
  if (!imports_) throw Error(Errc::bad_value, "copy_to_host on a moved-from Frame");
  const auto bytes = imports_->layout.slot_bytes;
  if (dst.size() < bytes)
    throw Error(Errc::bad_value,
                "copy_to_host needs " + std::to_string(bytes) + " bytes, got " + std::to_string(dst.size()));
  copy_to_host(0, dst.first(bytes));
}

void Frame::copy_to_host(std::size_t offset, std::span<std::byte> dst) const {
  if (!imports_) throw Error(Errc::bad_value, "copy_to_host on a moved-from Frame");
  const auto slot_bytes = imports_->layout.slot_bytes;
  if (offset > slot_bytes || dst.size() > slot_bytes - offset)
    throw Error(Errc::out_of_range, "copy_to_host of " + std::to_string(dst.size()) + " bytes at offset " +
                                        std::to_string(offset) + " runs past the slot's " +
                                        std::to_string(slot_bytes) + " bytes");
#ifdef CUVIEW_HAVE_CUDA
  if (imports_->is_cuda()) {
    const std::string what = " for frame " + std::to_string(info_.seq) + " (slot " + std::to_string(info_.slot) + ")";
    wait();  // on the host: a stream of ours waiting on the publisher's event would cost it a context switch
    cuda::DeviceGuard guard(imports_->device);
    auto s = imports_->stream.get();
    cuda::check(cudaMemcpyAsync(dst.data(), imports_->slots->slot(info_.slot) + offset, dst.size(),
                                cudaMemcpyDeviceToHost, s),
                "cudaMemcpyAsync device to host" + what);
    cuda::check(cudaStreamSynchronize(s), "cudaStreamSynchronize" + what);
    return;
  }
#endif
  std::memcpy(dst.data(), imports_->slots->slot(info_.slot) + offset, dst.size());
}

void Frame::synchronize_device() const {
#ifdef CUVIEW_HAVE_CUDA
  if (imports_ && imports_->is_cuda()) {
    cuda::DeviceGuard guard(imports_->device);
    cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize on GPU " + std::to_string(imports_->device) +
                                             " before releasing frame " + std::to_string(info_.seq));
  }
#endif
}

std::optional<std::string> Frame::verify() const {
  if (!imports_) throw Error(Errc::bad_value, "verify() on a moved-from Frame");
  const auto& l = imports_->layout;
  // The fields the frame holds, summed where they lie: on CUDA by the GPU that holds them (a
  // 1024³ flow's slot is 26 GB, half a minute through the host), in host memory as mapped. The
  // trailer after them, so that a slot overwritten meanwhile shows as another frame's.
  const std::string frame = "frame " + std::to_string(info_.seq) + " (slot " + std::to_string(info_.slot) + ")";
  std::vector<SlotLayout::Field> held;
  for (std::size_t i = 0; i < l.fields.size(); ++i) {
    if (!has_block(info_.fields, i)) continue;
    auto f = l.fields[i];  // a packed frame's fields cover their packed cells only
    if (info_.every > 1 && i < imports_->fields.size()) f.bytes = proto::packed_field(imports_->fields[i], info_.every).bytes;
    held.push_back(f);
  }
  std::uint64_t sum = 0;
#ifdef CUVIEW_HAVE_CUDA
  if (imports_->is_cuda()) {
    wait();
    cuda::DeviceGuard guard(imports_->device);
    const std::lock_guard lock(imports_->verify_mutex);
    if (!imports_->verify_sum.get()) imports_->verify_sum = cuda::DeviceBuffer(sizeof(std::uint64_t));
    sum = detail::device_checksum(imports_->slots->slot(info_.slot), held, imports_->stream.get(),
                                  static_cast<std::uint64_t*>(imports_->verify_sum.get()), frame);
  }
#endif
  if (!imports_->is_cuda()) {
    const auto* slot = imports_->slots->slot(info_.slot);
    for (const auto& f : held) sum += span_checksum(slot + f.offset, f.bytes, f.offset);
  }
  const SlotTrailer t = trailer();
  if (t.seq != info_.seq)
    return frame + ": the slot's trailer says frame " + std::to_string(t.seq) + ", so the data was overwritten";
  if (t.step != info_.step)
    return frame + ": the slot's trailer says step " + std::to_string(t.step) + ", the ring said " +
           std::to_string(info_.step);
  // The trailer and checksum only: what the values mean is the simulation's business.
  if (sum != t.checksum) return frame + ": checksum mismatch: the data is torn or corrupt";
  return std::nullopt;
}

namespace {
/// The bytes of one cell of a field: components × the dtype's size.
std::size_t cell_bytes(const proto::FieldDesc& f) {
  const auto dtype = parse_dtype(f.dtype);
  if (!dtype) throw Error(Errc::bad_message, "field '" + f.name + "' has dtype '" + f.dtype + "', which this client does not know");
  return size_of(*dtype) * f.components;
}
}  // namespace

// ---------------------------------------------------------------- FrameGroup

FrameGroup::FrameGroup(std::shared_ptr<const detail::GroupLayout> layout, std::vector<Frame> frames,
                       std::uint64_t step) noexcept
    : layout_(std::move(layout)), frames_(std::move(frames)), step_(step) {}
FrameGroup::FrameGroup(FrameGroup&&) noexcept = default;
FrameGroup& FrameGroup::operator=(FrameGroup&&) noexcept = default;
FrameGroup::~FrameGroup() = default;


const Frame& FrameGroup::part(std::size_t k) const {
  detail::check_part_index(k, frames_.size(), layout_->name);
  return frames_[k];
}

const proto::PartDesc& FrameGroup::part_desc(std::size_t k) const {
  detail::check_part_index(k, layout_->parts.size(), layout_->name);
  return layout_->parts[k];
}

Extent FrameGroup::extent() const { return layout_->extent; }

Block FrameGroup::block(std::size_t k) const {
  detail::check_part_index(k, layout_->blocks.size(), layout_->name);
  return layout_->blocks[k];
}

namespace {
/// Where field `field` of part `k` goes: its block of the whole grid, and that grid. A run of parts
/// decomposes its first grid; a run of one publisher may hold fields of other grids, each whole.
std::pair<Block, Axes> placement(const detail::GroupLayout& l, std::size_t k, std::size_t field) {
  if (l.parts.size() != 1 || l.parts[0].count > 1) return {l.blocks[k], l.extent.dims};  // a run of parts
  const auto& f = l.fields[0][field];
  Axes cells = f.shape;
  if (f.components > 1 && !cells.empty()) cells.pop_back();
  return {Block{Axes(cells.size(), 0), cells}, cells};
}
}  // namespace

std::size_t FrameGroup::global_field_bytes(std::size_t field) const {
  const auto& fields = layout_->fields.front();
  if (field >= fields.size())
    throw Error(Errc::out_of_range, "field " + std::to_string(field) + " of '" + layout_->name +
                                        "' does not exist: it has " + std::to_string(fields.size()) + " fields");
  return Extent{placement(*layout_, 0, field).second}.cells() * cell_bytes(fields[field]);
}

void FrameGroup::check_field_buffer(std::size_t field, std::size_t bytes) const {
  const std::size_t need = global_field_bytes(field);
  if (bytes != need)
    throw Error(Errc::bad_value, "copying field '" + layout_->fields.front()[field].name + "' of '" + layout_->name +
                                     "' needs a buffer of " + std::to_string(need) + " bytes (its global grid), not " +
                                     std::to_string(bytes));
  if (holds(field)) return;
  for (std::size_t k = 0; k < frames_.size(); ++k)
    if (!frames_[k].holds(field))
      throw Error(Errc::bad_value, "frame " + std::to_string(frames_[k].info().seq) + " of " +
                                       detail::part_who(layout_->name, static_cast<std::uint32_t>(k)) +
                                       " does not hold field '" + layout_->fields.front()[field].name +
                                       "': no reader read it when it was published; read it (read_fields, or every "
                                       "field by default) and take the next frame");
}

bool FrameGroup::holds(std::size_t field) const noexcept {
  return std::all_of(frames_.begin(), frames_.end(), [&](const Frame& f) { return f.holds(field); });
}

void FrameGroup::copy_field_to_host(std::size_t field, std::span<std::byte> dst) const {
  check_field_buffer(field, dst.size());
  const std::size_t cell = cell_bytes(layout_->fields.front()[field]);
  std::vector<std::byte> block;
  for (std::size_t k = 0; k < frames_.size(); ++k) {
    const auto& f = layout_->fields[k][field];
    // One copy per block (on CUDA one transfer), then rows into place.
    const auto [at, whole] = placement(*layout_, k, field);
    block.resize(Extent{at.dims}.cells() * cell);
    frames_[k].copy_to_host(f.offset, block);
    place_block(at, block, whole, dst, cell);
  }
}

void FrameGroup::copy_field_to_device(std::size_t field, [[maybe_unused]] void* dst, std::size_t bytes) const {
  check_field_buffer(field, bytes);
  const auto& name = layout_->fields.front()[field].name;
  if (frames_.front().device() < 0)
    throw Error(Errc::unsupported, "'" + layout_->name + "' runs on the host backend: its field '" + name +
                                       "' is in host memory; copy it to the host (copy_field_to_host, or assemble() "
                                       "with host=True in Python)");
#ifdef CUVIEW_HAVE_CUDA
  const std::size_t cell = cell_bytes(layout_->fields.front()[field]);
  for (std::size_t k = 0; k < frames_.size(); ++k) {
    const Frame& frame = frames_[k];
    const std::string who = "field '" + name + "' of " + detail::part_who(layout_->name, static_cast<std::uint32_t>(k));
    const auto* src = static_cast<const std::byte*>(frame.device_slot()) + layout_->fields[k][field].offset;
    frame.wait();  // on the host: a stream of ours waiting on the publisher's event would cost it a context switch
    cuda::DeviceGuard guard(frame.device());
    const auto [at, whole] = placement(*layout_, k, field);
    for (const Copy2D& c : block_copies(at, whole, cell))
      cuda::check(cudaMemcpy2D(static_cast<std::byte*>(dst) + c.dst, c.dst_pitch, src + c.src, c.src_pitch, c.width,
                               c.height, cudaMemcpyDefault),
                  "copying " + who + " into the GPU buffer");
    // A copy between device buffers returns before it is done: done before the frame may be released.
    cuda::check(cudaStreamSynchronize(cudaStreamLegacy), "waiting for the copy of " + who);
  }
#endif
}

std::optional<std::string> FrameGroup::verify() const {
  for (std::size_t k = 0; k < frames_.size(); ++k) {
    if (auto problem = frames_[k].verify()) {
      if (frames_.size() == 1) return problem;
      return detail::part_who(layout_->name, static_cast<std::uint32_t>(k)) + ", " + *problem;
    }
  }
  return std::nullopt;
}


}  // namespace cuview
