#include "worker/daemon_lister.hpp"

#include <QMap>
#include <QMutexLocker>
#include <map>
#include <chrono>
#include <optional>

#include "cuview/assembly.hpp"
#include "cuview/client.hpp"
#include "cuview/error.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview::gui {
using namespace std::chrono_literals;

namespace {
constexpr unsigned long kListIntervalMs = 2000;

QString summary_of(const RunningInstance& instance) {
  try {
    AttachOptions o;
    o.name = instance.name;
    o.client = "cuview-gui (list)";
    o.import = Import::control_only;
    o.timeout = 500ms;
    if (instance.parts > 0) o.part = 0;  // a run of parts: part 0 speaks for the run
    if (instance.parts == 0 && !instance.here.empty())
      return QString("parts %1 of a run whose part 0 runs on another host\nwatch it through the gateways of its hosts")
          .arg(QString::number(instance.here.size()));
    const auto s = Client::attach(o).stats();
    const auto grid = QString::fromStdString(Extent{s.run_dims()}.text()).replace('x', QChar(0xd7));
    return QString("%1 %2 on %3%4\n%5 · step %6")
        .arg(QString::fromStdString(s.sim), grid)
        .arg(QString::fromStdString(s.backend))
        .arg(instance.parts > 0 ? QString(", %1 parts").arg(instance.parts) : QString())
        .arg(s.paused ? "paused" : "running")
        .arg(s.step);
  } catch (const Error& err) {
    return QString("not answering: %1").arg(err.what());
  }
}
/// The publishers of the gateway `host` is connected to (connecting it first when it is not, to
/// `url`); a failure drops the connection, to be made again next time, and is listed as such. The
/// parts of a run it serves ("NAME/part-K") are counted in `parts` instead, by run.
QList<DaemonEntry> publishers_of(const QString& url, std::optional<RemoteHost>& host, QMap<QString, int>& parts) {
  try {
    if (!host) host.emplace(RemoteHost::connect(url.toStdString(), "cuview-gui (list)", 2000ms));
    QList<DaemonEntry> out;
    for (const auto& p : host->publishers()) {
      if (const auto a = parse_publisher_address(p.name); a.part) {
        ++parts[QString::fromStdString(a.name)];
        continue;
      }
      const Extent grid{p.dims};
      const QString what = p.sim.empty() ? QString("not described by the gateway")
                                         : QString("%1 %2 on %3")
                                               .arg(QString::fromStdString(p.sim))
                                               .arg(QString::fromStdString(grid.text()))
                                               .arg(QString::fromStdString(p.backend));
      out.push_back({QString::fromStdString(p.name), QString("%1\nremote · %2 viewer(s)").arg(what).arg(p.viewers)});
    }
    return out;
  } catch (const Error& err) {
    host.reset();
    return {{QString(), QString("gateway %1 not answering: %2").arg(url, err.what())}};
  }
}
}  // namespace

void DaemonLister::set_remote(const QString& url) {
  QMutexLocker lock(&mu_);
  remote_ = url;
  wake_.wakeAll();
}

DaemonLister::DaemonLister(QObject* parent) : QThread(parent) { qRegisterMetaType<QList<DaemonEntry>>(); }

DaemonLister::~DaemonLister() {
  {
    QMutexLocker lock(&mu_);
    stop_ = true;
    wake_.wakeAll();
  }
  wait();
}

bool DaemonLister::stopping() {
  QMutexLocker lock(&mu_);
  return stop_;
}

void DaemonLister::run() {
  std::map<QString, std::optional<RemoteHost>> hosts;  // this thread's, kept open between listings
  QString host_url;
  for (;;) {
    QString url;
    {
      QMutexLocker lock(&mu_);
      url = remote_;
    }
    if (url != host_url) hosts.clear(), host_url = url;
    QList<DaemonEntry> daemons;
    if (!url.isEmpty()) {
      // Several gateways (one per host of a run of parts): their lists together, a run's parts
      // folded into one entry.
      QMap<QString, int> parts;
      for (const auto& one : url.split(' ', Qt::SkipEmptyParts)) daemons += publishers_of(one, hosts[one], parts);
      for (auto it = parts.begin(); it != parts.end(); ++it)
        daemons.push_back({it.key(), QString("a run of parts, %1 of them on these gateways\nremote").arg(it.value())});
    } else {
      for (const auto& instance : list_instances()) {
        if (stopping()) return;
        daemons.push_back({QString::fromStdString(instance.name), summary_of(instance)});
      }
    }
    if (stopping()) return;
    Q_EMIT listed(daemons);
    QMutexLocker lock(&mu_);
    if (!stop_) wake_.wait(&mu_, kListIntervalMs);
    if (stop_) return;
  }
}

}  // namespace cuview::gui
