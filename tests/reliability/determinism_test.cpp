// Same inputs, same output bytes (DESIGN.md, "Deterministic"): simulate run twice, and a
// sweep run twice and with 1 and 2 worker threads, compared byte for byte.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "run_fusim.h"

using namespace fusim::test;

namespace {
const std::string kTrace = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";
}

TEST_CASE("simulate prints the same bytes twice, per-op JSON and timeline included") {
  const std::string args =
      "simulate --trace " + kTrace + " --machine xeon-8380-ddr4 --json --timeline timeline.json";
  const std::string a = scratch_dir("determinism-simulate-a");
  const std::string b = scratch_dir("determinism-simulate-b");
  FusimRun first = run_fusim(a, args), second = run_fusim(b, args);
  INFO("stderr: " << first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  REQUIRE(first.out.size() > 1000);  // the per-op list is there: something to compare
  CHECK(first.out == second.out);
  const std::string timeline = read_file(a + "/timeline.json");
  REQUIRE(!timeline.empty());
  CHECK(timeline == read_file(b + "/timeline.json"));
}

TEST_CASE("sweep output is byte-identical across runs and across --jobs 1 and 2") {
  // 2 x 2 points x 2 orderings = 8 rows; small enough for a test, enough for two threads to
  // finish out of order.
  const std::string grid = "sweep --trace " + kTrace +
                           " --machine xeon-8380-ddr4 --set dram.channels=2,4"
                           " --set caches.LLC.size=3MiB,6MiB --ordering eager,backward-fused -q";
  std::string outputs[3];
  int i = 0;
  for (const char* jobs : {"1", "2", "2"}) {
    const std::string dir = scratch_dir(std::string("determinism-sweep-") + std::to_string(i));
    FusimRun r = run_fusim(dir, grid + " --jobs " + jobs + " -o rows.csv");
    INFO("--jobs " << jobs << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    outputs[i++] = read_file(dir + "/rows.csv");
  }
  // header + 8 rows
  CHECK(std::count(outputs[0].begin(), outputs[0].end(), '\n') == 9);
  CHECK(outputs[1] == outputs[0]);  // --jobs 2 vs --jobs 1
  CHECK(outputs[2] == outputs[1]);  // --jobs 2 twice
}
