#include <catch2/catch.hpp>

#include "sweep/progress.h"

using fusim::sweep::ProgressBar;

TEST_CASE("the progress line shows the bar, the count, the time and the ETA") {
  CHECK(ProgressBar::render(5, 10, 12.34, 12.34, 10) ==
        "[=====>    ] 5/10 units  12.3s elapsed  ETA 12.3s");
  CHECK(ProgressBar::render(10, 10, 75, 0, 4) == "[====] 10/10 units  1m15s elapsed  ETA 0.0s");
  CHECK(ProgressBar::render(0, 8, 0.5, -1, 4) == "[>   ] 0/8 units  0.5s elapsed  ETA --");
  CHECK(ProgressBar::render(1, 3, 4000, 8000, 3) == "[=> ] 1/3 units  1h06m elapsed  ETA 2h13m");
}
