// The shared progress reporter (core/progress.h; issue 23, point 5) as a log sees it: on a
// stderr that is not a terminal, one line per 10% with the count, the rate and the ETA, no
// carriage returns.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "reliability/run_fusim.h"

using namespace fusim::test;

TEST_CASE("a sweep of 10 units logs one progress line per unit (10% each), no carriage return") {
  const std::string dir = scratch_dir("cli-progress");
  FusimRun r =
      run_fusim(dir, "sweep --trace " FUSIM_SOURCE_DIR
                     "/traces/examples/mlp_tiny.json --machine xeon-8380-ddr4 "
                     "--ordering eager --jobs 1 --set caches.LLC.size=3MiB,6MiB,9MiB,12MiB,"
                     "15MiB,18MiB,21MiB,24MiB,27MiB,30MiB --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find('\r') == std::string::npos);
  std::vector<std::string> lines;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("sweep [", 0) == 0) lines.push_back(line);
  REQUIRE(lines.size() == 10);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    INFO(lines[k]);
    CHECK(lines[k].find(" " + std::to_string(k + 1) + "/10 units  ") != std::string::npos);
    CHECK(lines[k].find(" units/s  ") != std::string::npos);
    CHECK(lines[k].find(" ETA ") != std::string::npos);
  }
}
