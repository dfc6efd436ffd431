// The viewer as a person uses it, in real windows on a private X server (window_test.hpp):
// the Daemons panel's Attach and Detach buttons, a double-click, the Daemon menu.
#include <QApplication>
#include <QListWidget>
#include <QPushButton>
#include <catch2/catch.hpp>

#include "main_window.hpp"
#include "viewer_test.hpp"
#include "window_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

TEST_CASE("the Attach button, a double-click and the Daemon menu attach; Detach detaches", "[.window][window]") {
  RuntimeDir rt;
  auto t = start_daemon("t", Backend::host);
  forget_window_geometry();
  MainWindow w(attach_options());
  show_real(w);
  auto* list = w.findChild<QListWidget*>("daemons");
  auto* attach = w.findChild<QPushButton*>("attach");
  auto* detach = w.findChild<QPushButton*>("detach");
  REQUIRE((list && attach && detach));
  REQUIRE(wait_for([&] { return w.daemon_names() == QStringList{"t"}; }));
  REQUIRE(list->selectedItems().isEmpty());
  CHECK(w.view()->message().contains("Pick a running daemon in the Daemons list"));  // what to do, in the view

  SECTION("Attach with nothing selected and one daemon listed attaches to it; Detach detaches") {
    x11::click(centre_of(attach));
    REQUIRE(shows_frames(w));
    CHECK(is_reading("t"));
    CHECK(w.view()->message().isEmpty());
    x11::click(centre_of(detach));
    REQUIRE(wait_for([&] { return w.connection() == Connection::detached; }));
    CHECK(is_reading("t", 0));
  }

  SECTION("with several daemons and none selected, Attach says which to pick; a double-click attaches") {
    auto u = start_daemon("u", Backend::host);
    REQUIRE(wait_for([&] { return w.daemon_names().size() == 2; }));
    x11::click(centre_of(attach));
    REQUIRE(wait_for([&] { return w.last_error().contains("2 daemons are running (t, u)"); }, 5000));
    CHECK(w.last_error().contains("select one"));
    CHECK(w.connection() == Connection::detached);

    x11::click(centre_of(list, "u"), 2);
    REQUIRE(shows_frames(w));
    CHECK(is_reading("u"));
    CHECK(w.windowTitle().startsWith("cuview — u"));

    // Select t with a click, then Daemon → Attach from the keyboard (Alt+D, A): switches to t.
    x11::click(centre_of(list, "t"));
    REQUIRE(wait_for([&] { return list->selectedItems().size() == 1; }, 5000));
    x11::key("alt+d");
    REQUIRE(wait_for([] { return QApplication::activePopupWidget() != nullptr; }, 5000));
    x11::key("a");
    REQUIRE(
        wait_for([&] { return w.windowTitle().startsWith("cuview — t") && w.connection() == Connection::connected; }));
    CHECK(is_reading("t"));
    CHECK(is_reading("u", 0));

    // The selected daemon with the Attach button, then Daemon → Detach.
    x11::click(centre_of(list, "u"));
    x11::click(centre_of(attach));
    REQUIRE(
        wait_for([&] { return w.windowTitle().startsWith("cuview — u") && w.connection() == Connection::connected; }));
    CHECK(is_reading("u"));
    x11::key("alt+d");
    REQUIRE(wait_for([] { return QApplication::activePopupWidget() != nullptr; }, 5000));
    x11::key("d");
    REQUIRE(wait_for([&] { return w.connection() == Connection::detached; }));
    CHECK(is_reading("u", 0));
    CHECK(is_reading("t", 0));
  }
}

TEST_CASE("the Daemons list names a volume by all three axes, fastest first as --size takes them",
          "[.window][window]") {
  RuntimeDir rt;
  auto vol = start_daemon("vol", Backend::host, {"--sim", "grayscott3d", "--paused"}, "40x30x16");
  forget_window_geometry();
  MainWindow w(attach_options());
  show_real(w);
  auto* list = w.findChild<QListWidget*>("daemons");
  REQUIRE(list);
  QString text;
  REQUIRE(wait_for([&] {
    for (int i = 0; i < list->count(); ++i)
      if (list->item(i)->data(Qt::UserRole).toString() == "vol") text = list->item(i)->text();
    return text.contains("grayscott3d");
  }));
  INFO(text.toStdString());
  const QChar times(0xd7);
  CHECK(text.contains(QString("grayscott3d 40") + times + "30" + times + "16 on host"));
}
