// Table of malformed inputs across every format fusim reads, each run through the real
// binary: exit code 2 and one line on stderr, "fusim: FILE: WHERE: expected ...", naming the
// file, the JSON path or line number and what was expected (DESIGN.md, "Principles").
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "run_fusim.h"

using namespace fusim::test;

namespace {

// The bundled tiny MLP (traces/examples/mlp_tiny.json), layer by layer so a case can change
// one piece.
const std::string kHead =
    R"({"format":"fusim-trace","version":1,"model":"mlp","batch":2,"source":"test",)"
    R"("dtype":"float32","inputs":[{"name":"input","shape":[2,4]},)"
    R"({"name":"target","shape":[2],"dtype":"int64"}],"layers":[)";
const std::string kFc1 =
    R"({"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],)"
    R"("output":[2,8],"params":[{"name":"fc1.weight","shape":[8,4]},{"name":"fc1.bias","shape":[8]}]})";
const std::string kAct =
    R"({"id":1,"name":"act","op":"relu","attrs":{},"inputs":[0],"output":[2,8]})";
const std::string kFc2 =
    R"({"id":2,"name":"fc2","op":"linear","attrs":{"bias":false},"inputs":[1],)"
    R"("output":[2,3],"params":[{"name":"fc2.weight","shape":[3,8]}]})";
const std::string kLoss =
    R"({"id":3,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[2,"target"],"output":[]})";

std::string mlp(const std::string& fc1 = kFc1, const std::string& act = kAct,
                const std::string& fc2 = kFc2, const std::string& loss = kLoss) {
  return kHead + fc1 + "," + act + "," + fc2 + "," + loss + "]}";
}

// Replaces the first `from` in `text` by `to` (the case's one defect).
std::string with(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// A two-level cache hierarchy for `fusim cache --config`.
const std::string kCache =
    R"({"clock": "2GHz", "levels": [)"
    R"({"name": "L1", "size": "32KiB", "assoc": 8, "line": 64, "latency_cycles": 4, "shared": false},)"
    R"({"name": "LLC", "size": "1MiB", "assoc": 16, "line": 64, "latency_cycles": 14, "shared": true}]})";
// A DRAM config for `fusim dram --config`: the DDR4-3200 preset plus overrides.
const std::string kDram = R"({"preset": "ddr4-3200", "channels": 2, "scheduler": "frfcfs"})";
// A machine: the Xeon preset's compute with kCache and kDram.
const std::string kMachine =
    R"({"name": "m", "kind": "cpu", "compute": {"cores": 2, "clock_mhz": 2000,)"
    R"("vector_flops_per_cycle": {"float32": 32}, "efficiency": {"gemm": 0.8, "conv": 0.6,)"
    R"("elementwise": 0.5, "norm": 0.4, "reduction": 0.3, "pool": 0.4, "attention": 0.5},)"
    R"("dispatch_overhead_ns": 5000, "threads_per_op": 2}, "caches": )" +
    kCache + R"(, "dram": )" + kDram + "}";

const std::string kTrace = "{src}/traces/examples/mlp_tiny.json";

struct Case {
  const char* name;
  std::string file;                 // written into the scratch folder ("" = none)
  std::string content;              // its bytes
  std::string args;                 // {f}: the file, {src}: the source tree
  std::vector<std::string> expect;  // fragments of the one stderr line
};

std::string binary_garbage() {
  std::string s;
  for (int i = 0; i < 256; ++i) s += static_cast<char>((i * 73 + 11) & 0xff);
  return s;
}

std::vector<Case> cases() {
  const std::string validate = "trace show {f}";
  const std::string sim = "simulate --trace " + kTrace + " --machine {f} --ordering eager";
  const std::string cache_cfg =
      "cache --config {f} --trace {src}/fuzz/seeds/address_trace/basic.txt";
  const std::string cache_trace = "cache --config cache.json --trace {f}";
  const std::string dram_cfg = "dram --config {f} --trace {src}/fuzz/seeds/dram_trace/basic.trc";
  const std::string dram_trace = "dram --config ddr4-3200 --trace {f}";
  const std::string mixed = "schedule --trace " + kTrace + " --ordering mixed --mixed {f}";
  return {
      // --- layer traces ---------------------------------------------------------------
      {"empty trace file",
       "t.json",
       "",
       validate,
       {"t.json", "a JSON document, got an empty file"}},
      {"truncated trace", "t.json", mlp().substr(0, 120), validate, {"t.json", "line 1"}},
      {"binary garbage trace", "t.json", binary_garbage(), validate, {"t.json", "line 1"}},
      {"trace is an array", "t.json", "[1, 2]", validate, {"t.json", "an object"}},
      {"batch of the wrong type",
       "t.json",
       with(mlp(), R"("batch":2)", R"("batch":"two")"),
       validate,
       {"t.json", "batch", "integer"}},
      {"zero batch",
       "t.json",
       with(mlp(), R"("batch":2)", R"("batch":0)"),
       validate,
       {"t.json", "batch", "got 0"}},
      {"negative dimension",
       "t.json",
       with(mlp(), R"("output":[2,8],"params")", R"("output":[2,-8],"params")"),
       validate,
       {"t.json", "layers[0].output", "-8"}},
      {"huge dimension",
       "t.json",
       with(mlp(), R"("shape":[8,4])", R"("shape":[8,4000000000000000])"),
       validate,
       {"t.json", "layers[0].params[0].shape"}},
      {"infinite number",
       "t.json",
       with(mlp(), R"("attrs":{},"inputs":[0])",
            R"("attrs":{"negative_slope":1e999},"inputs":[0])"),
       validate,
       {"t.json", "line 1 column", "a finite number", "1e999"}},
      {"NaN literal",
       "t.json",
       with(mlp(), R"("batch":2)", R"("batch":NaN)"),
       validate,
       {"t.json", "line 1"}},
      {"cycle in the layer DAG",
       "t.json",
       with(mlp(), R"("inputs":["input"])", R"("inputs":[2])"),
       validate,
       {"t.json", "layers[0].inputs", "acyclic", "0 -> 1 -> 2 -> 0"}},
      {"dangling layer reference",
       "t.json",
       with(mlp(), R"("inputs":[0])", R"("inputs":[7])"),
       validate,
       {"t.json", "layers[1].inputs[0]", "7"}},
      {"unknown op",
       "t.json",
       with(mlp(), R"("op":"relu")", R"("op":"relu6x")"),
       validate,
       {"t.json", "layers[1].op", "relu6x"}},
      {"misspelt key",
       "t.json",
       with(mlp(), R"("output":[2,8]})", R"("output":[2,8],"ouptut":1})"),
       validate,
       {"t.json", "layers[1]", "ouptut"}},
      {"duplicate layer id",
       "t.json",
       with(mlp(), R"("id":1)", R"("id":0)"),
       validate,
       {"t.json", "layers[1].id"}},
      {"missing trace file", "", "", "trace show nothing-here.json", {"nothing-here.json"}},
      {"trace path is a folder", "", "", "trace show {src}/traces", {"traces"}},
      // --- machine models -------------------------------------------------------------
      {"truncated machine", "m.json", kMachine.substr(0, 200), sim, {"m.json", "line 1"}},
      {"unknown machine kind",
       "m.json",
       with(kMachine, R"("kind": "cpu")", R"("kind": "tpu")"),
       sim,
       {"m.json", "kind", "tpu"}},
      {"negative core count",
       "m.json",
       with(kMachine, R"("cores": 2)", R"("cores": -2)"),
       sim,
       {"m.json", "compute.cores", "-2"}},
      {"efficiency over 1",
       "m.json",
       with(kMachine, R"("gemm": 0.8)", R"("gemm": 8)"),
       sim,
       {"m.json", "compute.efficiency.gemm"}},
      {"negative cache size",
       "m.json",
       with(kMachine, R"("size": "32KiB")", R"("size": -32768)"),
       sim,
       {"m.json", "caches.levels[0].size"}},
      {"cache bigger than addressable",
       "m.json",
       with(kMachine, R"("size": "1MiB")", R"("size": "32EiB")"),
       sim,
       {"m.json", "caches.levels[1].size"}},
      {"associativity not dividing the lines",
       "m.json",
       with(kMachine, R"("assoc": 8)", R"("assoc": 7)"),
       sim,
       {"m.json", "caches.levels[0].assoc", "divides"}},
      {"unknown replacement policy",
       "m.json",
       with(kMachine, R"("latency_cycles": 4,)", R"("latency_cycles": 4, "policy": "mru",)"),
       sim,
       {"m.json", "caches.levels[0].policy", "mru"}},
      {"negative per-channel cost",
       "m.json",
       with(kMachine, R"("threads_per_op": 2})",
            R"("threads_per_op": 2, "op_costs": {"batch_norm.Bx": {"fixed_ns": 1000,)"
            R"("efficiency": 0.1, "per_channel_ns": -5}}})"),
       sim,
       {"m.json", "compute.op_costs.batch_norm.Bx.per_channel_ns", "-5"}},
      {"negative per-ragged-plane cost",
       "m.json",
       with(kMachine, R"("threads_per_op": 2})",
            R"("threads_per_op": 2, "op_costs": {"batch_norm.Bw": {"fixed_ns": 1000,)"
            R"("efficiency": 0.1, "per_ragged_plane_ns": -1}}})"),
       sim,
       {"m.json", "compute.op_costs.batch_norm.Bw.per_ragged_plane_ns", "-1"}},
      {"op cost anchor of 3 numbers",
       "m.json",
       with(kMachine, R"("threads_per_op": 2})",
            R"("threads_per_op": 2, "op_costs": {"batch_norm.Bx": {"fixed_ns": 1000,)"
            R"("efficiency": 0.1, "anchors": [[0, 0, 0]]}}})"),
       sim,
       {"m.json", "compute.op_costs.batch_norm.Bx.anchors[0]", "7 numbers"}},
      {"op cost anchor with a negative ratio",
       "m.json",
       with(kMachine, R"("threads_per_op": 2})",
            R"("threads_per_op": 2, "op_costs": {"batch_norm.Bx": {"fixed_ns": 1000,)"
            R"("efficiency": 0.1, "anchors": [[0, 0, 0, 4096, 16, 1, -2]]}}})"),
       sim,
       {"m.json", "compute.op_costs.batch_norm.Bx.anchors[0][6]", "(0, 1000)"}},
      {"op cost anchors' reach below 1",
       "m.json",
       with(kMachine, R"("threads_per_op": 2})",
            R"("threads_per_op": 2, "op_costs": {"batch_norm.Bx": {"fixed_ns": 1000,)"
            R"("efficiency": 0.1, "anchor_reach": 0.5}}})"),
       sim,
       {"m.json", "compute.op_costs.batch_norm.Bx.anchor_reach", "[1, 1000]"}},
      {"switch cost per MiB negative",
       "m.json",
       with(kMachine, R"("threads_per_op": 2})",
            R"("threads_per_op": 2, "op_costs": {"switch.U": {"fixed_ns": 1000,)"
            R"("efficiency": 1, "per_mib_ns": -3}}})"),
       sim,
       {"m.json", "compute.op_costs.switch.U.per_mib_ns", "[0, 1e9]"}},
      {"op cost family without a kind",
       "m.json",
       with(kMachine, R"("threads_per_op": 2})",
            R"("threads_per_op": 2, "op_costs": {"view": {"fixed_ns": 1000, "efficiency": 1}}})"),
       sim,
       {"m.json", "compute.op_costs.view", "view.<kind>"}},
      {"machine with zero DRAM channels",
       "m.json",
       with(kMachine, R"("channels": 2)", R"("channels": 0)"),
       sim,
       {"m.json", "dram.channels", "got 0"}},
      {"unknown DRAM preset",
       "m.json",
       with(kMachine, R"("preset": "ddr4-3200")", R"("preset": "ddr9")"),
       sim,
       {"m.json", "dram.preset", "ddr9"}},
      {"unknown --set path",
       "",
       "",
       "simulate --trace " + kTrace +
           " --machine xeon-8380-ddr4 --ordering eager --set caches.L7.size=1MiB",
       {"xeon-8380-ddr4", "caches.L7"}},
      {"--set number beyond a double",
       "",
       "",
       "simulate --trace " + kTrace +
           " --machine xeon-8380-ddr4 --ordering eager --set compute.clock_mhz=2E800",
       {"xeon-8380-ddr4", "compute.clock_mhz", "within the range of a double", "2E800"}},
      {"unknown machine preset",
       "",
       "",
       "simulate --trace " + kTrace + " --machine no-such-gpu",
       {"no-such-gpu"}},
      // --- cache configs and address traces ---------------------------------------------
      {"zero associativity",
       "c.json",
       with(kCache, R"("assoc": 8)", R"("assoc": 0)"),
       cache_cfg,
       {"c.json", "levels[0].assoc", "got 0"}},
      {"line not a power of two",
       "c.json",
       with(kCache, R"("line": 64)", R"("line": 48)"),
       cache_cfg,
       {"c.json", "levels[0].line", "48"}},
      {"unknown write policy",
       "c.json",
       with(kCache, R"("latency_cycles": 4,)",
            R"("latency_cycles": 4, "write_policy": "write-around",)"),
       cache_cfg,
       {"c.json", "levels[0].write_policy", "write-around"}},
      {"clock without unit",
       "c.json",
       with(kCache, R"("clock": "2GHz")", R"("clock": "fast")"),
       cache_cfg,
       {"c.json", "clock", "fast"}},
      {"address trace with unknown access",
       "a.txt",
       "R 0x40\nX 0x80\n",
       cache_trace,
       {"a.txt", "line 2", "R or W"}},
      {"address trace without 0x",
       "a.txt",
       "# header\nR 0x40 8\nW 1234 8\n",
       cache_trace,
       {"a.txt", "line 3", "hexadecimal"}},
      {"address trace with negative size",
       "a.txt",
       "R 0x40 -8\n",
       cache_trace,
       {"a.txt", "line 1"}},
      {"binary garbage address trace", "a.txt", binary_garbage(), cache_trace, {"a.txt", "line 1"}},
      // --- DRAM configs and request traces ------------------------------------------------
      {"zero DRAM channels",
       "d.json",
       with(kDram, R"("channels": 2)", R"("channels": 0)"),
       dram_cfg,
       {"d.json", "channels", "got 0"}},
      // (3 channels are legal since a4f1d1d: they interleave by modulo.)
      {"channel interleave not a power of two",
       "d.json",
       with(kDram, R"("channels": 2)", R"("channels": 2, "interleave_bytes": 96)"),
       dram_cfg,
       {"d.json", "interleave_bytes", "power of two", "96"}},
      {"tRC shorter than tRAS + tRP (JEDEC)",
       "d.json",
       with(kDram, R"("channels": 2)", R"("channels": 2, "timing": {"tRC": 30})"),
       dram_cfg,
       {"d.json", "tRC (30) >= tRAS + tRP"}},
      {"tREFI not above tRFC",
       "d.json",
       with(kDram, R"("channels": 2)", R"("channels": 2, "timing": {"tREFI": "300ns"})"),
       dram_cfg,
       {"d.json", "tREFI > tRFC"}},
      // A fuzzer found HBM3 with 32 banks a rank at tREFI 222 ns: a REFpb every 7 ns, under
      // tRREFD (8 ns), replayed 4 requests for over a second (at exactly tRREFD, 270 ns, for
      // ever). Here 16 banks at tREFI 100 ns.
      {"per-bank refresh faster than tRREFD",
       "d.json",
       R"({"preset": "hbm3", "channels": 2, "timing": {"tREFI": "100ns", "tRFC": "50ns", "tRFCpb": "90ns"}})",
       dram_cfg,
       {"d.json", "a per-bank refresh interval", ">= 2 x tRREFD"}},
      {"per-bank refresh longer than tREFI",
       "d.json",
       R"({"preset": "hbm3", "channels": 2, "timing": {"tRFCpb": "4000ns"}})",
       dram_cfg,
       {"d.json", "tREFI > tRFCpb"}},
      {"unknown DRAM scheduler",
       "d.json",
       with(kDram, R"("frfcfs")", R"("lottery")"),
       dram_cfg,
       {"d.json", "scheduler", "lottery"}},
      {"cads exploration above 1",
       "d.json",
       with(kDram, R"("frfcfs")", R"("cads", "cads": {"exploration": 1.5})"),
       dram_cfg,
       {"d.json", "cads.exploration", "[0, 1]", "got 1.5"}},
      {"cads setting misspelt",
       "d.json",
       with(kDram, R"("frfcfs")", R"("cads", "cads": {"learning_rat": 0.1})"),
       dram_cfg,
       {"d.json", "cads", "learning_rat"}},
      {"DRAM trace with unknown command",
       "r.trc",
       "0x40 READ 0\n0x80 FETCH 1\n",
       dram_trace,
       {"r.trc", "line 2", "READ or WRITE"}},
      {"DRAM trace going back in time",
       "r.trc",
       "0x40 READ 5\n0x80 WRITE 4\n",
       dram_trace,
       {"r.trc", "line 2", "non-decreasing"}},
      {"DRAM trace with negative cycle",
       "r.trc",
       "0x40 READ -1\n",
       dram_trace,
       {"r.trc", "line 1", ">= 0"}},
      {"DRAM trace with a NUL byte",
       "r.trc",
       std::string("0x40 READ 0\0 garbage\n", 21),
       dram_trace,
       {"r.trc", "line 1"}},
      {"DRAM trace with an overlong line",
       "r.trc",
       "0x40 READ 0" + std::string(600, ' ') + "0x80 READ 1\n",
       dram_trace,
       {"r.trc", "line 1"}},
      // --- mixed orderings and sweeps ----------------------------------------------------------
      {"mixed: unknown layer",
       "x.json",
       R"({"layers": {"fc9": "forward"}, "default": "eager"})",
       mixed,
       {"x.json", "layers.fc9"}},
      {"mixed: unknown mode",
       "x.json",
       R"({"layers": {"fc1": "sideways"}, "default": "eager"})",
       mixed,
       {"x.json", "layers.fc1", "sideways"}},
      {"mixed: layer without params",
       "x.json",
       R"({"layers": {"act": "forward"}, "default": "eager"})",
       mixed,
       {"x.json", "layers.act", "params"}},
      {"mixed: no default",
       "x.json",
       R"({"layers": {"fc1": "forward"}})",
       mixed,
       {"x.json", "default"}},
      // --set values are not parsed JSON: bytes that are not UTF-8 reached nlohmann's dump()
      // and ended in std::terminate (found by fuzz_sweep_set; dash's printf writes the byte).
      {"--set size that is not UTF-8",
       "",
       "",
       "simulate --trace " + kTrace +
           R"sh( --machine xeon-8380-ddr4 --ordering eager --set "caches.LLC.size=$(printf '48M\240')")sh",
       {"xeon-8380-ddr4.json", "caches.levels[2].size", "48M"}},
      {"simulate: --compute-scale not positive",
       "",
       "",
       "simulate --trace " + kTrace +
           " --machine xeon-8380-ddr4 --ordering eager --compute-scale 0",
       {"--compute-scale", "0"}},
      {"sweep: --set value that is not UTF-8",
       "",
       "",
       "sweep --trace " + kTrace +
           R"sh( --machine xeon-8380-ddr4 --set "name=$(printf 'a\240'),b" -q)sh",
       {"--set name=", "a value in UTF-8"}},
      {"sweep: --set without =",
       "",
       "",
       "sweep --trace " + kTrace + " --machine xeon-8380-ddr4 --set caches.LLC.size -q",
       {"--set", "caches.LLC.size"}},
      {"sweep: missing trace",
       "",
       "",
       "sweep --trace missing.json --machine xeon-8380-ddr4 -q",
       {"missing.json"}},
      // --- fusim memory and the LLM zoo (issue 20) --------------------------------------
      {"memory: tp not dividing the heads",
       "",
       "",
       "memory --model llama-3.1-8b --tp 3 --gpu h100-sxm5",
       {"--tp: expected a divisor of the 32 attention heads of llama-3.1-8b, got 3"}},
      {"memory: stages not dividing the blocks",
       "",
       "",
       "memory --model llama-3.1-70b --pp 3 --gpu h100-sxm5",
       {"--pp: expected the 80 transformer blocks of llama-3.1-70b to split evenly"}},
      {"memory: global batch",
       "",
       "",
       "memory --model llama-3.1-8b --dp 2 --global-batch 3 --gpu h100-sxm5",
       {"--global-batch: expected a multiple of --microbatch x --dp = 1 x 2 = 2, got 3"}},
      {"memory: unknown GPU",
       "",
       "",
       "memory --model llama-3.1-8b --gpu b200",
       {"--gpu: expected one of", "got \"b200\""}},
      {"memory: a family without its sizes",
       "",
       "",
       "memory --model llama --gpu h100-sxm5",
       {"llama: expected --layers, --hidden, --heads and --vocab"}},
      {"memory: a trace at another batch",
       "",
       "",
       "memory --trace " + kTrace + " --microbatch 3 --gpu h100-sxm5",
       {"--microbatch: expected the batch 2 of", "got 3"}},
      {"memory: an asynchronous schedule",
       "",
       "",
       "memory --model gpt-22b --pp 2 --pipeline-schedule pipedream-2bw --gpu h100-sxm5",
       {"--pipeline-schedule: expected one of gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v"}},
      {"trace gen: kv heads not dividing the heads",
       "",
       "",
       "trace gen llama-3.1-8b --kv-heads 5 -o x.json",
       {"--kv-heads: expected a divisor of --heads (32), got 5"}},
      // --- resource limits (refused before allocation) -----------------------------------------
      {"cache state over the memory budget",
       "c.json",
       with(kCache, R"("size": "1MiB")", R"("size": "1TiB")"),
       cache_cfg,
       {"c.json", "levels[1].size", "budget"}},
      {"DRAM channels over the memory budget",
       "d.json",
       with(kDram, R"("channels": 2)", R"("channels": 1073741824)"),
       dram_cfg,
       {"d.json", "channels", "budget"}},
  };
}

std::string substitute(std::string s, const std::string& file) {
  for (auto [key, value] :
       {std::pair<std::string, std::string>{"{f}", file}, {"{src}", FUSIM_SOURCE_DIR}})
    for (auto at = s.find(key); at != std::string::npos; at = s.find(key))
      s.replace(at, key.size(), value);
  return s;
}

}  // namespace

TEST_CASE(
    "every malformed input exits with code 2 and one line naming file, place and expectation") {
  const auto table = cases();
  REQUIRE(table.size() >= 40);
  for (const Case& c : table) {
    DYNAMIC_SECTION(c.name) {
      const std::string dir = scratch_dir("malformed");
      write_file(dir, "cache.json", kCache);
      if (!c.file.empty()) write_file(dir, c.file, c.content);
      INFO("case: " << c.name);
      check_one_line_refusal(run_fusim(dir, substitute(c.args, c.file)), c.expect);
    }
  }
}
