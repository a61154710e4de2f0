// The point of the backend: every ordering runs the same math. After K steps the params
// of eager, backward-fused and forward-fused are equal to each other and to a plain
// whole-graph loss.backward() + torch::optim step from the same initial weights.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim.h>
#include <catch2/catch.hpp>

#include "backend/layer_ops.h"
#include "backend/optimizer_config.h"
#include "backend/training_state.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using backend::TrainingState;
using schedule::OptimizerImpl;
using schedule::Ordering;

namespace {
constexpr int kSteps = 3;
constexpr std::uint64_t kSeed = 7;

workload::Trace tiny_convnet() {
  return workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/tiny_convnet.json");
}

std::vector<at::Tensor> run_ordering(const workload::Trace& trace, Ordering ordering,
                                     const std::string& optimizer, OptimizerImpl impl) {
  schedule::ScheduleOptions options;
  options.ordering = ordering;
  options.optimizer = optimizer;
  options.impl = impl;
  options.steps = kSteps;
  auto sched = schedule::build_schedule(trace, options);
  TrainingState state(trace, sched, backend::optimizer_config(optimizer), at::kCPU, kSeed);
  for (const auto& op : sched.ops) state.execute(op);
  return state.parameters();
}

std::unique_ptr<torch::optim::Optimizer> torch_optimizer(const std::string& name,
                                                         std::vector<at::Tensor> params) {
  using namespace torch::optim;
  if (name == "sgd") return std::make_unique<SGD>(params, SGDOptions(0.01));
  if (name == "momentum") return std::make_unique<SGD>(params, SGDOptions(0.01).momentum(0.9));
  if (name == "nesterov")
    return std::make_unique<SGD>(params, SGDOptions(0.01).momentum(0.9).nesterov(true));
  if (name == "adam") return std::make_unique<Adam>(params, AdamOptions(1e-3));
  if (name == "adamw")
    return std::make_unique<AdamW>(params, AdamWOptions(1e-3).weight_decay(1e-2));
  if (name == "adagrad") return std::make_unique<Adagrad>(params, AdagradOptions(0.01));
  return std::make_unique<RMSprop>(params, RMSpropOptions(0.01));
}

// The reference: one autograd graph for the whole model, torch::optim for the update.
// Same generator sequence as TrainingState: params layer by layer, then inputs, then masks.
std::vector<at::Tensor> run_reference(const workload::Trace& trace, const std::string& name) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(kSeed);
  std::vector<backend::LayerTensors> tensors;
  std::vector<at::Tensor> params;
  for (const auto& layer : trace.layers) {
    tensors.push_back(backend::make_layer_tensors(layer, gen, at::TensorOptions()));
    for (auto& p : tensors.back().params) params.push_back(p);
  }
  auto inputs = backend::make_model_inputs(trace, gen, at::TensorOptions());
  auto optimizer = torch_optimizer(name, params);
  for (int step = 0; step < kSteps; ++step) {
    optimizer->zero_grad();
    std::vector<at::Tensor> out(trace.layers.size());
    for (std::size_t i = 0; i < trace.layers.size(); ++i) {
      std::vector<at::Tensor> in;
      for (const auto& ref : trace.layers[i].inputs)
        in.push_back(ref.source == workload::InputRef::Source::Layer ? out[ref.index]
                                                                     : inputs[ref.index]);
      out[i] = backend::layer_forward(trace.layers[i], in, tensors[i], gen);
    }
    out.back().backward();
    optimizer->step();
  }
  std::vector<at::Tensor> result;
  for (auto& p : params) result.push_back(p.detach().clone());
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

TEST_CASE("All orderings and torch::optim agree after 3 steps of each optimizer") {
  const auto trace = tiny_convnet();
  REQUIRE(trace.layers.back().op == workload::OpKind::CrossEntropy);
  // The initial weights, to prove that the updates really ran.
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(kSeed);
  std::vector<at::Tensor> initial;
  for (const auto& layer : trace.layers)
    for (auto& p : backend::make_layer_tensors(layer, gen, at::TensorOptions()).params)
      initial.push_back(p.detach());

  for (const std::string name :
       {"sgd", "momentum", "nesterov", "adam", "adamw", "adagrad", "rmsprop"}) {
    DYNAMIC_SECTION(name) {
      const auto reference = run_reference(trace, name);
      CHECK(max_abs_diff(reference, initial) > 1e-3);  // 3 steps moved the weights
      for (auto ordering : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
        for (auto impl : {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused}) {
          INFO(to_string(ordering) << " " << to_string(impl));
          const auto params = run_ordering(trace, ordering, name, impl);
          CHECK(max_abs_diff(params, reference) < 1e-5);
        }
      }
    }
  }
}
