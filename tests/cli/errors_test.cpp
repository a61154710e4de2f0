// One error grammar (issue 23, point 3): a misuse of any command is one line on stderr,
// "fusim: ...", naming the option, file or word and what was expected, with a did-you-mean
// for a mistyped command, option or preset name; exit code 2; nothing on stdout; output
// paths refused before any work, nothing written.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "reliability/run_fusim.h"

using namespace fusim::test;

namespace {

const std::string kTrace = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";
const std::string kSim = "simulate --trace " + kTrace + " --machine xeon-8380-ddr4";

struct Case {
  const char* name;
  std::string args;
  std::vector<std::string> expect;  // fragments of the one stderr line
};

std::vector<Case> cases() {
  std::vector<Case> out = {
      {"no command", "", {"fusim: expected a command: one of trace, schedule, simulate"}},
      {"a group without its command",
       "bench --reps 2",
       {"fusim: bench: expected a command: one of caches, dram, simulate"}},
      {"a mistyped command",
       "simualte --trace " + kTrace,
       {"unknown command \"fusim simualte\": expected fusim followed by one of trace, ",
        "(did you mean \"simulate\"?)"}},
      {"a mistyped subcommand",
       "trace shw " + kTrace,
       {"unknown command \"fusim trace shw\"", "show, validate, gen (did you mean \"show\"?)"}},
      {"a mistyped option",
       kSim + " --step 3",
       {"simulate: unknown option --step (did you mean \"--steps\"?)", "fusim simulate --help"}},
      {"a mistyped option with =", kSim + " --fidelty=block", {"--fidelty", "\"--fidelity\""}},
      {"a mistyped subcommand's option",
       "trace gen mlp --batchh 4 -o t.json",
       {"trace gen: unknown option --batchh (did you mean \"--batch\"?)"}},
      {"a fractional count", kSim + " --steps 3.5", {"--steps", "an integer", "got \"3.5\""}},
      {"a mistyped machine preset",
       "simulate --trace " + kTrace + " --machine h100-sxm",
       {"unknown machine \"h100-sxm\": expected a preset name (", "(did you mean \"h100-sxm5\"?)"}},
      {"a mistyped zoo network",
       "trace gen resnt18 -o t.json",
       {"got 'resnt18' (did you mean \"resnet18\"?)"}},
      {"a mistyped optimizer",
       kSim + " --optimizer adamm",
       {"unknown optimizer \"adamm\": expected one of sgd", "(did you mean \"adam\"?)"}},
      {"a mistyped ordering",
       kSim + " --ordering eagr",
       {"--ordering", "got \"eagr\" (did you mean \"eager\"?)"}},
      {"a mistyped DRAM preset",
       "dram --config ddr4-320 --trace " FUSIM_SOURCE_DIR "/fuzz/seeds/dram_trace/basic.trc",
       {"unknown DRAM preset \"ddr4-320\"", "(did you mean \"ddr4-3200\"?)"}},
      {"a timeline into a folder that does not exist",
       kSim + " --timeline no/such/t.json",
       {"no/such/t.json", "--timeline", "its folder no/such does not exist"}},
      {"a sweep output into a folder that does not exist",
       "sweep --trace " + kTrace + " --machine xeon-8380-ddr4 -q -o no/such/s.csv",
       {"no/such/s.csv", "-o", "does not exist"}},
      {"a trace written over a folder", "trace gen mlp -o .", {"-o", "a directory"}},
  };
#ifdef FUSIM_WITH_TORCH
  // Refused before the 7 s of measurement, not after them.
  out.push_back({"calibrate into a folder that does not exist",
                 "calibrate -o no/such/host.json",
                 {"no/such/host.json", "-o", "does not exist"}});
  out.push_back({"calibrate --points into a folder that does not exist",
                 "calibrate -o h.json --points no/such/p.csv",
                 {"no/such/p.csv", "--points", "does not exist"}});
  out.push_back({"calibrate --points without the op families",
                 "calibrate -o h.json --no-op-costs --points p.csv",
                 {"--points", "--no-op-costs"}});
  out.push_back({"calibrate --threads beyond the cores",
                 "calibrate -o h.json --threads 4096",
                 {"--threads: expected at most the ", "cores this process may use, got 4096"}});
  out.push_back({"calibrate --memory-overlap naming no op class",
                 "calibrate -o h.json --memory-overlap gemm=serial-reads,matmul=serial",
                 {"--memory-overlap: matmul: expected \"default\" or one of the op classes",
                  "(unknown class \"matmul\")"}});
  out.push_back({"calibrate --memory-overlap with an unknown name",
                 "calibrate -o h.json --memory-overlap gemm=fast",
                 {"--memory-overlap: gemm: expected \"double-buffered\", \"serial\" or "
                  "\"serial-reads\", got \"fast\""}});
  out.push_back(
      {"validate --save-profile without a measured profile",
       "validate --trace " + kTrace + " --machine xeon-8380-ddr4 --force --save-profile p.json",
       {"--save-profile: expected --profile auto, in-step or in-run", "no --profile"}});
  out.push_back(
      {"validate --save-profile into a folder that does not exist",
       "validate --trace " + kTrace +
           " --machine xeon-8380-ddr4 --force --profile in-run --save-profile no/such/p.json",
       {"no/such/p.json", "--save-profile", "does not exist"}});
  out.push_back({"run --timeline into a folder that does not exist",
                 "run --trace " + kTrace + " --timeline no/such/t.json",
                 {"--timeline", "does not exist"}});
#endif
  return out;
}

}  // namespace

TEST_CASE("misuses are one line 'fusim: ...' on stderr with a did-you-mean, exit 2") {
  for (const Case& c : cases()) {
    DYNAMIC_SECTION(c.name) {
      const std::string dir = scratch_dir("cli-errors");
      FusimRun r = run_fusim(dir, c.args);
      INFO("fusim " << c.args << "\nstderr: " << r.err);
      CHECK(r.exit_code == 2);
      REQUIRE(!r.err.empty());
      CHECK(r.err.rfind("fusim: ", 0) == 0);
      CHECK(r.err.find('\n') == r.err.size() - 1);  // exactly one line
      for (const auto& fragment : c.expect) CHECK(r.err.find(fragment) != std::string::npos);
      CHECK(r.out.empty());
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {  // nothing written
        const std::string name = entry.path().filename().string();
        CHECK((name == "fusim.out" || name == "fusim.err"));
      }
    }
  }
}

TEST_CASE("trace validate: ok lines on stdout, each failure one 'fusim:' line on stderr") {
  const std::string dir = scratch_dir("cli-errors-validate");
  const std::string bad = write_file(dir, "bad.json", "{\"format\": \"fusim-trace\"}");
  FusimRun r = run_fusim(dir, "trace validate " + kTrace + " " + bad);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out == kTrace + ": ok (4 layers, 64 params)\n");
  // The file's error, then the summary.
  CHECK(r.err.rfind("fusim: " + bad + ": ", 0) == 0);
  CHECK(r.err.find("\nfusim: 1 of 2 traces failed validation\n") != std::string::npos);
}
