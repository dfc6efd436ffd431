// What a run (run.hpp) keeps of its parts, shared by the local Group and the RemoteGroup: the
// parts' connections, where each part's block lies, and how a part's going is told.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuview/attachment.hpp"
#include "cuview/protocol.hpp"

namespace cuview::detail {

/// What a FrameGroup needs to place each part's block: shared by the run and its FrameGroups,
/// so that a FrameGroup outliving its run can still be assembled.
struct GroupLayout {
  std::string name;
  std::vector<proto::PartDesc> parts;
  /// Each part's own field descriptions: blocks of different sizes put a field at different
  /// offsets in their slots.
  std::vector<std::vector<proto::FieldDesc>> fields;
  /// The global grid, and where each part's block lies in it (from `parts` and each part's grid).
  Extent extent;
  std::vector<Block> blocks;
};

/// "part K of 'NAME'".
std::string part_who(const std::string& name, std::uint32_t k);
/// Throws Error(out_of_range) naming the parts there are.
void check_part_index(std::size_t k, std::size_t size, const std::string& name);

struct RunState {
  std::string name;
  bool decomposed = false;
  std::vector<std::unique_ptr<Attachment>> parts;
  std::shared_ptr<GroupLayout> layout;
  /// The gateways given (remote); empty for a local run.
  std::vector<std::string> via;

  virtual ~RunState() = default;
  /// Fills `layout` from the parts attached (a whole publisher: one part covering its grid).
  void lay_out();
  /// "daemon 'NAME' (pid N)", or "part K of 'NAME' (rank R, pid N on HOST)".
  [[nodiscard]] std::string who(std::size_t k) const;
  [[nodiscard]] std::optional<std::string> gone_reason() const;
  [[noreturn]] void throw_gone(const std::string& reason) const;
  /// The reason part k gave as it went, if its notice came; empty otherwise.
  [[nodiscard]] virtual std::string farewell(std::size_t) const { return {}; }
};

}  // namespace cuview::detail
