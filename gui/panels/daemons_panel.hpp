// The Daemons dock: the daemons running for this user (DaemonLister's list), with Attach and
// Detach buttons. A double-click attaches.
#pragma once

#include <QDockWidget>
#include <QList>
#include <QStringList>

#include "worker/daemon_lister.hpp"

class QListWidget;

namespace cuview::gui {

class DaemonsPanel : public QDockWidget {
  Q_OBJECT
 public:
  /// A dock of `window`, which places it.
  explicit DaemonsPanel(QWidget* window);
  /// Shows `daemons`, updating entries in place so that a selection, a hover or a double-click in
  /// progress survive; `attached` is selected when it first appears and nothing else is.
  void show_daemons(const QList<DaemonEntry>& daemons, const QString& attached);
  [[nodiscard]] QStringList names() const;
  /// What the Attach button does: asks to attach to the selected daemon; with none selected, to the
  /// only one listed; otherwise says what to pick.
  void attach_selected();

 Q_SIGNALS:
  void attach_requested(const QString& name);
  void detach_requested();
  void error(const QString& message);

 private:
  QListWidget* list_ = nullptr;
};

}  // namespace cuview::gui
