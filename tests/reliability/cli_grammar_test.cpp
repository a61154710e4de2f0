// One --ordering grammar for every command that builds schedules (schedule/request.h):
// `all` and comma lists mean the same orderings everywhere, and a bad name is the same
// one-line error (exit code 2) everywhere.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_fusim.h"

using namespace fusim::test;

namespace {
const std::string kTrace = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";

std::vector<std::string> orderings_of(const nlohmann::json& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r["ordering"]);
  return out;
}
}  // namespace

TEST_CASE("ordering all means eager, backward-fused, forward-fused in schedule, simulate, sweep") {
  const std::string dir = scratch_dir("cli-grammar-all");
  const std::vector<std::string> all{"eager", "backward-fused", "forward-fused"};
  FusimRun schedule = run_fusim(dir, "schedule --trace " + kTrace + " --ordering all --json");
  INFO(schedule.err);
  REQUIRE(schedule.exit_code == 0);
  CHECK(orderings_of(nlohmann::json::parse(schedule.out)) == all);
  FusimRun simulate = run_fusim(
      dir, "simulate --trace " + kTrace + " --machine xeon-8380-ddr4 --ordering all --json");
  REQUIRE(simulate.exit_code == 0);
  CHECK(orderings_of(nlohmann::json::parse(simulate.out)["results"]) == all);
  FusimRun sweep = run_fusim(
      dir, "sweep --trace " + kTrace + " --machine xeon-8380-ddr4 --ordering all --json -q");
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  CHECK(orderings_of(nlohmann::json::parse(sweep.out)) == all);
  // A comma list; simulate adds eager in front (the speedup baseline), schedule does not.
  FusimRun two = run_fusim(
      dir, "schedule --trace " + kTrace + " --ordering forward-fused,backward-fused --json");
  REQUIRE(two.exit_code == 0);
  CHECK(orderings_of(nlohmann::json::parse(two.out)) ==
        std::vector<std::string>{"forward-fused", "backward-fused"});
  FusimRun sim_two =
      run_fusim(dir, "simulate --trace " + kTrace +
                         " --machine xeon-8380-ddr4 --ordering forward-fused --json");
  REQUIRE(sim_two.exit_code == 0);
  CHECK(orderings_of(nlohmann::json::parse(sim_two.out)["results"]) ==
        std::vector<std::string>{"eager", "forward-fused"});
  // One ordering: schedule prints that schedule's object, as before.
  FusimRun one = run_fusim(dir, "schedule --trace " + kTrace + " --ordering eager --json");
  REQUIRE(one.exit_code == 0);
  CHECK(nlohmann::json::parse(one.out)["ordering"] == "eager");
}

TEST_CASE("a bad --ordering is the same one-line error in every command") {
  const std::string dir = scratch_dir("cli-grammar-bad");
  const std::string want =
      "fusim: --ordering: expected all or a comma-separated list of eager, backward-fused, "
      "forward-fused, mixed, got \"sideways\"\n";
  for (const std::string& command :
       {"schedule --trace " + kTrace, "simulate --trace " + kTrace + " --machine xeon-8380-ddr4",
        "sweep --trace " + kTrace + " --machine xeon-8380-ddr4 -q"}) {
    FusimRun r = run_fusim(dir, command + " --ordering eager,sideways");
    INFO(command);
    CHECK(r.exit_code == 2);
    CHECK(r.err == want);
  }
}
