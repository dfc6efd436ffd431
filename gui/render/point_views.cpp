#include "render/point_views.hpp"

#include "cuview/schema.hpp"

namespace cuview::gui {

std::vector<PointView> point_views(const proto::DescribeResult& d) {
  std::vector<PointView> out;
  for (std::size_t s = 0; s < d.particles.size(); ++s) {
    const auto& ps = d.particles[s];
    const QString name = QString::fromStdString(ps.name);
    std::vector<int> by;
    for (std::size_t a = 0; a < ps.attributes.size(); ++a) {
      const auto& at = ps.attributes[a];
      if (!parse_dtype(at.dtype) || at.name == "position") continue;
      if (at.name == "velocity")
        by.insert(by.begin(), static_cast<int>(a));
      else
        by.push_back(static_cast<int>(a));
    }
    if (by.empty()) out.push_back({s, -1, name + " (points)"});
    for (int a : by)
      out.push_back({s, a, QString("%1 (points by %2)").arg(name, QString::fromStdString(ps.attributes[a].name))});
  }
  return out;
}

int find_view(const QStringList& labels, const QString& name) {
  if (const int i = labels.indexOf(name); i >= 0) return i;
  if (name.endsWith(" (points)")) {  // a set's name alone: its first view
    const QString prefix = name.chopped(1);
    for (int i = 0; i < labels.size(); ++i)
      if (labels[i].startsWith(prefix)) return i;
  }
  return -1;
}

}  // namespace cuview::gui
