#include "publisher/frame_writer.hpp"

namespace cuview {

std::size_t field_bytes(const sim::FieldSpec& field, std::uint32_t width, std::uint32_t height) {
  return std::size_t{width} * height * field.components * sim::size_of(field.dtype);
}

SlotLayout layout_for(const std::vector<sim::FieldSpec>& fields, std::uint32_t width, std::uint32_t height) {
  std::vector<std::size_t> bytes;
  for (const auto& f : fields) bytes.push_back(field_bytes(f, width, height));
  return SlotLayout::make(bytes);
}

FrameWriter::FrameWriter(Executor& executor, sim::Simulation& simulation, std::uint32_t width, std::uint32_t height)
    : executor_(executor), simulation_(simulation) {
  const auto fields = simulation.fields();
  layout_ = layout_for(fields, width, height);
  for (const auto& f : fields) bytes_.push_back(field_bytes(f, width, height));
  targets_.resize(fields.size());
}

void FrameWriter::write(void* slot, std::uint64_t seq, std::uint64_t step) {
  auto* base = static_cast<std::byte*>(slot);
  for (std::size_t f = 0; f < targets_.size(); ++f) targets_[f] = {base + layout_.fields[f].offset, bytes_[f]};
  simulation_.write_fields(targets_);
  executor_.seal(slot, layout_, seq, step);
}

}  // namespace cuview
