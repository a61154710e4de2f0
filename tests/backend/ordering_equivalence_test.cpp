// The point of the backend: every ordering runs the same math. After K steps the params
// of eager, backward-fused, forward-fused and a mixed ordering (all three placements in
// one model) are equal to each other and to a plain whole-graph loss.backward() +
// torch::optim step from the same initial weights (LAMB, not in torch::optim: + the
// float64 reference of lamb_reference.h).
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim.h>
#include <catch2/catch.hpp>

#include "backend/layer_ops.h"
#include "backend/optimizer_config.h"
#include "backend/run_plan.h"
#include "backend/step_state.h"
#include "backend/training_state.h"
#include "core/error.h"
#include "lamb_reference.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using backend::TrainingState;
using schedule::Execution;
using schedule::LayerMode;
using schedule::OptimizerImpl;
using schedule::Ordering;

namespace {
constexpr int kSteps = 3;
constexpr std::uint64_t kSeed = 7;

workload::Trace tiny_convnet() {
  return workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/tiny_convnet.json");
}

// Every placement in one model: conv1's U before its next forward, bn1's right after its
// backward, conv2's after the whole backward, fc's (the default) after its backward.
schedule::MixedOrdering tiny_mixed() {
  schedule::MixedOrdering m;
  m.layers = {
      {"conv1", LayerMode::Forward}, {"bn1", LayerMode::Backward}, {"conv2", LayerMode::Eager}};
  m.fallback = LayerMode::Backward;
  return m;
}

std::vector<at::Tensor> run_ordering(const workload::Trace& trace, Ordering ordering,
                                     const std::string& optimizer, OptimizerImpl impl,
                                     Execution execution = Execution::Layers) {
  schedule::ScheduleOptions options;
  options.ordering = ordering;
  options.optimizer = optimizer;
  options.impl = impl;
  options.steps = kSteps;
  options.execution = execution;
  if (ordering == Ordering::Mixed) options.mixed = tiny_mixed();
  auto sched = schedule::build_schedule(trace, options);
  auto state =
      backend::make_step_state(trace, sched, backend::optimizer_config(optimizer), at::kCPU, kSeed);
  for (const auto& op : sched.ops) state->execute(op);
  return state->parameters();
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
  if (name == "rmsprop") return std::make_unique<RMSprop>(params, RMSpropOptions(0.01));
  return nullptr;  // lamb: lamb_reference.h
}

std::vector<double> to_doubles(const at::Tensor& t) {
  const auto c = t.detach().to(at::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
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
  test::LambReference lamb;
  std::vector<std::vector<double>> lamb_params;
  for (auto& p : params) lamb_params.push_back(to_doubles(p));
  for (int step = 0; step < kSteps; ++step) {
    for (auto& p : params) p.mutable_grad() = at::Tensor();
    std::vector<at::Tensor> out(trace.layers.size());
    for (std::size_t i = 0; i < trace.layers.size(); ++i) {
      std::vector<at::Tensor> in;
      for (const auto& ref : trace.layers[i].inputs)
        in.push_back(ref.source == workload::InputRef::Source::Layer ? out[ref.index]
                                                                     : inputs[ref.index]);
      out[i] = backend::layer_forward(trace.layers[i], in, tensors[i], gen);
    }
    out.back().backward();
    if (optimizer) {
      optimizer->step();
      continue;
    }
    std::vector<std::vector<double>> grads;
    for (auto& p : params) grads.push_back(to_doubles(p.grad()));
    lamb.step(lamb_params, grads);
    at::NoGradGuard no_grad;
    for (std::size_t k = 0; k < params.size(); ++k)
      params[k].copy_(at::tensor(lamb_params[k], at::kDouble).view(params[k].sizes()));
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
       {"sgd", "momentum", "nesterov", "adam", "adamw", "adagrad", "rmsprop", "lamb"}) {
    DYNAMIC_SECTION(name) {
      const auto reference = run_reference(trace, name);
      CHECK(max_abs_diff(reference, initial) > 1e-3);  // 3 steps moved the weights
      for (auto impl : {OptimizerImpl::Loop, OptimizerImpl::Foreach, OptimizerImpl::Fused}) {
        const auto eager = run_ordering(trace, Ordering::Eager, name, impl);
        for (auto ordering :
             {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused, Ordering::Mixed}) {
          INFO(to_string(ordering) << " " << to_string(impl));
          const auto params = run_ordering(trace, ordering, name, impl);
          CHECK(max_abs_diff(params, reference) < 1e-5);
          // Same kernels on the same gradients, only moved in time: bit for bit eager's.
          CHECK(max_abs_diff(params, eager) == 0.0);
          // One autograd graph, updates from hooks (backward-fused: the gradient
          // accumulators' post hooks; forward-fused: before F) on per-parameter
          // optimizers: the same math. A hook that stepped before the gradient was final,
          // twice, or never would move the weights off the reference.
          const auto graph = run_ordering(trace, ordering, name, impl, Execution::Graph);
          CHECK(max_abs_diff(graph, reference) < 1e-5);
        }
      }
    }
  }
}

// ---- ATen capture: parameter layers (a parameter read by three layers, a buffer) and
// every generic kind run F, Bx, Bw and U like one autograd graph with torch::optim.
TEST_CASE("Generic and parameter layers train like one autograd graph in every ordering") {
  const auto trace = workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/generic_layers.json");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(kSeed);
  std::vector<at::Tensor> initial;
  for (const auto& layer : trace.layers)
    for (auto& p : backend::make_layer_tensors(layer, gen, at::TensorOptions()).params)
      initial.push_back(p.detach());
  REQUIRE(initial.size() == 5);  // w, b, table, head.weight, head.bias
  for (const std::string name : {"sgd", "adam"}) {
    DYNAMIC_SECTION(name) {
      const auto reference = run_reference(trace, name);
      // Every parameter moved, w through all three of its readers' gradients.
      for (std::size_t k = 0; k < initial.size(); ++k) {
        INFO("param " << k);
        CHECK((reference[k] - initial[k]).abs().max().item<double>() > 1e-7);
      }
      for (auto ordering : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
        INFO(to_string(ordering));
        auto sched = [&] {
          schedule::ScheduleOptions options;
          options.ordering = ordering;
          options.optimizer = name;
          options.steps = kSteps;
          return schedule::build_schedule(trace, options);
        }();
        CHECK(schedule::check_schedule(trace, sched).empty());
        const auto params = run_ordering(trace, ordering, name, OptimizerImpl::Foreach);
        CHECK(max_abs_diff(params, reference) < 1e-5);
      }
    }
  }
}

TEST_CASE("A layer no gradient reaches keeps its weights, as torch.optim skips them") {
  // gate is read only by a comparison: no Bw, no U; fc and head train as usual.
  const auto trace =
      workload::load_trace(FUSIM_SOURCE_DIR "/tests/backend/no_gradient_branch.json");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(kSeed);
  std::vector<at::Tensor> initial;
  for (const auto& layer : trace.layers)
    for (auto& p : backend::make_layer_tensors(layer, gen, at::TensorOptions()).params)
      initial.push_back(p.detach());
  REQUIRE(initial.size() == 3);  // fc, gate, head
  const auto reference = run_reference(trace, "adam");
  for (auto ordering : {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused}) {
    INFO(to_string(ordering));
    const auto params = run_ordering(trace, ordering, "adam", OptimizerImpl::Foreach);
    CHECK(max_abs_diff(params, reference) < 1e-5);
    CHECK((params[0] - initial[0]).abs().max().item<double>() > 1e-4);  // fc trained
    CHECK((params[1] - initial[1]).abs().max().item<double>() == 0.0);  // gate untouched
  }
}

TEST_CASE("The mixed schedule really mixes the three U placements") {
  const auto trace = tiny_convnet();
  schedule::ScheduleOptions options;
  options.ordering = Ordering::Mixed;
  options.steps = kSteps;
  options.mixed = tiny_mixed();
  const auto sched = schedule::build_schedule(trace, options);
  // Trace layers 0 conv1, 1 bn1, 3 conv2, 8 fc.
  CHECK(sched.layer_modes[0] == LayerMode::Forward);
  CHECK(sched.layer_modes[1] == LayerMode::Backward);
  CHECK(sched.layer_modes[3] == LayerMode::Eager);
  CHECK(sched.layer_modes[8] == LayerMode::Backward);
}

TEST_CASE("run's schedules: mixed is accepted and needs its per-layer file") {
  const auto trace = tiny_convnet();
  backend::RunOptions run;
  run.warmup = 0;
  run.steps = 2;
  run.block = 2;
  const std::string dir = FUSIM_BINARY_DIR "/tests/backend/";
  CHECK_THROWS_WITH(
      backend::build_run_schedules(trace, {Ordering::Mixed}, "adam", OptimizerImpl::Foreach, run),
      Catch::Contains("ordering mixed needs a per-layer file (--mixed FILE)"));
  CHECK_THROWS_WITH(
      backend::build_run_schedules(trace, {Ordering::Mixed}, "adam", OptimizerImpl::Foreach, run,
                                   dir + "no_such_mixed.json"),
      Catch::Contains("no_such_mixed.json"));
  CHECK_THROWS_WITH(
      backend::build_run_schedules(trace, {Ordering::Eager}, "adam", OptimizerImpl::Foreach, run,
                                   FUSIM_SOURCE_DIR "/tests/backend/tiny_mixed.json"),
      Catch::Contains("--mixed: only with --ordering mixed"));
  // An unknown layer is blamed on its JSON path in the file.
  CHECK_THROWS_WITH(
      backend::build_run_schedules(trace, {Ordering::Mixed}, "adam", OptimizerImpl::Foreach, run,
                                   FUSIM_SOURCE_DIR "/tests/backend/tiny_mixed_bad_layer.json"),
      Catch::Contains("tiny_mixed_bad_layer.json") && Catch::Contains("conv9"));

  // The file holds tiny_mixed(); the run's schedule has its placements and enough steps.
  const auto schedules = backend::build_run_schedules(
      trace, {Ordering::Eager, Ordering::Mixed}, "lamb", OptimizerImpl::Fused, run,
      FUSIM_SOURCE_DIR "/tests/backend/tiny_mixed.json");
  REQUIRE(schedules.size() == 2);
  CHECK(schedules[1].ordering == Ordering::Mixed);
  CHECK(schedules[1].steps == backend::schedule_steps_for(run));  // 0 + 1 + 2 + 1 = 4
  CHECK(schedules[1].steps == 4);
  CHECK(schedules[1].layer_modes[0] == LayerMode::Forward);
  CHECK(schedules[1].layer_modes[1] == LayerMode::Backward);
  CHECK(schedules[1].layer_modes[3] == LayerMode::Eager);
  CHECK(schedules[1].layer_modes[8] == LayerMode::Backward);
}
