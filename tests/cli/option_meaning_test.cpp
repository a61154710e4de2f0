// One meaning per option name (issue 23, point 1): --trace takes a zoo network name
// wherever a layer trace is read (as sweep did), generated exactly as `fusim trace gen NAME`
// writes it, so the outputs equal those of the generated file; a name that is neither a
// file nor a zoo network is refused naming --trace, with a did-you-mean.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reliability/run_fusim.h"

using namespace fusim::test;
using nlohmann::json;

namespace {
// The documents without the keys that name the trace itself.
json without_trace(json doc) {
  if (doc.is_object()) doc.erase("trace");
  return doc;
}
}  // namespace

TEST_CASE("a zoo network name as --trace is the trace that trace gen NAME writes") {
  const std::string dir = scratch_dir("cli-zoo-trace");
  // The default sizes: trace gen's (batch 32, mlp hidden 1024), generated in memory.
  FusimRun gen_default = run_fusim(dir, "trace gen mlp -o mlp.json");
  REQUIRE(gen_default.exit_code == 0);
  for (const std::string& command :
       {std::string("trace show {}"), std::string("schedule --trace {} --ordering eager"),
        std::string("simulate --trace {} --machine xeon-8380-ddr4 --fidelity block --ordering "
                    "eager --no-per-op")}) {
    auto with = [&](const std::string& trace) {
      std::string args = command;
      args.replace(args.find("{}"), 2, trace);
      FusimRun r = run_fusim(dir, args + " --json");
      INFO(args << "\n" << r.err);
      REQUIRE(r.exit_code == 0);
      return without_trace(json::parse(r.out));
    };
    INFO(command);
    CHECK(with("mlp") == with("mlp.json"));
  }
}

TEST_CASE("a trace that is neither a file nor a zoo network: one line naming --trace") {
  const std::string dir = scratch_dir("cli-zoo-trace-bad");
  for (const std::string& command :
       {std::string("schedule --trace resnet5"), std::string("trace show resnet5"),
        std::string("simulate --machine xeon-8380-ddr4 --trace resnet5")}) {
    FusimRun r = run_fusim(dir, command);
    INFO(command << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("fusim: --trace: expected a trace JSON file or a zoo network (mlp, ", 0) ==
          0);
    CHECK(r.err.find("got \"resnet5\" (did you mean \"resnet50\"?)") != std::string::npos);
  }
}

#ifdef FUSIM_WITH_TORCH
TEST_CASE("run --block is the deprecated spelling of --steps-per-block, with a warning") {
  // --block is the unit of block fidelity in simulate; in run and validate it was the
  // measured steps of one ordering before the next.
  const std::string dir = scratch_dir("cli-steps-per-block");
  const std::string run = "run --trace " FUSIM_SOURCE_DIR
                          "/traces/examples/mlp_tiny.json --ordering eager --measured-steps 2 "
                          "--warmup 0 --max-time 0 --json";
  FusimRun old_name = run_fusim(dir, run + " --block 1");
  INFO(old_name.err);
  REQUIRE(old_name.exit_code == 0);
  CHECK(old_name.err.find("fusim: warning: --block is deprecated here, say --steps-per-block") !=
        std::string::npos);
  FusimRun new_name = run_fusim(dir, run + " --steps-per-block 1");
  INFO(new_name.err);
  REQUIRE(new_name.exit_code == 0);
  CHECK(new_name.err.find("deprecated") == std::string::npos);
  // Both spellings set the same value. The progress counts the planned steps (warm-up 0,
  // one re-warm step per block, the 2 measured): in blocks of 1 that is 0 + 2 + 2 = 4, in
  // one block of 2 it is 0 + 1 + 2 = 3.
  for (const auto* r : {&old_name, &new_name})
    CHECK(r->err.find(" 4/4 steps  ") != std::string::npos);
  FusimRun two = run_fusim(dir, run + " --steps-per-block 2");
  REQUIRE(two.exit_code == 0);
  CHECK(two.err.find(" 3/3 steps  ") != std::string::npos);
}
#endif

TEST_CASE("simulate --compute-scale 2 is the machine with every compute cost doubled") {
  // xeon-8380-ddr4's compute: 8000 ns dispatch and seven class efficiencies. Twice the
  // compute time is twice the dispatch and half each efficiency; memory stays as it was.
  const std::string dir = scratch_dir("cli-compute-scale");
  const std::string sim = "simulate --trace " FUSIM_SOURCE_DIR
                          "/traces/examples/mlp_tiny.json --machine xeon-8380-ddr4 "
                          "--ordering all --json";
  FusimRun scaled = run_fusim(dir, sim + " --compute-scale 2");
  INFO(scaled.err);
  REQUIRE(scaled.exit_code == 0);
  const std::string by_hand =
      " --set compute.dispatch_overhead_ns=16000 --set compute.efficiency.gemm=0.4"
      " --set compute.efficiency.conv=0.325 --set compute.efficiency.elementwise=0.25"
      " --set compute.efficiency.norm=0.2 --set compute.efficiency.reduction=0.15"
      " --set compute.efficiency.pool=0.2 --set compute.efficiency.attention=0.25";
  FusimRun set = run_fusim(dir, sim + by_hand);
  INFO(set.err);
  REQUIRE(set.exit_code == 0);
  FusimRun plain = run_fusim(dir, sim);
  REQUIRE(plain.exit_code == 0);
  json a = json::parse(scaled.out), b = json::parse(set.out), c = json::parse(plain.out);
  CHECK(a["compute_scale"] == 2.0);
  a.erase("compute_scale");
  CHECK(a == b);
  // And it changed something: the step is slower than the unscaled machine's.
  CHECK(a["results"][0]["step_time_ms"].get<double>() >
        c["results"][0]["step_time_ms"].get<double>());
}
