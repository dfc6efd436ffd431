#include "worker/gateway_beacons.hpp"

#include <QHostAddress>
#include <QNetworkDatagram>
#include <QTimer>
#include <QUdpSocket>
#include <msgpack.hpp>
#include <optional>
#include <string>

namespace cuview::gui {

namespace {
constexpr qint64 kSilentMs = 5000;
constexpr qsizetype kMaxDatagram = 1024;  // a beacon is ~100 bytes; anything larger is not one

struct Beacon {
  std::string host, user, listen;
};

/// The beacon in `bytes` (docs/remote.md), or empty for anything else: strictly a map
/// with "cuview": "gateway" and "v": 1, unpacked under small limits.
std::optional<Beacon> decode(const QByteArray& bytes) {
  if (bytes.size() > kMaxDatagram) return {};
  try {
    const auto handle = msgpack::unpack(bytes.constData(), static_cast<std::size_t>(bytes.size()), nullptr, nullptr,
                                        msgpack::unpack_limit(4, 16, 256, 0, 16, 2));
    const msgpack::object& o = handle.get();
    if (o.type != msgpack::type::MAP) return {};
    Beacon b;
    bool is_gateway = false, version_1 = false;
    for (const auto& kv : std::span(o.via.map.ptr, o.via.map.size)) {
      if (kv.key.type != msgpack::type::STR) continue;
      const auto key = kv.key.as<std::string>();
      if (key == "v") {
        version_1 = kv.val.type == msgpack::type::POSITIVE_INTEGER && kv.val.as<std::uint64_t>() == 1;
        continue;
      }
      if (kv.val.type != msgpack::type::STR) continue;
      if (key == "cuview") is_gateway = kv.val.as<std::string>() == "gateway";
      if (key == "host") b.host = kv.val.as<std::string>();
      if (key == "user") b.user = kv.val.as<std::string>();
      if (key == "listen") b.listen = kv.val.as<std::string>();
    }
    if (!is_gateway || !version_1 || b.host.empty()) return {};
    return b;
  } catch (const std::exception&) {
    return {};
  }
}

/// The URL to attach through: the tcp:// one, its wildcard host replaced by the sender's address;
/// without one, ssh to the user at the host.
QString url_of(const Beacon& b, const QHostAddress& sender) {
  if (b.listen.empty()) return QString("ssh://%1@%2").arg(QString::fromStdString(b.user), QString::fromStdString(b.host));
  QString url = QString::fromStdString(b.listen);
  for (const QString wildcard : {"tcp://0.0.0.0:", "tcp://*:"})
    if (url.startsWith(wildcard)) url = "tcp://" + QHostAddress(sender.toIPv4Address()).toString() + ":" + url.mid(wildcard.size());
  return url;
}
}  // namespace

GatewayBeacons::GatewayBeacons(quint16 port, QObject* parent) : QObject(parent) {
  socket_ = new QUdpSocket(this);
  if (!socket_->bind(QHostAddress::AnyIPv4, port, QUdpSocket::ShareAddress | QUdpSocket::ReuseAddressHint))
    listening_error_ = QString("cannot listen for gateways on UDP port %1: %2").arg(port).arg(socket_->errorString());
  connect(socket_, &QUdpSocket::readyRead, this, &GatewayBeacons::read_datagrams);
  expiry_ = new QTimer(this);
  connect(expiry_, &QTimer::timeout, this, &GatewayBeacons::forget_silent);
  expiry_->start(1000);
}

void GatewayBeacons::read_datagrams() {
  bool grew = false;
  while (socket_->hasPendingDatagrams()) {
    const QNetworkDatagram datagram = socket_->receiveDatagram(kMaxDatagram + 1);
    const auto beacon = decode(datagram.data());
    if (!beacon) continue;
    const QString url = url_of(*beacon, datagram.senderAddress());
    auto it = heard_.find(url);
    if (it == heard_.end()) {
      it = heard_.insert(url, {QString::fromStdString(beacon->host), QString::fromStdString(beacon->user), url, {}});
      grew = true;
    }
    it->last_heard.start();
  }
  if (grew) Q_EMIT changed();
}

void GatewayBeacons::forget_silent() {
  const auto before = heard_.size();
  heard_.removeIf([](const auto& entry) { return entry.value().last_heard.elapsed() > kSilentMs; });
  if (heard_.size() != before) Q_EMIT changed();
}

}  // namespace cuview::gui
