// Particle sets in the viewer's field list: one entry per way of colouring a set's points.
#pragma once

#include <QString>
#include <QStringList>
#include <cstddef>
#include <vector>

#include "cuview/protocol.hpp"

namespace cuview::gui {

/// A particle set drawn as points, coloured by one of its attributes (its magnitude for vectors).
struct PointView {
  std::size_t set = 0;
  int colour = -1;  ///< index into the set's attributes; −1: one colour
  QString label;    ///< "SET (points by ATTR)", or "SET (points)" when nothing can colour it
};
/// The point views a description offers, after its fields in the viewer's list: one per
/// attribute other than position, velocity first.
std::vector<PointView> point_views(const proto::DescribeResult& d);
/// The index in `labels` that `name` picks: the label itself, or "SET (points)" for SET's first view.
int find_view(const QStringList& labels, const QString& name);

}  // namespace cuview::gui
