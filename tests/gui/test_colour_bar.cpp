// The colour bar beside the view: every label fits, whatever the range.
#include <QFontMetrics>
#include <catch2/catch.hpp>

#include "field_view.hpp"
#include "viewer_test.hpp"

using namespace cuview;
using namespace cuview::test;
using namespace cuview::gui;
using namespace std::chrono_literals;

TEST_CASE("the colour bar's labels fit it, whatever the range", "[gui]") {
  ColorBar bar;
  bar.resize(bar.sizeHint());
  bar.show();
  REQUIRE(wait_for([&] { return bar.isVisible(); }, 5000));
  const QFontMetrics fm(bar.font());
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{-0.0599f, 0.0599f},
                                                                   {0.0f, 1.0f},
                                                                   {0.9983f, 1.0021f},
                                                                   {-1.234e-5f, 3.4e-6f},
                                                                   {-3.3e38f, 3.3e38f},
                                                                   {-0.000123f, -0.000101f},
                                                                   {12345.0f, 99999.0f}}) {
    bar.set(Colormap::diverging, lo, hi);
    const auto labels = bar.labels();
    REQUIRE(labels.size() == 5);
    for (const auto& l : labels) {
      INFO("range " << lo << ".." << hi << ": label '" << l.text.toStdString() << "' in " << l.rect.width()
                    << " pixels from x = " << l.rect.left() << " of a bar " << bar.width() << " wide");
      CHECK(fm.horizontalAdvance(l.text) <= l.rect.width());
      CHECK(l.rect.left() >= 0);
      CHECK(l.rect.right() < bar.width());
      CHECK(l.text.size() <= 9);
    }
  }
  bar.set(Colormap::diverging, -0.0599f, 0.0599f);
  const auto labels = bar.labels();
  CHECK(labels.front().text == "-0.0599");
  CHECK(labels[2].text == "0");  // the middle of a symmetric range, not a rounding error
  CHECK(labels.back().text == "0.0599");
}
