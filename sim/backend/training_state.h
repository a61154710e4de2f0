#pragma once
// One model in training, executed op by op in a schedule's order: the layer-by-layer
// autograd with detached boundaries that lets U_i run right after B_i (backward-fused) or
// right before F_i of the next step (forward-fused).
//
//   F_i  inputs of layer i are detached copies of its producers' outputs behind a boundary
//        node, so the autograd graph of a step is cut into one graph per layer;
//   L    the loss layer's forward and the seed of backward (d loss / d logits);
//   Bx   the autograd engine from out_i's grad_fn with grad_out_i, capturing the gradients at
//        the input boundaries: summed into the producers' grad_out (a fan-out adds up);
//   Bw   the same, capturing at params_i: the weight gradients;
// Memory as PyTorch's autograd holds it (issue 20): a layer keeps only the graph edges of its
// output and input boundaries, not the tensors, so an activation lives exactly as long as
// some graph saved it (or a consumer's forward still needs it), and grads die at their U
// (set_to_none).
//   U_i  the optimizer update of layer i with the latest grads (LayerOptimizer).
// A layer whose schedule has no separate Bw op computes its weight gradients in Bx.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/edge.h>
#include <memory>
#include <vector>

#include "backend/layer_ops.h"
#include "backend/layer_optimizer.h"
#include "backend/step_state.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

class TrainingState final : public StepState {
 public:
  // Weights, inputs and dropout masks come from generators seeded with `seed`, so two
  // states with the same seed start and stay identical whatever the ordering.
  TrainingState(const workload::Trace& trace, const schedule::Schedule& schedule,
                const OptimizerConfig& optimizer, at::Device device, std::uint64_t seed);

  void execute(const schedule::Op& op) override;

  // What an op consumes of the step's state (activations, summed output gradients, the
  // backward parts left): saved before an op and restored before each repetition, so that
  // `fusim profile` can run one op several times in a row as the step runs it once
  // (backend/op_profiler.h). Handles only: every op replaces these tensors, none writes
  // them in place. The weights and optimizer state are not restored (an update repeated is
  // another update of the same cost).
  // The weight gradients are handles too: U drops them (set_to_none), so a repeated U needs
  // them back.
  struct OpInputs {
    std::vector<at::Tensor> out, grad_out;
    std::vector<torch::autograd::Edge> root;
    std::vector<std::vector<torch::autograd::Edge>> inputs;
    std::vector<int> parts_left, consumers_left;
    std::vector<std::vector<at::Tensor>> grads;
  };
  OpInputs step_state() const {
    return {out_, grad_out_, root_, inputs_, backward_parts_left_, consumers_left_, grads_};
  }
  void restore(const OpInputs& state);

  // The trained parameters of every layer (flattened, in trace order), for tests.
  std::vector<at::Tensor> parameters() const override;
  at::Device device() const { return device_; }
  std::int64_t resident_bytes() const override;

 private:
  void forward(int layer);
  void backward(int layer, bool inputs, bool weights);
  void finish_backward_part(int layer);

  const workload::Trace& trace_;
  at::Device device_;
  at::Generator gen_;
  std::vector<at::Tensor> model_inputs_;
  std::vector<LayerTensors> tensors_;                        // params and buffers per layer
  std::vector<std::vector<at::Tensor>> grads_;               // latest weight gradients per layer
  std::vector<std::unique_ptr<LayerOptimizer>> optimizers_;  // null for layers without params
  // Weight tying (issue 20): per layer, the indices of its own params (the ones its U
  // updates), and for each, the (user layer, param) pairs whose grads add into it.
  std::vector<std::vector<int>> own_params_;
  std::vector<std::vector<std::vector<std::pair<int, int>>>> tied_grads_;
  std::vector<bool> has_bw_op_;      // the schedule splits B_i into Bx and Bw
  std::vector<int> backward_parts_;  // B ops (Bx, Bw, L) per layer and step
  int sink_ = -1;                    // the loss layer

  // Per-step activations: the graph of layer i lives from F_i until its backward is done,
  // held by the edge of its output's grad_fn; the output tensor itself only until its
  // consumers' forwards ran (the loss's until its backward).
  std::vector<at::Tensor> out_;                             // output of F_i
  std::vector<torch::autograd::Edge> root_;                 // out_i's grad_fn
  std::vector<std::vector<torch::autograd::Edge>> inputs_;  // F_i's input boundaries
  std::vector<at::Tensor> grad_out_;  // d loss / d out_i, summed over consumers
  std::vector<int> backward_parts_left_;
  std::vector<int> consumers_;       // layers reading out_i, per step
  std::vector<int> consumers_left_;  // of those, the ones whose F has not run yet
  at::Tensor anchor_;  // an empty leaf that requires grad: the boundaries' autograd input
};

}  // namespace fusim::backend
