// Misuses no other row covered, tried command by command of `fusim --help` as a new user
// would (issue 21, "done means": a held-out set): wrong units, zero and negative sizes,
// empty files, folders and endless devices as files, options given twice, options that
// have no effect. Each was taken silently, crashed, hung or said it in two lines before;
// each is refused with exit code 2 and one line naming the option or file, or, where the
// option only has no effect, warned about in one line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "run_fusim.h"

using namespace fusim::test;

namespace {

const std::string kTrace = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";
const std::string kSim =
    "simulate --trace " + kTrace + " --machine xeon-8380-ddr4 --fidelity block";
const std::string kMemory = "memory --model llama-3.1-8b --gpu h100-sxm5";
const std::string kDram =
    "dram --config ddr4-3200 --trace " FUSIM_SOURCE_DIR "/fuzz/seeds/dram_trace/basic.trc";

struct Case {
  const char* name;
  std::string args;                 // run in a scratch folder holding empty.json and folder/
  std::vector<std::string> expect;  // fragments of the one stderr line
};

std::vector<Case> cases() {
  std::vector<Case> out = {
      // Sizes whose 0 means "the default" inside were taken as the default without a word.
      {"trace gen mlp --hidden 0",
       "trace gen mlp --hidden 0 -o g.json",
       {"--hidden: expected a positive integer, got 0"}},
      {"trace gen mlp --layers 0",
       "trace gen mlp --layers 0 -o g.json",
       {"--layers: expected a positive integer, got 0"}},
      {"trace gen gpt2-small --seq 0",
       "trace gen gpt2-small --seq 0 -o g.json",
       {"--seq: expected a positive integer, got 0"}},
      {"memory --seq 0", kMemory + " --seq 0", {"--seq: expected a positive integer, got 0"}},
      // Taken as the preset's 8192 before.
      {"memory --seq -5", kMemory + " --seq -5", {"--seq: expected a positive integer, got -5"}},
      {"memory --vocab 0", kMemory + " --vocab 0", {"--vocab: expected a positive integer"}},
      {"memory --global-batch 0",
       kMemory + " --global-batch 0",
       {"--global-batch: expected a positive integer, got 0"}},
      // Said "expected at least 2 ..., got 1" for the 0 typed.
      {"memory --virtual-stages 0",
       kMemory + " --pp 2 --pipeline-schedule interleaved --virtual-stages 0",
       {"--virtual-stages: expected a positive integer, got 0"}},
      {"sweep --batch 0",
       "sweep --trace mlp --machine xeon-8380-ddr4 -q --batch 0",
       {"--batch: expected a positive integer, got 0"}},
      // Wrong units.
      {"memory --gpu 80 (80 bytes before)",
       "memory --model llama-3.1-8b --gpu 80",
       {"--gpu", "a size with its unit such as 80GiB", "got \"80\""}},
      {"memory --seq 8k (CLI11's \"Could not convert\" before)",
       kMemory + " --seq 8k",
       {"--seq: expected", "got \"8k\""}},
      {"memory --tp 2x (CLI11's \"Could not convert: --tp = 2x\" before)",
       kMemory + " --tp 2x",
       {"--tp: expected an integer, got \"2x\""}},
      {"dram --cycles 1e9", kDram + " --cycles 1e9", {"--cycles: expected an integer", "\"1e9\""}},
      // Negative values of unsigned options wrapped around to 2^64 - n.
      {"dram gen -n -5 (read as 2^64 - 5)",
       "dram gen -n -5 -o g.trc",
       {"-n: expected a non-negative integer, got -5"}},
      {"dram gen --reads -1 (a weight of 2^64 - 1)",
       "dram gen -n 10 --reads -1 -o g.trc",
       {"--reads: expected a non-negative integer, got -1"}},
      // std::length_error from vector::reserve, uncaught: a terminate.
      {"bench dram --requests -1",
       "bench dram --requests -1",
       {"--requests: expected a non-negative integer, got -1"}},
      {"bench dram --requests beyond the memory budget",
       "bench dram --requests 1000000000000000",
       {"--requests", "generated requests", "memory budget"}},
      // A value range printed with 309 digits before.
      {"dram --cycles -1",
       kDram + " --cycles -1",
       {"--cycles: expected an integer in [0,", "got -1"}},
      // Said "fusim: fusim dram: ...".
      {"dram without --trace",
       "dram --config ddr4-3200",
       {"fusim: dram: expected --config PRESET_OR_FILE and --trace FILE"}},
      // A short option the command does not have: CLI11's "arguments were not expected".
      {"simulate -o",
       kSim + " -o out.csv",
       {"simulate: unknown option -o", "`fusim simulate --help`"}},
      // Folders, empty files and endless devices as files.
      {"trace show of a folder (taken as a zoo name before)",
       "trace show folder",
       {"folder: expected a JSON file, got a directory"}},
      {"trace validate of one folder (two lines before)",
       "trace validate folder",
       {"folder: expected a JSON file, got a directory"}},
      // CLI11's own words before ("File is actually a directory: folder").
      {"simulate --profile of a folder",
       kSim + " --profile folder",
       {"--profile: expected a profile JSON file (fusim profile -o), got the directory"}},
      {"sweep --profile of a missing file",
       "sweep --trace mlp --machine xeon-8380-ddr4 -q --profile missing.json",
       {"--profile: expected a profile JSON file", "\"missing.json\": no such file"}},
      // Zero requests or accesses, reported as results (bandwidth 0, miss rate 0) with exit 0.
      {"dram of an empty trace",
       "dram --config ddr4-3200 --trace empty.json",
       {"empty.json: expected at least one request"}},
      {"cache of an empty trace",
       "cache --config " FUSIM_SOURCE_DIR
       "/fuzz/seeds/cache_config/xeon-8380-ddr4.json --trace empty.json",
       {"empty.json: expected at least one access"}},
      {"help of an unknown command",
       "help simualte",
       {"unknown command \"fusim simualte\"", "did you mean \"simulate\""}},
      {"simulate --trace of an empty file",
       "simulate --trace empty.json --machine xeon-8380-ddr4",
       {"empty.json: expected a JSON document, got an empty file"}},
      {"trace validate /dev/zero (read until killed before)",
       "trace validate /dev/zero",
       {"/dev/zero: expected a JSON file of at most 256MiB, got more"}},
      {"dram --trace /dev/zero (read until out of memory before)",
       "dram --config ddr4-3200 --trace /dev/zero --max-memory 64MiB",
       {"/dev/zero: file", "trace text", "memory budget"}},
      {"cache --trace /dev/zero (one endless line before)",
       "cache --config " FUSIM_SOURCE_DIR
       "/fuzz/seeds/cache_config/xeon-8380-ddr4.json --trace /dev/zero",
       {"/dev/zero: line 1", "in at most 4096 bytes, got a longer line"}},
      // Options given twice.
      {"trace gen --batch twice", "trace gen resnet18 --batch 2 --batch 4 -o g.json", {"--batch"}},
      {"simulate --machine twice", kSim + " --machine h100-sxm5", {"--machine"}},
  };
#ifdef FUSIM_WITH_TORCH
  // Accepted as seed 2^64 - 1 before.
  out.push_back({"run --seed -1",
                 "run --trace " + kTrace + " --ordering eager --measured-steps 2 --seed -1",
                 {"--seed: expected a non-negative integer, got -1"}});
#endif
  return out;
}

}  // namespace

TEST_CASE("held-out misuses of every command: exit 2, one line naming the option or file") {
  for (const Case& c : cases()) {
    DYNAMIC_SECTION(c.name) {
      const std::string dir = scratch_dir("held-out");
      write_file(dir, "empty.json", "");
      std::filesystem::create_directory(dir + "/folder");
      INFO("case: " << c.name);
      check_one_line_refusal(run_fusim(dir, c.args), c.expect);
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {  // nothing written
        const std::string name = entry.path().filename().string();
        CHECK((name == "fusim.out" || name == "fusim.err" || name == "empty.json" ||
               name == "folder"));
      }
    }
  }
}

TEST_CASE("an option that changes nothing is warned about in one line, and the command runs") {
  const std::string dir = scratch_dir("held-out-warn");
  struct Warned {
    std::string args, warning;
  };
  for (const Warned& w : std::vector<Warned>{
           // Ignored without a word before: the plan's GPUs are tp x pp x dp x cp.
           {kMemory + " --gpus 8", "fusim: warning: --gpus has no effect without --search"},
           // --batch sizes the zoo networks; a trace file has its own batch.
           {"sweep --trace " + kTrace + " --machine xeon-8380-ddr4 --fidelity block -q --batch 8",
            "fusim: warning: --batch has no effect on trace files"}}) {
    FusimRun r = run_fusim(dir, w.args);
    INFO(w.args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.rfind(w.warning, 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(!r.out.empty());
  }
}
