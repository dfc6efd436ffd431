// The Daemons panel's source: every 2 s, the daemons running for this user and what each is doing.
// Asking means attaching to each (control only, 500 ms timeout), so it runs on a thread of its own:
// a slow or frozen daemon never delays a frame of the one being watched. With a gateway set, it lists
// that gateway's publishers instead, over one RemoteHost kept open (and connected again when it
// fails).
#pragma once

#include <QList>
#include <QMetaType>
#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>

namespace cuview::gui {

struct DaemonEntry {
  QString name, summary;  ///< summary: "SIM W×H on BACKEND\nrunning · step N", or why it does not answer
};

class DaemonLister : public QThread {
  Q_OBJECT
 public:
  explicit DaemonLister(QObject* parent = nullptr);
  ~DaemonLister() override;  // stops, wakes and joins the thread (after the daemon it is asking, if any)
  /// Lists the publishers of the gateway at `url` from now on (empty: this host's daemons). Any thread.
  void set_remote(const QString& url);

 Q_SIGNALS:
  /// Every daemon running now, in the runtime directory's order.
  void listed(const QList<cuview::gui::DaemonEntry>& daemons);

 protected:
  void run() override;

 private:
  [[nodiscard]] bool stopping();
  QMutex mu_;
  QWaitCondition wake_;
  bool stop_ = false;
  QString remote_;
};

}  // namespace cuview::gui

Q_DECLARE_METATYPE(cuview::gui::DaemonEntry)
