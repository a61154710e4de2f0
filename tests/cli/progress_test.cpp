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

#ifdef FUSIM_WITH_TORCH
namespace {
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) lines.push_back(line);
  return lines;
}
}  // namespace

TEST_CASE("run and validate log their planned steps: a line per 10%, with rate and ETA") {
  const std::string dir = scratch_dir("cli-progress-run");
  // 3 orderings x (1 warm-up + 2 re-warm steps, one per block of 2 + 4 measured) = 21
  // steps; a line at the first step (the 0th tenth: it says the work has begun, with an
  // ETA), then the line of the k-th tenth at the first count n with 10 n / 21 >= k:
  // n = ceil(2.1 k) = 3, 5, 7, 9, 11, 13, 15, 17, 19, 21.
  const std::string common = " --trace " FUSIM_SOURCE_DIR
                             "/traces/examples/mlp_tiny.json --ordering all --optimizer sgd "
                             "--measured-steps 4 --warmup 1 --steps-per-block 2 --max-time 0 "
                             "--json";
  for (const std::string& command :
       {"run" + common, "validate --machine xeon-8380-ddr4" + common}) {
    DYNAMIC_SECTION(command) {
      FusimRun r = run_fusim(dir, command);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.err.find('\r') == std::string::npos);
      const auto lines = lines_starting(r.err, "run: measuring [");
      REQUIRE(lines.size() == 11);
      const int counts[] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21};
      for (std::size_t k = 0; k < lines.size(); ++k) {
        INFO(lines[k]);
        CHECK(lines[k].find("] " + std::to_string(counts[k]) + "/21 steps  ") != std::string::npos);
        CHECK(lines[k].find(" steps/s  ") != std::string::npos);
        CHECK(lines[k].find(" ETA ") != std::string::npos);
      }
      // validate predicts the 3 schedules first: a line each (each is a third).
      if (command.rfind("validate", 0) == 0) {
        const auto predicting = lines_starting(r.err, "validate: predicting on xeon-8380-ddr4 [");
        REQUIRE(predicting.size() == 3);
        for (int k = 0; k < 3; ++k)
          CHECK(predicting[std::size_t(k)].find("] " + std::to_string(k + 1) + "/3 schedules") !=
                std::string::npos);
      }
    }
  }
}
#endif
