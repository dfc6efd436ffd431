#include "worker/daemon_lister.hpp"

#include <QMutexLocker>
#include <chrono>

#include "cuview/client.hpp"
#include "cuview/error.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview::gui {
using namespace std::chrono_literals;

namespace {
constexpr unsigned long kListIntervalMs = 2000;

QString summary_of(const std::string& name) {
  try {
    AttachOptions o;
    o.name = name;
    o.client = "cuview-gui (list)";
    o.import = Import::control_only;
    o.timeout = 500ms;
    const auto s = Client::attach(o).stats();
    return QString("%1 %2×%3 on %4\n%5 · step %6")
        .arg(QString::fromStdString(s.sim))
        .arg(s.width)
        .arg(s.height)
        .arg(QString::fromStdString(s.backend))
        .arg(s.paused ? "paused" : "running")
        .arg(s.step);
  } catch (const Error& err) {
    return QString("not answering: %1").arg(err.what());
  }
}
}  // namespace

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
  for (;;) {
    QList<DaemonEntry> daemons;
    for (const auto& name : list_running_instances()) {
      if (stopping()) return;
      daemons.push_back({QString::fromStdString(name), summary_of(name)});
    }
    Q_EMIT listed(daemons);
    QMutexLocker lock(&mu_);
    if (!stop_) wake_.wait(&mu_, kListIntervalMs);
    if (stop_) return;
  }
}

}  // namespace cuview::gui
