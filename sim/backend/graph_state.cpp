#include "backend/graph_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <algorithm>

#include "core/error.h"

namespace fusim::backend {
namespace {
using schedule::LayerMode;
using schedule::OpKind;
using torch::autograd::variable_list;

// Marks the start of a layer's backward: a pre-hook on the node that made its output (the
// last node its forward created, so the first of its nodes the engine runs).
struct BackwardBegins final : torch::autograd::FunctionPreHook {
  BackwardBegins(GraphState* s, int l) : state(s), layer(l) {}
  variable_list operator()(const variable_list& grads) override {
    state->backward_begins(layer);
    return grads;
  }
  GraphState* state;
  int layer;
};

// Steps a parameter's optimizer once its gradient is accumulated: a post hook on the
// parameter's AccumulateGrad node, which the engine runs as soon as the gradient is final
// (AccumulateGrad has the highest priority, sequence_nr UINT64_MAX: torch/csrc/autograd/
// functions/accumulate_grad.cpp).
struct GradientFinal final : torch::autograd::FunctionPostHook {
  GradientFinal(GraphState* s, int l, int p) : state(s), layer(l), param(p) {}
  variable_list operator()(const variable_list& outputs, const variable_list&) override {
    state->gradient_final(layer, param);
    return outputs;
  }
  GraphState* state;
  int layer, param;
};
}  // namespace

GraphState::GraphState(const workload::Trace& trace, const schedule::Schedule& schedule,
                       const OptimizerConfig& optimizer, at::Device device, std::uint64_t seed)
    : trace_(trace), device_(device), gen_(at::make_generator<at::CPUGeneratorImpl>(seed)) {
  const auto n = trace.layers.size();
  const auto options = at::TensorOptions().device(device);
  // The draws in TrainingState's order: both executions start from the same weights.
  for (std::size_t i = 0; i < n; ++i) {
    tensors_.push_back(make_layer_tensors(trace.layers[i], gen_, options));
    if (trace.layers[i].op == workload::OpKind::CrossEntropy) sink_ = int(i);
  }
  FUSIM_ASSERT(sink_ >= 0, "a validated trace has one cross_entropy layer");
  model_inputs_ = make_model_inputs(trace, gen_, options);
  modes_ = schedule.layer_modes;
  FUSIM_ASSERT(modes_.size() == n, "a schedule has one U placement per layer");
  layer_optimizers_.resize(n);
  param_optimizers_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& params = tensors_[i].params;
    if (params.empty()) continue;
    if (modes_[i] == LayerMode::Eager) {
      layer_optimizers_[i] = std::make_unique<LayerOptimizer>(optimizer, schedule.impl, params);
      continue;
    }
    for (std::size_t k = 0; k < params.size(); ++k) {
      param_optimizers_[i].push_back(
          std::make_unique<LayerOptimizer>(optimizer, schedule.impl, std::vector{params[k]}));
      if (modes_[i] != LayerMode::Backward) continue;
      auto acc = torch::autograd::impl::grad_accumulator(params[k]);
      acc->add_post_hook(std::make_unique<GradientFinal>(this, int(i), int(k)));
      accumulators_.push_back(std::move(acc));
    }
  }
  for (const auto& op : schedule.ops)
    if (op.layer >= 0) op_ids_.emplace(std::make_tuple(op.kind, op.layer, op.step), op.id);
  uses_.assign(n, 0);
  for (const auto& l : trace.layers)
    for (const auto& ref : l.inputs)
      if (ref.source == workload::InputRef::Source::Layer) ++uses_.at(std::size_t(ref.index));
  uses_left_.assign(n, 0);
  out_.resize(n);
}

GraphState::~GraphState() = default;

int GraphState::op_id(OpKind kind, int layer, int step) const {
  auto it = op_ids_.find({kind, layer, step});
  return it == op_ids_.end() ? -1 : it->second;
}

std::vector<at::Tensor> GraphState::parameters() const {
  std::vector<at::Tensor> all;
  for (const auto& t : tensors_)
    for (const auto& p : t.params) all.push_back(p.detach());
  return all;
}

std::int64_t GraphState::resident_bytes() const {
  StorageTally tally;
  tally.add(model_inputs_);
  for (const auto& t : tensors_) {
    tally.add(t.params);
    tally.add(t.buffers);
    for (const auto& p : t.params) tally.add(p.grad());
  }
  for (const auto& o : layer_optimizers_)
    if (o) tally.add(o->state_tensors());
  for (const auto& per_layer : param_optimizers_)
    for (const auto& o : per_layer) tally.add(o->state_tensors());
  tally.add(out_);
  return tally.bytes();
}

std::vector<InnerSpan> GraphState::take_inner_spans() {
  std::vector<InnerSpan> out;
  out.swap(spans_);
  return out;
}

void GraphState::execute(const schedule::Op& op) {
  const int i = op.layer;
  FUSIM_ASSERT(i >= 0 && i < int(trace_.layers.size()),
               fmt::format("op {} names layer {}, outside the trace", op.id, i));
  switch (op.kind) {
    case OpKind::Forward:
      forward(i);
      break;
    case OpKind::Loss:
      loss_and_backward(op);
      break;
    case OpKind::BackwardInput:
    case OpKind::BackwardWeight:
      break;  // ran inside L's backward
    case OpKind::Update:
      if (tensors_[i].params.empty() || modes_[i] == LayerMode::Backward) break;  // in a hook
      if (modes_[i] == LayerMode::Eager) {
        update_layer(i);
      } else {
        for (std::size_t k = 0; k < tensors_[i].params.size(); ++k) update_param(i, int(k));
      }
      break;
  }
}

void GraphState::forward(int i) {
  const auto& layer = trace_.layers[std::size_t(i)];
  std::vector<at::Tensor> inputs;
  for (const auto& ref : layer.inputs) {
    if (ref.source == workload::InputRef::Source::ModelInput) {
      inputs.push_back(model_inputs_.at(std::size_t(ref.index)));
      continue;
    }
    const auto& produced = out_.at(std::size_t(ref.index));
    FUSIM_ASSERT(produced.defined(),
                 fmt::format("F of layer {} before its producer {} ran", i, ref.index));
    inputs.push_back(produced);
  }
  out_[std::size_t(i)] = layer_forward(layer, inputs, tensors_[std::size_t(i)], gen_);
  uses_left_[std::size_t(i)] = uses_[std::size_t(i)];
  // Python drops an intermediate once nothing refers to it; autograd keeps what it saved.
  for (const auto& ref : layer.inputs)
    if (ref.source == workload::InputRef::Source::Layer &&
        --uses_left_.at(std::size_t(ref.index)) == 0)
      out_[std::size_t(ref.index)] = at::Tensor();
  const auto& fn = out_[std::size_t(i)].grad_fn();
  if (fn && hooked_.insert(fn.get()).second)
    fn->add_pre_hook(std::make_unique<BackwardBegins>(this, i));
}

void GraphState::loss_and_backward(const schedule::Op& op) {
  const Clock::time_point entry = Clock::now();
  forward(op.layer);
  at::Tensor loss = out_[std::size_t(op.layer)];
  marks_.clear();
  const Clock::time_point call = Clock::now();
  torch::autograd::backward({loss}, {at::ones_like(loss)});
  const Clock::time_point done = Clock::now();
  out_[std::size_t(op.layer)] = at::Tensor();
  hooked_.clear();  // this step's nodes are gone; their addresses may come back
  attribute(op, entry, call, done);
}

void GraphState::backward_begins(int layer) {
  marks_.push_back({Clock::now(), Mark::Backward, layer});
}

void GraphState::gradient_final(int layer, int k) {
  marks_.push_back({Clock::now(), Mark::UpdateBegin, layer});
  update_param(layer, k);
  marks_.push_back({Clock::now(), Mark::UpdateEnd, layer});
}

void GraphState::update_layer(int i) {
  auto& params = tensors_[std::size_t(i)].params;
  std::vector<at::Tensor> grads;
  for (auto& p : params) grads.push_back(p.grad().defined() ? p.grad() : at::zeros_like(p));
  layer_optimizers_[std::size_t(i)]->step(grads);
  for (auto& p : params) p.mutable_grad().reset();  // zero_grad(set_to_none=True)
}

void GraphState::update_param(int i, int k) {
  auto& p = tensors_[std::size_t(i)].params[std::size_t(k)];
  // Forward-fused, first step: nothing pending (the schedule has no U then).
  const at::Tensor g = p.grad().defined() ? p.grad() : at::zeros_like(p);
  param_optimizers_[std::size_t(i)][std::size_t(k)]->step({g});
  p.mutable_grad().reset();
}

// Splits [call, done) at the marks: time after a Backward mark is that layer's B, time
// between an update's marks its U; what precedes the first mark is the engine's set-up and
// goes to L with the loss forward [entry, call).
void GraphState::attribute(const schedule::Op& loss, Clock::time_point entry,
                           Clock::time_point call, Clock::time_point done) {
  const int step = loss.step;
  struct Piece {
    Clock::time_point first{};
    Clock::duration total{0};
    bool any = false;
  };
  std::map<int, Piece> pieces;  // by op id
  auto add = [&](int id, Clock::time_point a, Clock::time_point b) {
    if (id < 0) return;
    auto& p = pieces[id];
    if (!p.any) p.first = a;
    p.any = true;
    p.total += b - a;
  };
  auto b_op = [&](int layer) {
    const int bx = op_id(OpKind::BackwardInput, layer, step);
    return bx >= 0 ? bx : op_id(OpKind::BackwardWeight, layer, step);
  };
  add(loss.id, entry, call);
  int owner = loss.id, update = -1;
  Clock::time_point cursor = call;
  for (const auto& m : marks_) {
    switch (m.kind) {
      case Mark::Backward:
        add(update >= 0 ? update : owner, cursor, m.at);
        // The loss layer's own nodes (cross entropy's backward) are L's: it has no B op.
        owner = m.layer == loss.layer ? loss.id : b_op(m.layer);
        break;
      case Mark::UpdateBegin:
        add(owner, cursor, m.at);
        update = op_id(OpKind::Update, m.layer, step);
        break;
      case Mark::UpdateEnd:
        add(update, cursor, m.at);
        update = -1;
        break;
    }
    cursor = m.at;
  }
  add(owner, cursor, done);
  // Every B op and backward-fused U op of the step ran in there: those without a piece
  // (a Bw beside its Bx, a layer without a node of its own) get an empty span at the end.
  for (const auto& [key, id] : op_ids_) {
    const auto [kind, layer, s] = key;
    if (s != step) continue;
    const bool inside =
        kind == OpKind::BackwardInput || kind == OpKind::BackwardWeight || kind == OpKind::Loss ||
        (kind == OpKind::Update && modes_[std::size_t(layer)] == LayerMode::Backward);
    if (!inside) continue;
    auto it = pieces.find(id);
    if (it == pieces.end()) {
      // A Bw beside its Bx: at the end of the Bx's span, which holds both.
      auto bx = pieces.find(
          kind == OpKind::BackwardWeight ? op_id(OpKind::BackwardInput, layer, step) : -1);
      const Clock::time_point at = bx != pieces.end() ? bx->second.first + bx->second.total : done;
      spans_.push_back({id, at, at});
    } else {
      spans_.push_back({id, it->second.first, it->second.first + it->second.total});
    }
  }
  marks_.clear();
}

}  // namespace fusim::backend
