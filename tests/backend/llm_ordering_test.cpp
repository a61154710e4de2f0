// The LLM layers of issue 20 in the backend: a Llama block (RMSNorm, RoPE, grouped-query
// attention, SwiGLU) and a GPT with an LM head tied to its embedding train to the same
// weights in every ordering as one whole-graph loss.backward() + torch::optim::Adam step.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim.h>
#include <catch2/catch.hpp>
#include <map>

#include "backend/layer_ops.h"
#include "backend/optimizer_config.h"
#include "backend/training_state.h"
#include "networks/networks.h"
#include "schedule/schedule.h"

using namespace fusim;
using schedule::Ordering;

namespace {
constexpr int kSteps = 3;
constexpr std::uint64_t kSeed = 11;

workload::Trace tiny(const std::string& family) {
  networks::NetworkOptions o;
  o.batch = 2;
  o.seq = 8;
  o.layers = 2;
  o.hidden = 16;
  o.heads = 4;
  o.kv_heads = family == "llama" ? 2 : 0;
  o.ffn = family == "llama" ? 24 : 0;
  o.vocab = 32;
  o.dtype = workload::DType::Float32;
  o.tied_embeddings = family == "gpt";
  return networks::make_network(family, o);
}

std::vector<at::Tensor> run_ordering(const workload::Trace& trace, Ordering ordering) {
  schedule::ScheduleOptions options;
  options.ordering = ordering;
  options.steps = kSteps;
  auto sched = schedule::build_schedule(trace, options);
  REQUIRE(schedule::check_schedule(trace, sched).empty());
  backend::TrainingState state(trace, sched, backend::optimizer_config("adam"), at::kCPU, kSeed);
  for (const auto& op : sched.ops) state.execute(op);
  return state.parameters();
}

// One autograd graph, tied params as one tensor, torch::optim::Adam over each leaf once.
std::vector<at::Tensor> run_reference(const workload::Trace& trace) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(kSeed);
  std::vector<backend::LayerTensors> tensors;
  std::map<std::string, at::Tensor> by_name;
  std::vector<at::Tensor> leaves;
  for (const auto& layer : trace.layers) {
    tensors.push_back(backend::make_layer_tensors(layer, gen, at::TensorOptions()));
    for (std::size_t k = 0; k < layer.params.size(); ++k) {
      const auto& spec = layer.params[k];
      if (!spec.tied_to.empty()) {
        tensors.back().params[k] = by_name.at(spec.tied_to);
        continue;
      }
      by_name[spec.name] = tensors.back().params[k];
      leaves.push_back(tensors.back().params[k]);
    }
  }
  auto inputs = backend::make_model_inputs(trace, gen, at::TensorOptions());
  torch::optim::Adam adam(leaves, torch::optim::AdamOptions(1e-3));
  for (int step = 0; step < kSteps; ++step) {
    adam.zero_grad();
    std::vector<at::Tensor> out(trace.layers.size());
    for (std::size_t i = 0; i < trace.layers.size(); ++i) {
      std::vector<at::Tensor> in;
      for (const auto& ref : trace.layers[i].inputs)
        in.push_back(ref.source == workload::InputRef::Source::Layer ? out[ref.index]
                                                                     : inputs[ref.index]);
      out[i] = backend::layer_forward(trace.layers[i], in, tensors[i], gen);
    }
    out.back().backward();
    adam.step();
  }
  std::vector<at::Tensor> result;
  for (const auto& t : tensors)
    for (const auto& p : t.params) result.push_back(p.detach().clone());
  return result;
}

double max_abs_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  return m;
}
}  // namespace

TEST_CASE("llama and tied-gpt blocks train alike in every ordering and as one graph") {
  for (const std::string family : {"llama", "gpt"}) {
    DYNAMIC_SECTION(family) {
      const auto trace = tiny(family);
      const auto reference = run_reference(trace);
      const auto eager = run_ordering(trace, Ordering::Eager);
      CHECK(max_abs_diff(eager, reference) < 1e-5);
      for (auto ordering : {Ordering::BackwardFused, Ordering::ForwardFused}) {
        INFO(to_string(ordering));
        CHECK(max_abs_diff(run_ordering(trace, ordering), eager) == 0.0);
      }
    }
  }
}
