// Every command's --help ends its description with an example of that command (issue 23,
// point 1), lists --max-memory, and, where the command reads a layer trace, says that
// --trace takes a zoo network name too: the shared options read the same everywhere.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "reliability/run_fusim.h"

using namespace fusim::test;

namespace {
struct Command {
  std::string path;
  bool reads_trace;
};

std::vector<Command> commands() {
  std::vector<Command> out = {
      {"trace", false},      {"trace show", true},      {"trace validate", false},
      {"trace gen", false},  {"schedule", true},        {"simulate", true},
      {"sweep", true},       {"cache", false},          {"dram", false},
      {"dram gen", false},   {"bench", false},          {"bench caches", false},
      {"bench dram", false}, {"bench simulate", false},
  };
#ifdef FUSIM_WITH_TORCH
  for (Command c : std::vector<Command>{
           {"run", true}, {"validate", true}, {"profile", true}, {"calibrate", false}})
    out.push_back(c);
#endif
  return out;
}
}  // namespace

TEST_CASE("every command's --help has an example, --max-memory, and zoo names for --trace") {
  const std::string dir = scratch_dir("cli-help");
  for (const Command& c : commands()) {
    DYNAMIC_SECTION(c.path) {
      FusimRun r = run_fusim(dir, c.path + " --help");
      INFO(r.out << r.err);
      CHECK(r.exit_code == 0);
      const auto example = r.out.find("Example:\n");
      REQUIRE(example != std::string::npos);
      // The example runs this very command (a group: one of its subcommands).
      CHECK(r.out.find("fusim " + c.path, example) != std::string::npos);
      CHECK(r.out.find("--max-memory") != std::string::npos);
      if (c.reads_trace) CHECK(r.out.find("zoo network") != std::string::npos);
    }
  }
}

TEST_CASE("fusim help COMMAND prints what fusim COMMAND --help prints") {
  const std::string dir = scratch_dir("cli-help-word");
  for (const std::string path : {"", "simulate", "trace gen", "bench dram"}) {
    DYNAMIC_SECTION("help " << path) {
      const FusimRun a = run_fusim(dir, "help " + path);
      const FusimRun b = run_fusim(dir, path + (path.empty() ? "" : " ") + "--help");
      CHECK(a.exit_code == 0);
      CHECK(b.exit_code == 0);
      CHECK(a.out == b.out);
      CHECK(a.out.find("Usage: fusim") != std::string::npos);
    }
  }
}
