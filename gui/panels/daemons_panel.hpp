// The Daemons dock: the daemons running for this user (DaemonLister's list: this host's, or a
// gateway's publishers), with Attach and Detach buttons; a double-click attaches. Below, "On the
// network": the gateways announcing themselves (GatewayBeacons) and this host; a double-click
// lists that one's publishers above.
#pragma once

#include <QDockWidget>
#include <QList>
#include <QStringList>

#include "worker/daemon_lister.hpp"
#include "worker/gateway_beacons.hpp"

class QListWidget;

namespace cuview::gui {

class DaemonsPanel : public QDockWidget {
  Q_OBJECT
 public:
  /// A dock of `window`, which places it.
  /// Gateways' announcements are listened for on UDP `announce_port`.
  DaemonsPanel(QWidget* window, quint16 announce_port);
  /// Shows `daemons`, updating entries in place so that a selection, a hover or a double-click in
  /// progress survive; `attached` is selected when it first appears and nothing else is.
  void show_daemons(const QList<DaemonEntry>& daemons, const QString& attached);
  [[nodiscard]] QStringList names() const;
  /// The URLs of the gateways heard on the network, as listed.
  [[nodiscard]] QStringList gateway_urls() const;
  /// What the Attach button does: asks to attach to the selected daemon; with none selected, to the
  /// only one listed; otherwise says what to pick.
  void attach_selected();

 Q_SIGNALS:
  void attach_requested(const QString& name);
  void detach_requested();
  /// List (and attach through) the gateway at `url`; empty: this host.
  void gateway_requested(const QString& url);
  void error(const QString& message);

 private:
  void show_gateways();

  QListWidget* list_ = nullptr;
  QListWidget* gateways_ = nullptr;
  GatewayBeacons* beacons_ = nullptr;
};

}  // namespace cuview::gui
