// Command-line misuse, through the real binary (issue 21, point 2): every numeric option out
// of range, an unknown or missing option, and machines beyond what the simulator can hold
// are refused at once with exit code 2 and one line naming the option (or file and JSON
// path), with nothing printed or written before it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "run_fusim.h"

using namespace fusim::test;

namespace {

const std::string kTrace = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";
const std::string kSim = "simulate --trace " + kTrace + " --machine xeon-8380-ddr4";
const std::string kSweep = "sweep --trace " + kTrace + " --machine xeon-8380-ddr4 -q";

// The machine of malformed_inputs_test.cpp: 2 cores, a private 32 KiB L1, a shared 1 MiB LLC.
std::string machine(const std::string& cores, const std::string& l1 = "32KiB") {
  return R"({"name": "m", "kind": "cpu", "compute": {"cores": )" + cores +
         R"(, "clock_mhz": 2000, "vector_flops_per_cycle": {"float32": 32}, "efficiency":)"
         R"( {"gemm": 0.8, "conv": 0.6, "elementwise": 0.5, "norm": 0.4, "reduction": 0.3,)"
         R"( "pool": 0.4, "attention": 0.5}, "dispatch_overhead_ns": 5000, "threads_per_op": 2},)"
         R"( "caches": {"clock": "2GHz", "levels": [{"name": "L1", "size": ")" +
         l1 +
         R"(", "assoc": 8, "line": 64, "latency_cycles": 4, "shared": false},)"
         R"( {"name": "LLC", "size": "1MiB", "assoc": 16, "line": 64, "latency_cycles": 14,)"
         R"( "shared": true}]}, "dram": {"preset": "ddr4-3200", "channels": 2}})";
}

struct Case {
  const char* name;
  std::string content;              // written as `file` when not empty
  std::string args;                 // {f}: that file's path
  std::vector<std::string> expect;  // fragments of the one stderr line
  std::string file = "m.json";
};

std::vector<Case> cases() {
  std::vector<Case> out = {
      {"schedule --steps 0 (was taken as the default)",
       "",
       "schedule --trace " + kTrace + " --steps 0",
       {"--steps: expected an integer in [1, 1000], got 0"}},
      {"simulate --steps 0", "", kSim + " --steps 0", {"--steps", "[1, 1000]", "got 0"}},
      {"simulate --warmup -1", "", kSim + " --warmup -1", {"--warmup", "[0, 100]", "got -1"}},
      {"simulate --steps not a number", "", kSim + " --steps three", {"--steps", "\"three\""}},
      {"simulate --chunk under a line",
       "",
       kSim + " --chunk 10",
       {"--chunk: expected auto or a size of at least 64 bytes, got 10"}},
      {"simulate --chunk not a size", "", kSim + " --chunk big", {"--chunk", "\"big\""}},
      {"sweep --steps 0", "", kSweep + " --steps 0", {"--steps", "got 0"}},
      {"sweep --warmup 1000", "", kSweep + " --warmup 1000", {"--warmup", "got 1000"}},
      {"unknown option", "", kSim + " --stepz 3", {"--stepz"}},
      {"missing required option", "", "simulate --trace " + kTrace, {"--machine", "required"}},
      // Resource guards: refused before anything is allocated (issue 21, point 3).
      {"a machine of 10^9 cores",
       machine("1000000000"),
       "simulate --trace " + kTrace + " --machine {f}",
       {"m.json", "compute.cores", "at most 65536 cores", "1000000000"}},
      {"--set compute.cores=1000000000",
       "",
       kSim + " --set compute.cores=1000000000",
       {"compute.cores", "at most 65536"}},
      {"private caches of every core over the memory budget",
       machine("60000", "64MiB"),
       "simulate --trace " + kTrace + " --machine {f}",
       {"m.json", "compute.cores", "private cache levels", "budget", "GiB"}},
      // Ran until killed before: refreshes over 9e18 idle cycles.
      {"DRAM trace arriving near 2^63",
       "0x40 READ 0\n0x80 READ 9000000000000000000\n",
       "dram --config ddr4-3200 --trace {f}",
       {"r.trc", "request 2", "an arrival cycle at most", "got 9000000000000000000"},
       "r.trc"},
      {"dram gen of 10^12 requests", "", "dram gen -n 1000000000000 -o g.trc", {"-n", "budget"}},
      // Wrote a trace that its own validator refused before (issue 21, point 2).
      {"trace gen beyond the trace format's shapes",
       "",
       "trace gen resnet18 --resolution 100000 --batch 1000 -o t.json",
       {"resnet18 at --batch 1000", "2^40", "--resolution"}},
      // Ran for minutes before (issue 21, point 3): refused before generating.
      {"trace gen of 10^7 transformer blocks",
       "",
       "trace gen gpt2-small --layers 10000000 -o t.json",
       {"--layers", "generated trace", "memory budget of", "GiB"}},
      {"--max-memory below a machine's cache state",
       "",
       kSim + " --max-memory 1KiB",
       {"caches", "memory budget of", "--max-memory"}},
      {"--max-memory not a size", "", kSim + " --max-memory lots", {"--max-memory", "\"lots\""}},
      {"dram gen whose arrivals overflow",
       "",
       "dram gen -n 1000 --interval 9000000000000000000 -o g.trc",
       {"--interval", "64 bits"}},
  };
#ifdef FUSIM_WITH_TORCH
  const std::string run = "run --trace " + kTrace + " --ordering eager";
  for (
      Case c : std::vector<Case>{
          // SIGFPE before: a division by the block size.
          {"run --block 0", "", run + " --block 0", {"--block", "[1, 100000]", "got 0"}},
          // Hung before: libtorch asked for 100000 intra-op threads.
          {"run --threads 100000",
           "",
           run + " --threads 100000",
           {"--threads", "hardware threads", "got 100000"}},
          // Accepted silently before.
          {"run --threads -1", "", run + " --threads -1", {"--threads", "got -1"}},
          {"run --steps 0", "", run + " --steps 0", {"--steps", "got 0"}},
          // A GPU model compared with CPU measurements without a word before.
          {"validate a GPU model on the CPU",
           "",
           "validate --trace " + kTrace + " --machine h100-sxm5 --device cpu",
           {"--machine", "h100-sxm5 is a GPU model", "--device cpu", "--force"}},
          {"validate --warmup -2",
           "",
           "validate --trace " + kTrace + " --machine xeon-8380-ddr4 --warmup -2",
           {"--warmup", "got -2"}},
          // No effect with a profile file (its cold times are measured already).
          // An uncaught libtorch allocation error before (issue 21, point 3): 2^40 weights.
          {"run of 2^40 parameters",
           R"({"format":"fusim-trace","version":1,"model":"huge","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,1048576]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[{"id":0,"name":"fc1","op":"linear","attrs":{"bias":false},"inputs":["input"],
   "output":[2,1048576],"params":[{"name":"fc1.weight","shape":[1048576,1048576]}]},
  {"id":1,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[0,"target"],"output":[]}]})",
           "run --trace {f} --ordering eager --measured-steps 2",
           // 4 TiB of weights, 8 TiB of Adam state, one step's 4 TiB gradient and foreach
           // Adam's two 4 TiB temporaries (sqrt(v), denom).
           {"--trace", "available memory", "24576.0 GiB"},
           "huge.json"},
          {"validate --evict without --profile auto",
           "",
           "validate --trace " + kTrace + " --machine xeon-8380-ddr4 --evict 64MiB",
           {"--evict", "only with --profile auto"}},
          {"profile --in-step and --from-run at once",
           R"({"results": []})",
           "profile --trace " + kTrace + " --in-step --from-run {f} -o p.json",
           {"--from-run", "either --in-step", "not both"},
           "run.json"},
          {"profile --from-run of a file that is not a run's output",
           R"({"conditions": {"threads": 2}, "device": "cpu", "results": [{"ordering": "eager",)"
           R"( "execution": "layers", "optimizer": "adam", "impl": "foreach"}]})",
           "profile --trace " + kTrace + " --from-run {f} -o p.json",
           {"run.json: results[0].per_op"},
           "run.json"},
          {"profile --from-run without an eager run",
           R"({"conditions": {"threads": 2}, "device": "cpu", "results": [{"ordering":)"
           R"( "backward-fused", "execution": "layers"}]})",
           "profile --trace " + kTrace + " --from-run {f} -o p.json",
           {"run.json: results", "an eager run of execution \"layers\""},
           "run.json"},
          {"validate --profile in-run without eager",
           "",
           "validate --trace " + kTrace +
               " --machine xeon-8380-ddr4 --profile in-run --ordering backward-fused",
           {"--profile", "eager among --ordering"}},
          {"validate --host-speed run with a profile",
           "",
           "validate --trace " + kTrace +
               " --machine xeon-8380-ddr4 --host-speed run --profile in-run",
           {"--host-speed run", "no --profile", "got in-run"}},
          {"simulate --compute-scale with a profile",
           "",
           "simulate --trace " + kTrace +
               " --machine xeon-8380-ddr4 --ordering eager --compute-scale 1.2 --profile " + kTrace,
           {"--compute-scale: expected no --profile", "measured ones"}},
          // A preset has no host.op_probe_us: nothing to scale against.
          {"validate --host-speed run on a preset",
           "",
           "validate --trace " + kTrace + " --machine xeon-8380-ddr4 --host-speed run",
           {"--host-speed run", "host.op_probe_us", "xeon-8380-ddr4"}},
          {"validate --host-speed fast",
           "",
           "validate --trace " + kTrace + " --machine xeon-8380-ddr4 --host-speed fast",
           {"--host-speed", "fast"}},
          {"validate --profile in-step over two executions",
           "",
           "validate --trace " + kTrace +
               " --machine xeon-8380-ddr4 --profile in-step --execution both",
           {"--profile", "one --execution with in-step"}},
      })
    out.push_back(c);
#endif
  return out;
}

}  // namespace

TEST_CASE("options out of range and machines too big: exit 2, one line naming them") {
  for (const Case& c : cases()) {
    DYNAMIC_SECTION(c.name) {
      const std::string dir = scratch_dir("option-misuse");
      std::string args = c.args;
      if (!c.content.empty()) {
        const std::string path = write_file(dir, c.file, c.content);
        args.replace(args.find("{f}"), 3, path);
      }
      INFO("case: " << c.name);
      check_one_line_refusal(run_fusim(dir, args), c.expect);
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {  // nothing written
        const std::string name = entry.path().filename().string();
        CHECK((name == "fusim.out" || name == "fusim.err" || name == c.file));
      }
    }
  }
}
