// The shared options (issue 23, point 1): one meaning per name, written once. README.md's
// "Shared options" block is the list; `fusim --help` ends with exactly that block and every
// command's --help with the entries of the shared options it takes, word for word. Then the
// meanings themselves, checked on the outputs, one table row per (command, option): the
// same --steps or --warmup counts the same steps in every command that takes it.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "reliability/run_fusim.h"

using namespace fusim::test;
using nlohmann::json;

namespace {

const std::string kHeader =
    "Shared options (one meaning in every command; README.md, Shared options):";

// The entries after kHeader in `text`: "--name" -> its lines (an entry starts with "  --",
// its continuation lines with six spaces).
std::map<std::string, std::string> entries_after_header(const std::string& text,
                                                        const std::string& end_marker) {
  std::map<std::string, std::string> out;
  const auto at = text.find(kHeader + "\n");
  if (at == std::string::npos) return out;
  std::istringstream in(text.substr(at + kHeader.size() + 1));
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (line == end_marker) break;
    if (line.rfind("  --", 0) == 0) {
      current = line.substr(2, line.find(' ', 2) - 2);
      out[current] = line;
    } else if (line.rfind("      ", 0) == 0 && !current.empty()) {
      out[current] += "\n" + line;
    } else {
      break;
    }
  }
  return out;
}

// The long option names an --help lists in its option section (before the shared list).
std::set<std::string> options_of(const std::string& help) {
  std::set<std::string> names;
  std::istringstream in(help.substr(0, help.find(kHeader)));
  for (std::string line; std::getline(in, line);) {
    // "  -o,--output TEXT ...", "  --steps INT ...", "  --no-pin ..."
    if (line.rfind("  -", 0) != 0) continue;
    std::istringstream words(line);
    std::string first;
    words >> first;
    std::istringstream names_of(first);
    for (std::string n; std::getline(names_of, n, ',');)
      if (n.rfind("--", 0) == 0) names.insert(n);
  }
  return names;
}

std::vector<std::string> commands() {
  std::vector<std::string> out = {"trace show",    "trace validate", "trace gen",    "schedule",
                                  "simulate",      "memory",         "sweep",        "cache",
                                  "dram",          "dram gen",       "bench caches", "bench dram",
                                  "bench simulate"};
#ifdef FUSIM_WITH_TORCH
  for (const char* c : {"run", "validate", "profile", "calibrate"}) out.push_back(c);
#endif
  return out;
}

}  // namespace

TEST_CASE("README's shared options are fusim --help's, and every command's --help has its own") {
  const std::string readme = read_file(FUSIM_SOURCE_DIR "/README.md");
  const auto documented = entries_after_header(readme, "```");
  REQUIRE(documented.size() >= 20);
  REQUIRE(documented.count("--steps") == 1);
  REQUIRE(documented.count("--measured-steps") == 1);
  const std::string dir = scratch_dir("cli-shared-options");
  {
    FusimRun top = run_fusim(dir, "--help");
    REQUIRE(top.exit_code == 0);
    CHECK(entries_after_header(top.out, "") == documented);
  }
  for (const std::string& command : commands()) {
    DYNAMIC_SECTION(command) {
      FusimRun r = run_fusim(dir, command + " --help");
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      const auto listed = entries_after_header(r.out, "");
      const auto options = options_of(r.out);
      REQUIRE(!options.empty());
      for (const auto& [name, text] : documented) {
        INFO(name);
        if (options.count(name) == 0) {
          CHECK(listed.count(name) == 0);
          continue;
        }
        REQUIRE(listed.count(name) == 1);
        CHECK(listed.at(name) == text);
      }
      // Every command does its own work here: --max-memory is shared by all of them.
      CHECK(listed.count("--max-memory") == 1);
    }
  }
}

namespace {

const std::string kTrace = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";
const std::string kSim =
    "simulate --trace " + kTrace + " --machine xeon-8380-ddr4 --fidelity block --no-per-op --json";

struct Meaning {
  std::string what, args;
  std::string list;      // JSON pointer to the records: "/results", "" (the top level)
  std::string ordering;  // the record of this ordering (eager is always run as a baseline)
  std::string key;       // JSON pointer into that record; "/ops/-1/step": the last op's
  json expected;
};

json value_of(const std::string& out, const Meaning& row) {
  const json doc = json::parse(out);
  // One ordering: schedule --json prints the record itself; several: an array of them.
  json records = doc.at(json::json_pointer(row.list));
  if (!records.is_array()) records = json::array({records});
  for (const json& record : records) {
    if (record.at("ordering") != row.ordering) continue;
    const auto last = row.key.find("/-1/");
    if (last == std::string::npos) return record.at(json::json_pointer(row.key));
    const json& list = record.at(json::json_pointer(row.key.substr(0, last)));
    REQUIRE(!list.empty());
    return list.back().at(json::json_pointer(row.key.substr(last + 3)));
  }
  FAIL("no record of " << row.ordering);
  return nullptr;
}

}  // namespace

TEST_CASE("steps and warm-up: --steps, --measured-steps, --warmup count alike in every command") {
  const std::string dir = scratch_dir("cli-steps-meaning");
  // simulate measures the steps between the warm-up and the last one (steady_state.cpp):
  // steps - warmup - 1; forward-fused also leaves out the step that runs its first
  // updates (step 0 runs none). schedule unrolls --steps steps, numbered from 0.
  const std::vector<Meaning> table = {
      {"simulate eager: 5 steps, 1 warm-up, the last left out",
       kSim + " --ordering eager --steps 5 --warmup 1", "/results", "eager", "/steps_measured", 3},
      {"simulate eager: 2 of the 5 are warm-up", kSim + " --ordering eager --steps 5 --warmup 2",
       "/results", "eager", "/steps_measured", 2},
      {"simulate forward-fused: step 1 runs its first updates",
       kSim + " --ordering forward-fused --steps 5 --warmup 1", "/results", "forward-fused",
       "/steps_measured", 2},
      {"schedule: 3 steps unrolled",
       "schedule --trace " + kTrace + " --ordering eager --steps 3 --json", "", "eager", "/steps",
       3},
      {"schedule: its last op is in step 2 (numbered from 0)",
       "schedule --trace " + kTrace + " --ordering eager --steps 3 --json", "", "eager",
       "/ops/-1/step", 2},
#ifdef FUSIM_WITH_TORCH
      // --max-time 0: exactly the steps asked for; --min-cpu-ratio 0: none dropped.
      {"run: 3 measured steps after 1 warm-up",
       "run --trace " + kTrace +
           " --ordering eager --measured-steps 3 --warmup 1 --max-time 0 "
           "--min-cpu-ratio 0 --no-per-op --json",
       "/results", "eager", "/steps_measured", 3},
      {"run: --warmup is not counted in the measured steps",
       "run --trace " + kTrace +
           " --ordering eager --measured-steps 2 --warmup 3 --max-time 0 "
           "--min-cpu-ratio 0 --no-per-op --json",
       "/results", "eager", "/measurement/steps_run", 2},
      {"run: --steps, the deprecated spelling, is --measured-steps",
       "run --trace " + kTrace +
           " --ordering eager --steps 3 --warmup 0 --max-time 0 "
           "--min-cpu-ratio 0 --no-per-op --json",
       "/results", "eager", "/steps_measured", 3},
      {"validate: --measured-steps measured, --sim-steps simulated",
       "validate --trace " + kTrace +
           " --machine xeon-8380-ddr4 --ordering eager "
           "--measured-steps 2 --warmup 0 --sim-steps 3 --max-time 0 --min-cpu-ratio 0 --json",
       "/results", "eager", "/measurement/steps_run", 2},
#endif
  };
  for (const Meaning& row : table) {
    DYNAMIC_SECTION(row.what) {
      FusimRun r = run_fusim(dir, row.args);
      INFO(row.args << "\n" << r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(value_of(r.out, row) == row.expected);
      const bool deprecated =
          row.args.find(" --steps ") != std::string::npos && row.args.rfind("run ", 0) == 0;
      CHECK((r.err.find("fusim: warning: --steps is deprecated here, say --measured-steps") !=
             std::string::npos) == deprecated);
    }
  }
}

TEST_CASE("sweep simulates --steps as simulate does: the same point, the same step time") {
  const std::string dir = scratch_dir("cli-steps-sweep");
  const std::string args =
      " --ordering forward-fused --steps 4 --warmup 1 --set caches.LLC.size=6MiB";
  FusimRun sim = run_fusim(dir, kSim + args);
  FusimRun sweep =
      run_fusim(dir, "sweep --trace " + kTrace +
                         " --machine xeon-8380-ddr4 --fidelity block -q --json" + args);
  INFO(sim.err << sweep.err);
  REQUIRE(sim.exit_code == 0);
  REQUIRE(sweep.exit_code == 0);
  json sweep_ff;
  for (const json& row : json::parse(sweep.out))
    if (row.at("ordering") == "forward-fused") sweep_ff = row.at("step_time_ms");
  REQUIRE(!sweep_ff.is_null());
  CHECK(sweep_ff ==
        value_of(sim.out, {"", "", "/results", "forward-fused", "/step_time_ms", nullptr}));
  // Too few steps to measure one after the warm-up, the first updates and the flush: both
  // refuse it (exit 2), naming --steps and the least that works, warm-up 1 + 2 = 3.
  const std::string sweep_cmd =
      "sweep --trace " + kTrace + " --machine xeon-8380-ddr4 --fidelity block -q --json";
  for (const auto& [command, expected] : std::vector<std::pair<std::string, std::string>>{
           {kSim, "forward-fused needs at least 3 steps"},
           {sweep_cmd, "--steps: expected at least --warmup + 2 = 3"}}) {
    FusimRun r = run_fusim(dir, command + " --ordering forward-fused --steps 2 --warmup 1");
    INFO(command << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(expected) != std::string::npos);
    CHECK(r.err.find("--steps") != std::string::npos);
  }
}

TEST_CASE("batch: --batch sizes a zoo --trace alike in every command, nothing on a file") {
  // A zoo name at --batch 3 is the network `trace gen NAME --batch 3` writes: every command
  // gives the same output for either; on that file --batch warns and changes nothing.
  const std::string dir = scratch_dir("cli-batch");
  REQUIRE(run_fusim(dir, "trace gen mlp --batch 3 -o g.json").exit_code == 0);
  const std::vector<std::string> commands = {
      "trace show {} --json", "schedule --trace {} --ordering eager --json",
      "simulate --trace {} --machine h100-sxm5 --optimizer sgd --ordering all --json"};
  for (std::string c : commands) {
    auto with = [&](const std::string& trace) {
      std::string s = c;
      return s.replace(s.find("{}"), 2, trace);
    };
    FusimRun zoo = run_fusim(dir, with("mlp --batch 3"));
    FusimRun file = run_fusim(dir, with("g.json"));
    FusimRun file_batch = run_fusim(dir, with("g.json --batch 5"));
    FusimRun default_batch = run_fusim(dir, with("mlp"));
    INFO(c << "\n" << zoo.err << file.err << file_batch.err);
    REQUIRE(zoo.exit_code == 0);
    REQUIRE(file.exit_code == 0);
    REQUIRE(file_batch.exit_code == 0);
    json a = json::parse(zoo.out), b = json::parse(file.out);
    // trace show names its input; the rest is the network.
    if (a.is_object() && a.contains("file")) a.erase("file"), b.erase("file");
    if (a.is_object() && a.contains("trace")) a.erase("trace"), b.erase("trace");
    CHECK(a == b);
    CHECK(file_batch.out == file.out);
    CHECK(file_batch.err.find("fusim: warning: --batch has no effect on trace files") !=
          std::string::npos);
    CHECK(default_batch.out != zoo.out);  // batch 32, not 3
  }
  FusimRun zero = run_fusim(dir, "simulate --trace mlp --batch 0 --machine h100-sxm5");
  CHECK(zero.exit_code == 2);
  CHECK(zero.err == "fusim: --batch: expected a positive integer, got 0\n");
}
