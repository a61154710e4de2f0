#pragma once
// What the executor drives: one model in training, executed op by op in a schedule's
// order, in one of the two executions (schedule::Execution):
//   layers  TrainingState (training_state.h): an autograd graph per layer, each op its own
//           call, so every op of the schedule is timed on its own;
//   graph   GraphState (graph_state.h): one autograd graph per step; the L op runs the
//           whole backward inside the autograd engine, where hooks time each layer's
//           backward and run backward-fused updates, as a PyTorch user's loop does.
#include <ATen/ATen.h>
#include <chrono>
#include <memory>
#include <unordered_set>
#include <vector>

#include "backend/optimizer_config.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

// An op that ran inside another one (graph: B and backward-fused U ops inside L's
// backward), with its span on the steady clock as hooks measured it.
struct InnerSpan {
  int op = 0;  // schedule op id
  std::chrono::steady_clock::time_point start, end;
};

class StepState {
 public:
  virtual ~StepState() = default;
  virtual void execute(const schedule::Op& op) = 0;
  // Bytes of the storage the state holds now (weights, buffers, inputs, gradients,
  // optimizer state, live activations), each storage once.
  virtual std::int64_t resident_bytes() const = 0;
  // The trained parameters of every layer (flattened, in trace order), for tests.
  virtual std::vector<at::Tensor> parameters() const = 0;
  // The spans of the ops that ran inside others since the last call (their own execute()
  // did nothing); the executor puts them in place of the timer's. Empty for layers.
  virtual std::vector<InnerSpan> take_inner_spans() { return {}; }
};

// Bytes of storage of a set of tensors, each storage once (views and detached aliases
// share theirs): what resident_bytes() adds up.
class StorageTally {
 public:
  void add(const at::Tensor& t);
  void add(const std::vector<at::Tensor>& ts);
  std::int64_t bytes() const { return bytes_; }

 private:
  std::unordered_set<const void*> seen_;
  std::int64_t bytes_ = 0;
};

// The state for `schedule.execution`. Weights, inputs and dropout masks come from
// generators seeded with `seed`, so that states with one seed start identical whatever
// the ordering or execution. Graph execution on a CUDA device throws InputError (its
// per-op spans would be host times of asynchronous kernels).
std::unique_ptr<StepState> make_step_state(const workload::Trace& trace,
                                           const schedule::Schedule& schedule,
                                           const OptimizerConfig& optimizer, at::Device device,
                                           std::uint64_t seed);

}  // namespace fusim::backend
