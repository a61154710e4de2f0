// Saving and reading back gives the same trace; files in any order are sorted
// topologically; generator-built traces go through the same validation.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "trace_text.h"
#include "workload/validate.h"

using namespace fusim;
using namespace fusim::workload;
using fusim::test::parse;
using fusim::test::trace_json;

namespace {
const std::string kExample = FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json";

// The SCHEMA example with its layers in reverse order and a conv branch joined by concat.
const std::string kShuffled = trace_json(
    R"([{"name":"input","shape":[2,1,4,4]},{"name":"target","shape":[2],"dtype":"int64"}])",
    R"([
 {"id":9,"name":"loss","op":"cross_entropy","inputs":[8,"target"],"output":[]},
 {"id":8,"name":"fc","op":"linear","attrs":{"bias":true},"inputs":[7],"output":[2,3],
  "params":[{"name":"fc.weight","shape":[3,32]},{"name":"fc.bias","shape":[3]}]},
 {"id":7,"name":"flat","op":"flatten","inputs":[6],"output":[2,32]},
 {"id":6,"name":"cat","op":"concat","attrs":{"dim":1},"inputs":[5,4],"output":[2,2,4,4]},
 {"id":5,"name":"b","op":"conv2d","attrs":{"kernel":[3,3],"padding":[1,1]},"inputs":["input"],"output":[2,1,4,4],
  "params":[{"name":"b.weight","shape":[1,1,3,3],"requires_grad":false}]},
 {"id":4,"name":"a","op":"relu","inputs":["input"],"output":[2,1,4,4]}
])");

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("save then load gives an equal trace") {
  for (const auto& trace : {load_trace(kExample), parse(kShuffled),
                            load_trace(FUSIM_SOURCE_DIR "/traces/examples/generic_layers.json")}) {
    std::string path = FUSIM_BINARY_DIR "/test_workload_roundtrip_" + trace.model + ".json";
    save_trace(trace, path);
    Trace back = load_trace(path);
    CHECK(back == trace);
    CHECK(back.file == path);
    CHECK(trace_to_json(back) == trace_to_json(trace));
    // Compact: 7 top-level lines (8 with "capture"), "layers":[ , one line per layer,
    // closing line.
    std::string text = read_text(path);
    CHECK(std::count(text.begin(), text.end(), '\n') ==
          static_cast<long>(7 + (trace.capture ? 1 : 0) + 1 + trace.layers.size() + 1));
    std::remove(path.c_str());
  }
}

TEST_CASE("layers are sorted topologically and inputs point into the sorted order") {
  Trace t = parse(kShuffled);
  // DFS from the file's first layer (the loss) towards producers: input-side layers finish
  // first. Producers of cat are visited in its input order: b (id 5) before a (id 4).
  std::vector<int> ids;
  for (const auto& l : t.layers) ids.push_back(l.id);
  CHECK(ids == std::vector<int>{5, 4, 6, 7, 8, 9});
  for (std::size_t i = 0; i < t.layers.size(); ++i)
    for (const auto& in : t.layers[i].inputs)
      if (in.source == InputRef::Source::Layer) CHECK(static_cast<std::size_t>(in.index) < i);
  const Layer& cat = t.layers[2];
  REQUIRE(cat.inputs.size() == 2);
  CHECK(cat.inputs[0] == InputRef{InputRef::Source::Layer, 0});  // b
  CHECK(cat.inputs[1] == InputRef{InputRef::Source::Layer, 1});  // a
  // b's weight is frozen and a reads only the model input: neither is tracked, so cat,
  // flat are not either; fc is (its params train).
  CHECK_FALSE(t.layers[0].output_requires_grad);
  CHECK_FALSE(t.layers[3].output_requires_grad);
  CHECK(t.layers[4].output_requires_grad);
  // A file already in topological order keeps its order.
  Trace example = load_trace(kExample);
  std::vector<int> example_ids;
  for (const auto& l : example.layers) example_ids.push_back(l.id);
  CHECK(example_ids == std::vector<int>{0, 1, 2, 3});
  CHECK(example.param_count() == 64);  // 8*4 + 8 + 3*8
}

TEST_CASE("traces built in memory are validated with the same messages") {
  Trace t = load_trace(kExample);
  t.file.clear();
  t.layers[1].op = OpKind::Conv2d;  // a conv2d with no kernel set
  try {
    validate_and_sort(t);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(
        std::string(e.what()) ==
        "<generated mlp>: layers[1].attrs.kernel: expected a list of 2 positive integers, got []");
  }
  Trace fine = load_trace(kExample);
  Trace copy = fine;
  validate_and_sort(copy);  // validating a valid, sorted trace changes nothing
  CHECK(copy == fine);
}

#ifdef FUSIM_EXE
TEST_CASE("fusim trace show --json prints the issue's shape with hand-computed numbers") {
  std::string cmd = std::string(FUSIM_EXE) + " trace show --json " + kExample;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  CHECK(pclose(pipe) == 0);
  // fc1: 2*4*8 MACs = 128 + 16 bias adds; no input grad (model input), dW 128 + db 16.
  // act: relu 16 each way. fc2: 2*8*3 = 48 MACs: 96 fwd, dX 96 + dW 96.
  // loss: M=2, C=3: 5*6 + 2*2 + 1 = 35 fwd; 4*6 + 2 + 1 = 27 bwd.
  // Outputs (kept in --json, issue 23): batch 2 x 8 (64 B), 2 x 3 (24 B), the scalar loss.
  auto expected = nlohmann::json::parse(R"({"model":"mlp","batch":2,"layers":[
    {"id":0,"name":"fc1","op":"linear","output":[2,8],"params":40,"activation_bytes":64,"flops_fwd":144,"flops_bwd":144},
    {"id":1,"name":"act","op":"relu","output":[2,8],"params":0,"activation_bytes":64,"flops_fwd":16,"flops_bwd":16},
    {"id":2,"name":"fc2","op":"linear","output":[2,3],"params":24,"activation_bytes":24,"flops_fwd":96,"flops_bwd":192},
    {"id":3,"name":"loss","op":"cross_entropy","output":[],"params":0,"activation_bytes":4,"flops_fwd":35,"flops_bwd":27}],
    "totals":{"layers":4,"params":64,"activation_bytes":156,"flops_fwd":291,"flops_bwd":379}})");
  CHECK(nlohmann::json::parse(out) == expected);
}
#endif
