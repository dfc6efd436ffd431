// The viewer as a person uses it, in real windows on a private X server (window_test.hpp):
// a parameter typed into the Simulation panel, and every text fitting at any window size.
#include <QApplication>
#include <QDoubleSpinBox>
#include <QFontMetrics>
#include <QLabel>
#include <QLayout>
#include <QListWidget>
#include <QScrollBar>
#include <QSet>
#include <QStatusBar>
#include <QToolTip>
#include <QHelpEvent>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "main_window.hpp"
#include "panels/rates_panel.hpp"
#include "panels/status_label.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

TEST_CASE("a parameter typed into the Simulation panel of a real window is seen by cuview-ctl status",
          "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("t", Backend::host);
  forget_window_geometry();
  MainWindow w(attach_options("t"));
  show_real(w);
  REQUIRE(shows_frames(w));
  QDoubleSpinBox* f = nullptr;
  REQUIRE(wait_for([&] { return (f = w.findChild<QDoubleSpinBox*>("param:F")) != nullptr && f->isVisible(); }));
  x11::click(centre_of(f));
  REQUIRE(wait_for([&] { return f->hasFocus(); }, 5000));
  x11::key("ctrl+a");
  x11::type("0.031");
  x11::key("Return");
  REQUIRE(wait_for([&] { return stats("t").F == 0.031; }, 10000));
  auto r = ctl("t", {"status", "--json"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("params").at("F") == 0.031);
}

TEST_CASE("the real window fits its text at its default size and resized", "[.window][window]") {
  RuntimeDir rt;
  auto daemon = start_daemon("a-daemon-with-a-long-name", Backend::host, {}, "1024x768");
  forget_window_geometry();
  MainWindow w(attach_options("a-daemon-with-a-long-name"));
  show_real(w);
  CHECK(w.size() == kDefaultWindowSize);
  REQUIRE(shows_frames(w));
  auto* list = w.findChild<QListWidget*>("daemons");
  auto* plot = w.findChild<RatePlot*>();
  REQUIRE((list && plot));
  REQUIRE(wait_for([&] { return list->count() == 1 && list->item(0)->text().contains("step"); }));
  REQUIRE(wait_for([&] { return plot->legend().front() != "steps/s ≤ 1"; }));  // rates have arrived

  for (const QSize size : {kDefaultWindowSize, QSize(760, 520), QSize(1500, 950), QSize(520, 480)}) {
    w.resize(size);
    REQUIRE(wait_for(
        [&] {
          return w.windowHandle()->geometry().size() == w.size() &&
                 w.size() == w.size().expandedTo(w.minimumSizeHint());
        },
        5000));
    QApplication::processEvents();
    INFO("window " << w.width() << "×" << w.height() << " (asked " << size.width() << "×" << size.height() << ")");

    // The daemon's entry: as wide as the list's viewport at most, tall enough for its wrapped text
    // (once the list has laid its entries out for its new width: Qt does that on a later turn).
    const QFontMetrics fm(list->font());
    const auto text_of = [&](const QRect& item) {
      return fm.boundingRect(QRect(0, 0, item.width() - 8, 10000), Qt::TextWordWrap, list->item(0)->text());
    };
    (void)wait_for(
        [&] {
          const QRect item = list->visualItemRect(list->item(0));
          return item.right() <= list->viewport()->width() && text_of(item).height() <= item.height();
        });
    const QRect item = list->visualItemRect(list->item(0));
    const QRect text = text_of(item);
    INFO("entry '" << list->item(0)->text().toStdString() << "' in " << item.width() << "×" << item.height());
    CHECK(item.right() <= list->viewport()->width());
    CHECK(text.height() <= item.height());
    CHECK_FALSE(list->horizontalScrollBar()->isVisible());

    // The rate plot's legend: each line fits beside its colour swatch.
    const QFontMetrics pm(plot->font());
    for (const QString& line : plot->legend()) {
      INFO("legend '" << line.toStdString() << "' in a plot " << plot->width() << " wide");
      CHECK(pm.horizontalAdvance(line) + pm.height() + 12 <= plot->width());
    }
    CHECK(plot->width() >= plot->minimumSizeHint().width());

    // The status bar: its labels inside it, none over another. A short label always shows its
    // whole text: where the window is too narrow for them all in a row, the bar takes more rows. A
    // description shows its whole text or, narrower than a whole row, the start of it and "…",
    // the whole text then in its tooltip. At the default size every text is whole.
    // One consistent picture of the bar: the labels' texts change as stats come (latency, rates),
    // and each change lays the bar out again on a later turn of the event loop; lay it out now, with
    // the texts it holds, rather than read a label between its new text and its new width.
    w.statusBar()->layout()->activate();
    if (auto* rows_widget = w.statusBar()->findChild<QWidget*>("status_rows"); rows_widget && rows_widget->layout())
      rows_widget->layout()->activate();
    std::vector<QRect> taken;
    QSet<int> rows;
    int whole = 0;  // the texts' widths
    for (auto* label : w.statusBar()->findChildren<StatusLabel*>()) {
      if (!label->isVisible() || label->text().isEmpty()) continue;
      const QRect at(label->mapTo(w.statusBar(), QPoint(0, 0)), label->size());
      INFO("status '" << label->text().toStdString() << "' " << label->width() << " wide, shown '"
                      << label->shown_text().toStdString() << "'");
      for (const QRect& other : taken) CHECK_FALSE(at.intersects(other));
      taken.push_back(at);
      rows.insert(at.y());
      CHECK(w.statusBar()->rect().contains(at));
      const QString shown = label->shown_text();
      whole += QFontMetrics(label->font()).horizontalAdvance(label->text());
      if (size == kDefaultWindowSize || label->kind() == StatusLabel::Kind::brief) CHECK(shown == label->text());
      if (shown == label->text()) continue;
      CHECK(shown.endsWith(QChar(0x2026)));
      CHECK(label->text().startsWith(shown.chopped(1)));
      QHelpEvent hover(QEvent::ToolTip, label->rect().center(), label->mapToGlobal(label->rect().center()));
      QApplication::sendEvent(label, &hover);
      CHECK(QToolTip::text().startsWith(label->text()));
    }
    CHECK(taken.size() >= 5);
    if (whole > w.statusBar()->width()) CHECK(rows.size() > 1);  // (the narrowest window: not all in one row)
  }
}
