// The gateways announcing themselves on the LAN (cuview-gateway --announce; the datagram is in
// docs/remote.md): a UDP socket on the announce port, shared with other viewers of this
// host, heard on the UI thread (Qt's socket notifier: nothing here blocks). A gateway not heard for
// 5 s is forgotten. Hearing one grants nothing: connecting still needs its keys (or ssh).
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QObject>
#include <QString>

class QUdpSocket;
class QTimer;

namespace cuview::gui {

struct HeardGateway {
  QString host, user;
  QString url;  ///< what to attach through: its tcp:// URL (the sender's address for a wildcard), else ssh://user@host
  QElapsedTimer last_heard;
};

class GatewayBeacons : public QObject {
  Q_OBJECT
 public:
  /// Listens on UDP `port` (all IPv4 addresses, shared). A port that cannot be bound is said by
  /// listening_error(), not thrown: the viewer works without discovery.
  GatewayBeacons(quint16 port, QObject* parent);
  [[nodiscard]] const QString& listening_error() const { return listening_error_; }
  [[nodiscard]] QList<HeardGateway> gateways() const { return heard_.values(); }

 Q_SIGNALS:
  /// The gateways heard lately changed (one appeared, or one went silent).
  void changed();

 private:
  void read_datagrams();
  void forget_silent();

  QUdpSocket* socket_ = nullptr;
  QTimer* expiry_ = nullptr;
  QMap<QString, HeardGateway> heard_;  ///< by url
  QString listening_error_;
};

}  // namespace cuview::gui
