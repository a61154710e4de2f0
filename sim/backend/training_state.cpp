#include "backend/training_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/engine.h>

#include <map>

#include "core/error.h"

namespace fusim::backend {
namespace {
using schedule::OpKind;
using workload::InputRef;

bool is_floating(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type());
}

// A layer's input boundary: the identity on `data` (a detached producer output), recorded by
// autograd through `anchor` (an empty leaf that requires grad) so that nothing holds `data`
// but the ops that save it. A detached leaf that requires grad would be held by its
// AccumulateGrad node for as long as the consumer's graph lives. Backward passes nothing on:
// the engine captures the gradient arriving here (the consumer's Bx).
struct Boundary : public torch::autograd::Function<Boundary> {
  static at::Tensor forward(torch::autograd::AutogradContext*, const at::Tensor& anchor,
                            const at::Tensor& data) {
    (void)anchor;
    return data;  // an input returned as is: autograd makes it a view with this node's edge
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::variable_list) {
    return {at::Tensor(), at::Tensor()};
  }
};
}  // namespace

TrainingState::TrainingState(const workload::Trace& trace, const schedule::Schedule& schedule,
                             const OptimizerConfig& optimizer, at::Device device,
                             std::uint64_t seed)
    : trace_(trace), device_(device), gen_(at::make_generator<at::CPUGeneratorImpl>(seed)) {
  const auto n = trace.layers.size();
  const auto options = at::TensorOptions().device(device);
  for (std::size_t i = 0; i < n; ++i) {
    tensors_.push_back(make_layer_tensors(trace.layers[i], gen_, options));
    if (trace.layers[i].op == workload::OpKind::CrossEntropy) sink_ = int(i);
  }
  FUSIM_ASSERT(sink_ >= 0, "a validated trace has one cross_entropy layer");
  model_inputs_ = make_model_inputs(trace, gen_, options);
  grads_.resize(n);
  has_bw_op_.assign(n, false);
  backward_parts_.assign(n, 0);
  for (const auto& op : schedule.ops) {
    if (op.layer < 0 || op.step != 0) continue;
    if (op.kind == OpKind::BackwardWeight) has_bw_op_.at(op.layer) = true;
    if (op.kind == OpKind::BackwardWeight || op.kind == OpKind::BackwardInput ||
        op.kind == OpKind::Loss)
      ++backward_parts_.at(op.layer);
  }
  // Weight tying (issue 20): a tied param is the very tensor of its owner (so autograd reads
  // the same weights); the owner's optimizer updates it with every user's grad added in.
  std::map<std::string, std::pair<std::size_t, std::size_t>> owner;
  own_params_.resize(n);
  tied_grads_.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < trace.layers[i].params.size(); ++k)
      if (trace.layers[i].params[k].tied_to.empty()) {
        owner[trace.layers[i].params[k].name] = {i, k};
        own_params_[i].push_back(int(k));
      }
  for (std::size_t i = 0; i < n; ++i) tied_grads_[i].resize(own_params_[i].size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < trace.layers[i].params.size(); ++k) {
      const auto& tied = trace.layers[i].params[k].tied_to;
      if (tied.empty()) continue;
      auto [o, q] = owner.at(tied);
      tensors_[i].params[k] = tensors_[o].params[q];
      for (std::size_t slot = 0; slot < own_params_[o].size(); ++slot)
        if (own_params_[o][slot] == int(q)) tied_grads_[o][slot].push_back({int(i), int(k)});
    }
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<at::Tensor> own;
    for (int k : own_params_[i]) own.push_back(tensors_[i].params[std::size_t(k)]);
    optimizers_.emplace_back(
        own.empty() ? nullptr
                    : std::make_unique<LayerOptimizer>(optimizer, schedule.impl, std::move(own)));
  }
  out_.resize(n);
  root_.resize(n);
  inputs_.resize(n);
  consumers_.assign(n, 0);
  consumers_left_.assign(n, 0);
  for (const auto& layer : trace.layers)
    for (const auto& ref : layer.inputs)
      if (ref.source == InputRef::Source::Layer) ++consumers_[ref.index];
  anchor_ = at::empty({0}, options.dtype(at::kFloat)).requires_grad_(true);
  grad_out_.resize(n);
  backward_parts_left_.assign(n, 0);
}

std::vector<at::Tensor> TrainingState::parameters() const {
  std::vector<at::Tensor> all;
  for (const auto& t : tensors_)
    for (const auto& p : t.params) all.push_back(p.detach());
  return all;
}

std::int64_t TrainingState::resident_bytes() const {
  StorageTally tally;
  tally.add(model_inputs_);
  for (const auto& t : tensors_) {
    tally.add(t.params);
    tally.add(t.buffers);
  }
  for (const auto& g : grads_) tally.add(g);
  for (const auto& o : optimizers_)
    if (o) tally.add(o->state_tensors());
  tally.add(out_);
  tally.add(grad_out_);
  return tally.bytes();
}

void TrainingState::execute(const schedule::Op& op) {
  const int i = op.layer;
  FUSIM_ASSERT(i >= 0 && i < int(trace_.layers.size()),
               fmt::format("op {} names layer {}, outside the trace", op.id, i));
  switch (op.kind) {
    case OpKind::Forward:
      forward(i);
      break;
    case OpKind::Loss:
      // The loss forward and its backward seed: d loss / d logits into the producer.
      forward(i);
      backward(i, true, true);
      break;
    case OpKind::BackwardInput:
      backward(i, true, !has_bw_op_[i]);
      break;
    case OpKind::BackwardWeight:
      backward(i, false, true);
      break;
    case OpKind::Update:
      if (optimizers_[i]) {
        FUSIM_ASSERT(grads_[i].size() == tensors_[i].params.size(),
                     fmt::format("U of layer {} before its weight gradients exist", i));
        std::vector<at::Tensor> grads;
        for (std::size_t slot = 0; slot < own_params_[i].size(); ++slot) {
          at::Tensor g = grads_[i][std::size_t(own_params_[i][slot])];
          for (auto [user, k] : tied_grads_[i][slot]) g.add_(grads_[user].at(std::size_t(k)));
          grads.push_back(g);
        }
        optimizers_[i]->step(grads);
        // set_to_none (PyTorch 2.x zero_grad's default; the optimizer-in-backward tutorial's
        // p.grad = None after the step): the grads die at their update, as the schedule's
        // memory model has it (schedule/allocator.h), so that backward-fused's saving is
        // measured (issue 20). The tied users' slots were consumed too.
        for (std::size_t slot = 0; slot < own_params_[i].size(); ++slot) {
          grads_[i][std::size_t(own_params_[i][slot])] = at::Tensor();
          for (auto [user, k] : tied_grads_[i][slot])
            grads_[user].at(std::size_t(k)) = at::Tensor();
        }
      }
      break;
  }
}

void TrainingState::restore(const OpInputs& state) {
  out_ = state.out;
  grad_out_ = state.grad_out;
  root_ = state.root;
  inputs_ = state.inputs;
  backward_parts_left_ = state.parts_left;
  consumers_left_ = state.consumers_left;
  grads_ = state.grads;
}

void TrainingState::forward(int i) {
  const auto& layer = trace_.layers[i];
  std::vector<at::Tensor> inputs;
  inputs_[i].clear();
  for (const auto& ref : layer.inputs) {
    if (ref.source == InputRef::Source::ModelInput) {
      inputs.push_back(model_inputs_.at(ref.index));
      inputs_[i].emplace_back();
      continue;
    }
    const auto& produced = out_.at(ref.index);
    FUSIM_ASSERT(produced.defined(), fmt::format("F of layer {} before its producer {} ran or "
                                                 "after the producer's backward",
                                                 i, ref.index));
    // The boundary, so B_i's graph ends here and B of the producer is a separate op; only
    // where the schedule runs the producer's backward (no B: no gradient wanted).
    at::Tensor x = produced.detach();
    if (is_floating(x) && backward_parts_[ref.index] > 0) x = Boundary::apply(anchor_, x);
    inputs_[i].push_back(x.requires_grad() ? torch::autograd::impl::gradient_edge(x)
                                           : torch::autograd::Edge());
    inputs.push_back(x);
  }
  out_[i] = layer_forward(layer, inputs, tensors_[i], gen_);
  root_[i] = out_[i].requires_grad() ? torch::autograd::impl::gradient_edge(out_[i])
                                     : torch::autograd::Edge();
  grad_out_[i] = at::Tensor();
  backward_parts_left_[i] = backward_parts_[i];
  consumers_left_[i] = consumers_[i];
  // A producer whose consumers have all run forward is held only by what saved it.
  inputs.clear();
  for (const auto& ref : layer.inputs)
    if (ref.source == InputRef::Source::Layer && --consumers_left_[ref.index] == 0)
      out_[ref.index] = at::Tensor();
}

void TrainingState::backward(int i, bool inputs, bool weights) {
  FUSIM_ASSERT(root_[i].is_valid(), fmt::format("B of layer {} before its F", i));
  at::Tensor seed = grad_out_[i];
  if (!seed.defined()) {
    // Only the loss has no consumer: backward starts from d loss / d loss = 1.
    FUSIM_ASSERT(i == sink_ && out_[i].defined(),
                 fmt::format("B of layer {} before all of its consumers' B", i));
    seed = at::ones_like(out_[i]);
  }
  torch::autograd::edge_list wrt;
  std::vector<int> producers;
  if (inputs) {
    const auto& refs = trace_.layers[i].inputs;
    for (std::size_t k = 0; k < refs.size(); ++k) {
      if (!inputs_[i][k].is_valid()) continue;
      wrt.push_back(inputs_[i][k]);
      producers.push_back(refs[k].index);
    }
  }
  const std::size_t n_inputs = wrt.size();
  if (weights)
    for (const auto& p : tensors_[i].params) wrt.push_back(torch::autograd::impl::gradient_edge(p));
  if (!wrt.empty()) {
    // What torch::autograd::grad runs, from the graph edges: keep_graph, since the other half
    // (Bx or Bw) may still need it; the graph is released when the edges are dropped below.
    auto grads = torch::autograd::Engine::get_default_engine().execute(
        {root_[i]}, {seed}, /*keep_graph=*/true, /*create_graph=*/false,
        /*accumulate_grad=*/false, wrt);
    for (std::size_t k = 0; k < n_inputs; ++k) {
      if (!grads[k].defined()) continue;
      auto& acc = grad_out_[producers[k]];
      acc = acc.defined() ? acc + grads[k] : grads[k];
    }
    if (weights) {
      grads_[i].assign(grads.begin() + std::ptrdiff_t(n_inputs), grads.end());
      for (std::size_t k = 0; k < grads_[i].size(); ++k)
        if (!grads_[i][k].defined()) grads_[i][k] = at::zeros_like(tensors_[i].params[k]);
    }
  }
  finish_backward_part(i);
}

void TrainingState::finish_backward_part(int i) {
  if (--backward_parts_left_[i] > 0) return;
  out_[i] = at::Tensor();
  root_[i] = torch::autograd::Edge();
  inputs_[i].clear();
  grad_out_[i] = at::Tensor();
}

}  // namespace fusim::backend
