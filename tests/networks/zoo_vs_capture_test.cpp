// The zoo generators (models/networks) against the traces scripts/capture_trace.py recorded
// from PyTorch's own definitions (traces/*.json at batch 32): every layer must agree in
// name, op, attrs, inputs, output shape, params and buffers, so the C++ zoo is checked
// against torchvision rather than against itself.
#include <catch2/catch.hpp>
#include <string>

#include "networks/networks.h"
#include "workload/trace_io.h"

using fusim::networks::make_network;
using fusim::networks::NetworkOptions;
using fusim::workload::InputRef;
using fusim::workload::Trace;

namespace {

Trace bundled(const std::string& file) {
  return fusim::workload::load_trace(std::string(FUSIM_SOURCE_DIR) + "/traces/" + file);
}

std::string ref_text(const Trace& t, const InputRef& r) {
  return r.source == InputRef::Source::Layer ? t.layers.at(r.index).name
                                             : t.inputs.at(r.index).name;
}

// Layer by layer, so a mismatch names the first layer that differs.
void require_same_network(const Trace& generated, const Trace& captured) {
  REQUIRE(generated.layers.size() == captured.layers.size());
  REQUIRE(generated.inputs == captured.inputs);
  for (std::size_t i = 0; i < captured.layers.size(); ++i) {
    const auto& g = generated.layers[i];
    const auto& c = captured.layers[i];
    INFO("layer " << i << ": generated " << g.name << ", captured " << c.name);
    REQUIRE(g.name == c.name);
    REQUIRE(g.op == c.op);
    REQUIRE(g.attrs == c.attrs);
    REQUIRE(g.output == c.output);
    REQUIRE(g.params == c.params);
    REQUIRE(g.buffers == c.buffers);
    REQUIRE(g.inputs.size() == c.inputs.size());
    for (std::size_t k = 0; k < c.inputs.size(); ++k)
      REQUIRE(ref_text(generated, g.inputs[k]) == ref_text(captured, c.inputs[k]));
  }
  REQUIRE(generated.param_count() == captured.param_count());
}

void check_against_capture(const std::string& network, const std::string& file,
                           std::int64_t torch_params) {
  Trace captured = bundled(file);
  NetworkOptions options;  // batch 32, 224x224, seq 128: as the bundled traces were made
  // Through JSON and back, as `fusim trace gen` writes it and every consumer reads it.
  Trace generated = fusim::workload::parse_trace(
      fusim::workload::trace_to_json(make_network(network, options)), "<generated>");
  require_same_network(generated, captured);
  // sum(p.numel() for p in model.parameters()) of the PyTorch model.
  CHECK(captured.param_count() == torch_params);
  generated.source = captured.source;
  CHECK(generated == captured);
}

}  // namespace

TEST_CASE("generated resnet50 equals the captured torchvision resnet50") {
  check_against_capture("resnet50", "resnet50.json", 25557032);
}

TEST_CASE("generated resnet18 equals the captured torchvision resnet18") {
  check_against_capture("resnet18", "resnet18.json", 11689512);
}

TEST_CASE("generated vgg16 equals the captured torchvision vgg16") {
  check_against_capture("vgg16", "vgg16.json", 138357544);
}

TEST_CASE("generated mobilenet_v2 equals the captured torchvision mobilenet_v2") {
  check_against_capture("mobilenet_v2", "mobilenet_v2.json", 3504872);
}

TEST_CASE("generated bert-base equals the captured fusim_models.bert_base") {
  check_against_capture("bert-base", "bert-base.json", 132953658);
}

TEST_CASE("generated gpt2-small equals the captured fusim_models.gpt2_small") {
  check_against_capture("gpt2-small", "gpt2-small.json", 163037184);
}

TEST_CASE("generated mlp equals the captured fusim_models.mlp") {
  // 784*1024+1024 + 1024*1024+1024 + 1024*10+10
  check_against_capture("mlp", "mlp.json", 1863690);
}
