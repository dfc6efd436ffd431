// The status bar's labels in rows: left to right in the order they were added, and a label that no
// longer fits beside the others starts the next row. A window narrower than the labels' texts gets
// a taller status bar, never a short label cut to its first letters ("conn…" says nothing), so the
// window can still be made as narrow as a laptop's screen. A label wider than a whole row that may
// be cut short (a StatusLabel::Kind::description) is given the row.
#pragma once

#include <QLayout>
#include <QList>

namespace cuview::gui {

class StatusRowsLayout : public QLayout {
 public:
  explicit StatusRowsLayout(QWidget* parent = nullptr);
  ~StatusRowsLayout() override;
  StatusRowsLayout(const StatusRowsLayout&) = delete;
  StatusRowsLayout& operator=(const StatusRowsLayout&) = delete;

  void addItem(QLayoutItem* item) override;
  [[nodiscard]] int count() const override { return static_cast<int>(items_.size()); }
  [[nodiscard]] QLayoutItem* itemAt(int index) const override { return items_.value(index); }
  QLayoutItem* takeAt(int index) override;
  [[nodiscard]] Qt::Orientations expandingDirections() const override { return {}; }
  [[nodiscard]] bool hasHeightForWidth() const override { return true; }
  /// The rows' height when the labels share `width`.
  [[nodiscard]] int heightForWidth(int width) const override;
  /// Every label in one row.
  [[nodiscard]] QSize sizeHint() const override;
  /// As wide as the widest label that is never cut short, one row high.
  [[nodiscard]] QSize minimumSize() const override;
  void setGeometry(const QRect& rect) override;

 private:
  enum class Placement { measure, apply };
  /// Lays the labels out in `rect`'s width (or only measures it); returns the height they take.
  int arrange(const QRect& rect, Placement placement) const;

  QList<QLayoutItem*> items_;
};

}  // namespace cuview::gui
