// Options that change nothing in the chosen mode are warned about on stderr, one line
// "fusim: warning: ...", and the command goes on (issue 21, point 2): a mistaken option is
// never taken silently, and a meaningful one never draws a warning.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "reliability/run_fusim.h"

using namespace fusim::test;

namespace {
const std::string kSim = "simulate --trace " FUSIM_SOURCE_DIR
                         "/traces/examples/mlp_tiny.json --machine xeon-8380-ddr4 "
                         "--ordering eager --no-per-op --json";
}  // namespace

TEST_CASE("simulate --block warns unless the fidelity is block") {
  const std::string dir = scratch_dir("cli-warnings-block");
  FusimRun line = run_fusim(dir, kSim + " --fidelity line --block 8KiB");
  INFO(line.err);
  CHECK(line.exit_code == 0);
  CHECK(messages(line.err) ==
        "fusim: warning: --block has no effect with --fidelity line (it is the unit of "
        "--fidelity block)\n");
  FusimRun block = run_fusim(dir, kSim + " --fidelity block --block 8KiB");
  CHECK(block.exit_code == 0);
  CHECK(messages(block.err).empty());
}

TEST_CASE("trace gen warns about sizes the network does not have") {
  const std::string dir = scratch_dir("cli-warnings-gen");
  FusimRun resnet = run_fusim(dir, "trace gen resnet18 --batch 1 --layers 3 --seq 64 -o r.json");
  INFO(resnet.err);
  CHECK(resnet.exit_code == 0);
  CHECK(messages(resnet.err) ==
        "fusim: warning: --layers has no effect on resnet18 (the hidden layers of mlp, the "
        "blocks of transformers)\n"
        "fusim: warning: --seq has no effect on resnet18 (the sequence length of "
        "transformers)\n");
  CHECK(std::filesystem::exists(dir + "/r.json"));
  // The options the network has: no warning.
  FusimRun mlp = run_fusim(dir, "trace gen mlp --batch 1 --layers 3 --hidden 16 -o m.json");
  CHECK(mlp.exit_code == 0);
  CHECK(messages(mlp.err).empty());
  FusimRun cnn = run_fusim(dir, "trace gen resnet18 --batch 1 --resolution 32 -o c.json");
  CHECK(cnn.exit_code == 0);
  CHECK(messages(cnn.err).empty());
}

TEST_CASE("the warnings' checks drop progress lines only") {
  CHECK(messages("simulate eager [=====>    ] 45%  1.2s elapsed  ETA 1s\n"
                 "fusim: warning: --block has no effect\n") ==
        "fusim: warning: --block has no effect\n");
  // A second line of a message is kept, so a two-line warning still fails the checks above.
  CHECK(messages("fusim: warning: a\nsecond line [of it] here\n") ==
        "fusim: warning: a\nsecond line [of it] here\n");
}
