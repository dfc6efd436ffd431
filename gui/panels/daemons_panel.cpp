#include "panels/daemons_panel.hpp"

#include <QAbstractItemView>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSet>
#include <QStyledItemDelegate>
#include <QVBoxLayout>
#include <algorithm>

namespace cuview::gui {
namespace {
/// The daemons' entries: each one's text wrapped at the width it is drawn in (the list's, less its
/// spacing). Qt's own size for an entry wraps the text at a width it was given earlier, and an
/// entry a few pixels narrower then draws its text in fewer lines than it needs: the last one (the
/// daemon's state) unseen.
class EntryDelegate : public QStyledItemDelegate {
 public:
  explicit EntryDelegate(QListView* list) : QStyledItemDelegate(list), list_(list) {}
  [[nodiscard]] QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QStyleOptionViewItem at(option);
    at.rect.setWidth(std::max(list_->viewport()->width() - 2 * list_->spacing(), 1));
    QSize s = QStyledItemDelegate::sizeHint(at, index);
    s.setWidth(std::min(s.width(), at.rect.width()));
    return s;
  }

 private:
  QListView* list_;
};
}  // namespace

DaemonsPanel::DaemonsPanel(QWidget* window, quint16 announce_port) : QDockWidget("Daemons", window) {
  setObjectName("daemons");
  auto* box = new QWidget;
  auto* column = new QVBoxLayout(box);
  list_ = new QListWidget;
  list_->setObjectName("daemons");
  // Entries wrap to the dock's width (long ones are elided, the whole text is the tooltip):
  // never a horizontal scroll bar hiding a daemon's state.
  list_->setWordWrap(true);
  list_->setTextElideMode(Qt::ElideRight);
  list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  list_->setResizeMode(QListView::Adjust);
  list_->setSpacing(2);
  list_->setItemDelegate(new EntryDelegate(list_));
  // Room for two entries of three lines (name, what it runs, its state) however short the window;
  // beyond them the list scrolls.
  const int entry = 3 * list_->fontMetrics().lineSpacing() + 2 * list_->spacing();
  list_->setMinimumHeight(2 * entry + 2 * list_->frameWidth());
  column->addWidget(list_);
  auto* attach = new QPushButton("Attach");
  attach->setObjectName("attach");
  attach->setToolTip("Attach to the selected daemon (or the only one running)");
  auto* detach = new QPushButton("Detach");
  detach->setObjectName("detach");
  detach->setToolTip("Stop reading frames; the simulation goes on");
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(attach);
  buttons->addWidget(detach);
  column->addLayout(buttons);
  connect(attach, &QPushButton::clicked, this, &DaemonsPanel::attach_selected);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  connect(list_, &QListWidget::itemDoubleClicked, this,
          [this](QListWidgetItem* item) {
            if (const QString name = item->data(Qt::UserRole).toString(); !name.isEmpty()) Q_EMIT attach_requested(name);
          });
  connect(detach, &QPushButton::clicked, this, &DaemonsPanel::detach_requested);

  auto* network = new QLabel("On the network");
  network->setToolTip("cuview gateways announcing themselves (cuview-gateway --announce); double-click one to list "
                      "its publishers. Connecting still needs its key (tcp://…?key=) or ssh access.");
  column->addWidget(network);
  gateways_ = new QListWidget;
  gateways_->setObjectName("gateways");
  gateways_->setMaximumHeight(120);
  column->addWidget(gateways_);
  connect(gateways_, &QListWidget::itemDoubleClicked, this,
          [this](QListWidgetItem* item) { Q_EMIT gateway_requested(item->data(Qt::UserRole).toString()); });
  beacons_ = new GatewayBeacons(announce_port, this);
  connect(beacons_, &GatewayBeacons::changed, this, &DaemonsPanel::show_gateways);
  show_gateways();
  setWidget(box);
}

void DaemonsPanel::show_daemons(const QList<DaemonEntry>& daemons, const QString& attached) {
  QSet<QString> listed;
  for (const auto& d : daemons) {
    listed.insert(d.name);  // an entry without a name says why nothing is listed: it cannot be attached
    const QString text = d.name.isEmpty() ? d.summary : d.name + "\n" + d.summary;
    QListWidgetItem* item = nullptr;
    for (int i = 0; i < list_->count() && item == nullptr; ++i)
      if (list_->item(i)->data(Qt::UserRole).toString() == d.name) item = list_->item(i);
    if (item == nullptr) {
      item = new QListWidgetItem(list_);
      item->setData(Qt::UserRole, d.name);
      if (d.name.isEmpty()) item->setFlags(Qt::ItemIsEnabled);
      if (list_->selectedItems().isEmpty() && d.name == attached) item->setSelected(true);
    }
    if (item->text() != text) item->setText(text);
    item->setToolTip(d.name + ": " + d.summary);
  }
  for (int i = list_->count() - 1; i >= 0; --i)
    if (!listed.contains(list_->item(i)->data(Qt::UserRole).toString())) delete list_->takeItem(i);
}

QStringList DaemonsPanel::names() const {
  QStringList out;
  for (int i = 0; i < list_->count(); ++i)
    if (const QString name = list_->item(i)->data(Qt::UserRole).toString(); !name.isEmpty()) out << name;
  return out;
}

QStringList DaemonsPanel::gateway_urls() const {
  QStringList out;
  for (int i = 0; i < gateways_->count(); ++i)
    if (const QString url = gateways_->item(i)->data(Qt::UserRole).toString(); !url.isEmpty()) out << url;
  return out;
}

void DaemonsPanel::show_gateways() {
  gateways_->clear();
  auto* here = new QListWidgetItem("this host", gateways_);
  here->setData(Qt::UserRole, QString());
  here->setToolTip("the daemons running on this host");
  for (const auto& g : beacons_->gateways()) {
    auto* item = new QListWidgetItem(QString("%1@%2\n%3").arg(g.user, g.host, g.url), gateways_);
    item->setData(Qt::UserRole, g.url);
    item->setToolTip(g.url + " — a tcp:// gateway still needs its key (append ?key=…) to connect");
  }
  if (!beacons_->listening_error().isEmpty()) {
    auto* deaf = new QListWidgetItem(beacons_->listening_error(), gateways_);
    deaf->setFlags(Qt::ItemIsEnabled);
  }
}

void DaemonsPanel::attach_selected() {
  // What is highlighted counts, not Qt's current item (which focus alone may set).
  if (const auto selected = list_->selectedItems(); !selected.isEmpty()) {
    Q_EMIT attach_requested(selected.front()->data(Qt::UserRole).toString());
    return;
  }
  const QStringList listed = names();
  if (listed.size() == 1) {
    list_->setCurrentRow(0, QItemSelectionModel::ClearAndSelect);
    Q_EMIT attach_requested(listed.front());
    return;
  }
  if (listed.isEmpty())
    Q_EMIT error(
        "no cuview-compute daemon is running for you; start one (cuview-compute --name NAME, or "
        "scripts/run.sh) and it appears in the Daemons list");
  else
    Q_EMIT error(QString("%1 daemons are running (%2): select one in the Daemons list, then Attach")
                     .arg(listed.size())
                     .arg(listed.join(", ")));
}

}  // namespace cuview::gui
