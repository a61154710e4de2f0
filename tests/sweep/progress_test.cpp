#include <catch2/catch.hpp>

#include "core/progress.h"

using fusim::Progress;

TEST_CASE("the progress line shows the bar, the count, the rate, the time and the ETA") {
  CHECK(Progress::render(5, 10, 12.34, 12.34, 10) ==
        "[=====>    ] 5/10 units  12.3s elapsed  ETA 12.3s");
  CHECK(Progress::render(10, 10, 75, 0, 4) == "[====] 10/10 units  1m15s elapsed  ETA 0.0s");
  CHECK(Progress::render(0, 8, 0.5, -1, 4) == "[>   ] 0/8 units  0.5s elapsed  ETA --");
  CHECK(Progress::render(1, 3, 4000, 8000, 3) == "[=> ] 1/3 units  1h06m elapsed  ETA 2h13m");
  // 5 points in 12.5 s: 0.4 points/s, 3 significant digits.
  CHECK(Progress::render(5, 10, 12.5, 12.5, 10, "points", 0.4) ==
        "[=====>    ] 5/10 points  0.4 points/s  12.5s elapsed  ETA 12.5s");
  // Work measured as a fraction: a percentage, no count or rate.
  CHECK(Progress::render(450, 1000, 3, 3.6667, 10, "%") ==
        "[====>     ]  45%  3.0s elapsed  ETA 3.7s");
}
