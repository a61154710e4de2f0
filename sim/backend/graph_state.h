#pragma once
// The graph execution of a schedule: one autograd graph per step, as a PyTorch user's
// training loop builds it, instead of the layer-by-layer graphs of TrainingState.
//
//   F_i  the layer's forward on its producers' outputs themselves (no detach): one graph;
//        an output is dropped once its last consumer ran (what autograd saved stays);
//   L    the loss forward, then loss.backward() (torch::autograd::backward): the autograd
//        engine runs every B op of the step in its own order (one node computes a layer's
//        input and weight gradients together), accumulating into each param's .grad;
//   U_i  eager: after backward, one optimizer per layer over the layer's .grad, then
//        grads set to None (zero_grad(set_to_none=True)); backward-fused: one optimizer
//        per parameter, stepped by a post hook on the parameter's gradient accumulator
//        (torch::autograd AccumulateGrad: what Tensor.register_post_accumulate_grad_hook
//        and the tutorial "optimizer step in backward" use) right after its gradient is
//        final, which then sets it to None; forward-fused: the per-parameter optimizers of
//        layer i step on the previous step's gradients right before F_i (what a forward
//        pre-hook does; the last updates are the schedule's flush).
// Timing inside backward: a pre-hook on each layer's output node marks where its backward
// begins, the accumulator hooks mark each update; the time between marks goes to the
// layer whose backward is open (InnerSpan: start of its first piece, length the sum of its
// pieces). A layer's span is reported on its Bx op (on Bw where it has no Bx); the other
// gets an empty span at its end. The engine's set-up before the first node is L's.
#include <ATen/ATen.h>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "backend/layer_ops.h"
#include "backend/layer_optimizer.h"
#include "backend/step_state.h"

namespace torch::autograd {
struct Node;
}

namespace fusim::backend {

class GraphState final : public StepState {
 public:
  GraphState(const workload::Trace& trace, const schedule::Schedule& schedule,
             const OptimizerConfig& optimizer, at::Device device, std::uint64_t seed);
  ~GraphState() override;

  void execute(const schedule::Op& op) override;
  std::int64_t resident_bytes() const override;
  std::vector<at::Tensor> parameters() const override;
  std::vector<InnerSpan> take_inner_spans() override;

  // Called by the autograd hooks (graph_state.cpp).
  void backward_begins(int layer);
  void gradient_final(int layer, int param);

 private:
  using Clock = std::chrono::steady_clock;
  struct Mark {
    Clock::time_point at;
    enum Kind { Backward, UpdateBegin, UpdateEnd } kind;
    int layer;
  };

  void forward(int layer);
  void loss_and_backward(const schedule::Op& op);
  void update_layer(int layer);         // eager: the layer's optimizer over its grads
  void update_param(int layer, int k);  // fused: one parameter's optimizer
  void attribute(const schedule::Op& loss, Clock::time_point entry, Clock::time_point call,
                 Clock::time_point done);
  int op_id(schedule::OpKind kind, int layer, int step) const;  // -1: none

  const workload::Trace& trace_;
  at::Device device_;
  at::Generator gen_;
  std::vector<at::Tensor> model_inputs_;
  std::vector<LayerTensors> tensors_;
  std::vector<schedule::LayerMode> modes_;
  std::vector<std::unique_ptr<LayerOptimizer>> layer_optimizers_;               // eager layers
  std::vector<std::vector<std::unique_ptr<LayerOptimizer>>> param_optimizers_;  // fused
  // The gradient accumulators of backward-fused params, held so that their hooks live.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::map<std::tuple<schedule::OpKind, int, int>, int> op_ids_;
  std::vector<int> uses_, uses_left_;  // consumers of each layer's output per step
  int sink_ = -1;

  std::vector<at::Tensor> out_;                              // this step's outputs (with the graph)
  std::unordered_set<const torch::autograd::Node*> hooked_;  // output nodes of this step
  std::vector<Mark> marks_;
  std::vector<InnerSpan> spans_;
};

}  // namespace fusim::backend
