#include "publisher/frame_writer.hpp"

namespace cuview {

std::vector<std::size_t> block_bytes(const std::vector<sim::FieldSpec>& fields,
                                     const std::vector<sim::ParticleSetSpec>& particles, std::uint32_t width,
                                     std::uint32_t height) {
  std::vector<std::size_t> bytes;
  for (const auto& f : fields) bytes.push_back(std::size_t{width} * height * f.components * sim::size_of(f.dtype));
  for (const auto& set : particles)
    for (const auto& a : set.attributes) bytes.push_back(set.count * a.components * sim::size_of(a.dtype));
  return bytes;
}

FrameWriter::FrameWriter(Executor& executor, sim::Simulation& simulation, std::uint32_t width, std::uint32_t height)
    : executor_(executor), simulation_(simulation) {
  bytes_ = block_bytes(simulation.fields(), simulation.particle_sets(), width, height);
  layout_ = SlotLayout::make(bytes_);
  targets_.resize(bytes_.size());
}

void FrameWriter::write(void* slot, std::uint64_t seq, std::uint64_t step) {
  auto* base = static_cast<std::byte*>(slot);
  executor_.begin_frame(slot, layout_, executor_.stream());
  for (std::size_t f = 0; f < targets_.size(); ++f) targets_[f] = {base + layout_.fields[f].offset, bytes_[f]};
  simulation_.write_fields(targets_);
  executor_.seal(seq, step, executor_.stream());
}

}  // namespace cuview
