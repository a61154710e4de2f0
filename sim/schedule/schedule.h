#pragma once
// A schedule is one ordering of a training step's ops (forward, backward, optimizer
// update) over K steps, with its op DAG, its streams and every tensor's lifetime and
// address. Both executors (simulated and real) consume exactly this.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workload/trace.h"

namespace fusim::schedule {

enum class Ordering { Eager, BackwardFused, ForwardFused, Mixed };
std::string_view to_string(Ordering ordering);  // "eager", "backward-fused", ...
std::optional<Ordering> parse_ordering(std::string_view name);

enum class OptimizerImpl { Loop, Foreach, Fused };
std::string_view to_string(OptimizerImpl impl);  // "loop", "foreach", "fused"
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view name);

// Op kinds as written in JSON: "F", "Bx" (input gradient), "Bw" (weight gradient),
// "U" (optimizer update), "L" (loss forward + its backward seed).
enum class OpKind { Forward, BackwardInput, BackwardWeight, Update, Loss };
std::string_view to_string(OpKind kind);

enum class TensorCategory { Weights, Grads, OptimizerState, Activations, Temporaries, Inputs };
std::string_view to_string(TensorCategory category);

struct Tensor {
  int id = 0;
  std::string name;  // "layer3.weight.grad", "layer3.out", "layer3.weight.exp_avg"
  TensorCategory category = TensorCategory::Activations;
  int layer = -1;    // trace layer index, -1 for none
  std::int64_t bytes = 0;
  std::uint64_t address = 0;  // from the allocator model; reused after frees
  int alloc_op = -1;  // index in Schedule::ops of the first op that needs it (-1: before)
  int free_op = -1;   // index of the last op that uses it (-1: lives to the end)
};

enum class AccessMode { Read, Write, ReadWrite };

struct TensorAccess {
  int tensor = 0;
  AccessMode mode = AccessMode::Read;
};

// One sweep of a kernel over memory: the tensors it streams through together.
struct MemoryPass {
  std::vector<TensorAccess> accesses;
  std::int64_t flops = 0;
};

struct Op {
  int id = 0;  // == index in Schedule::ops (the issue order)
  OpKind kind = OpKind::Forward;
  int layer = -1;  // trace layer index (-1 for a whole-model op)
  int step = 0;    // training step this op belongs to (0-based)
  int stream = 0;  // 0: main stream; 1: side stream for updates on a GPU
  std::vector<int> deps;  // ops that must finish first (data and control edges)
  workload::OpKind layer_op = workload::OpKind::Relu;  // what the layer computes
  std::int64_t flops = 0;
  int kernels = 1;  // kernel launches / dispatches this op costs
  std::vector<MemoryPass> passes;
};

struct MemoryPeak {
  std::int64_t total = 0;
  std::int64_t weights = 0, grads = 0, optimizer_state = 0, activations = 0, temporaries = 0,
               inputs = 0;  // each category's size at the moment of the total peak
};

struct Schedule {
  Ordering ordering = Ordering::Eager;
  std::string optimizer;  // "adam", "sgd", ...
  OptimizerImpl impl = OptimizerImpl::Foreach;
  int steps = 1;
  std::vector<Op> ops;  // issue order (priority)
  std::vector<Tensor> tensors;
  MemoryPeak peak;
};

}  // namespace fusim::schedule
