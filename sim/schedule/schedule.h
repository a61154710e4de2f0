#pragma once
// A schedule is one ordering of a training step's ops (forward, backward, optimizer
// update) over K steps, with its op DAG, its streams and every tensor's lifetime and
// address. Both executors (simulated and real) consume exactly this.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schedule/memory_options.h"
#include "workload/trace.h"

namespace fusim::schedule {

enum class Ordering { Eager, BackwardFused, ForwardFused, Mixed };
std::string_view to_string(Ordering ordering);  // "eager", "backward-fused", ...
std::optional<Ordering> parse_ordering(std::string_view name);

enum class OptimizerImpl { Loop, Foreach, Fused };
std::string_view to_string(OptimizerImpl impl);  // "loop", "foreach", "fused"
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view name);

// What executes the schedule: the kernels an optimizer implementation launches differ
// (a CPU foreach op is a loop of per-tensor kernels, a GPU one a multi-tensor launch).
enum class DeviceKind { Cpu, Gpu };

// How the real backend drives the step, and which host costs the model charges for it:
//   layers  one autograd graph per layer, cut at detached boundaries; every B op is its own
//           torch::autograd::grad call, every U op a call between them (backend/
//           training_state.h): the op list exactly as scheduled;
//   graph   one autograd graph per step, as a PyTorch user's loop: loss.backward() runs
//           every B op inside the autograd engine; backward-fused steps a per-parameter
//           optimizer in a hook on each parameter's gradient accumulator, forward-fused
//           steps it before the layer's forward (backend/graph_state.h).
enum class Execution { Layers, Graph };
std::string_view to_string(Execution execution);  // "layers", "graph"
std::optional<Execution> parse_execution(std::string_view name);

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
  int layer = -1;  // trace layer index, -1 for none
  std::int64_t bytes = 0;
  std::uint64_t address = 0;  // from the allocator model; reused after frees
  int alloc_op = -1;          // index in Schedule::ops of the first op that needs it (-1: before)
  int free_op = -1;           // index of the last op that uses it (-1: lives to the end)
  // Added: the training step a per-step tensor belongs to (activations, grads, temporaries,
  // inputs); -1 for tensors that persist across steps (weights, optimizer state).
  int step = -1;
  std::int64_t alloc_bytes = 0;  // added: bytes the allocator model hands out (512 B rounding)
  // Added (issue 20): for weights, grads and optimizer state, the index of their param in
  // the layer's params (-1 for buffers and every other tensor).
  int param = -1;
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
  // Added: the most threads (CPU cores) the pass can keep busy, from the kernel's grain
  // (optimizer_pass_threads); 0: as many as the op runs on.
  int max_threads = 0;
};

// Added: why an edge exists. Data: the op reads what the dependency writes (or overwrites
// what it reads: write-after-read on w_i / grad_i). Control: the ordering's own sequencing
// (e.g. eager's optimizer.step() runs after the whole backward).
enum class DepKind { Data, Control };

struct Op {
  int id = 0;  // == index in Schedule::ops (the issue order)
  OpKind kind = OpKind::Forward;
  int layer = -1;         // trace layer index (-1 for a whole-model op)
  int step = 0;           // training step this op belongs to (0-based)
  int stream = 0;         // 0: main stream; 1: side stream for updates on a GPU
  std::vector<int> deps;  // ops that must finish first (data and control edges)
  workload::OpKind layer_op = workload::OpKind::Relu;  // what the layer computes
  std::int64_t flops = 0;
  int kernels = 1;  // kernel launches / dispatches this op costs
  std::vector<MemoryPass> passes;
  std::vector<DepKind> dep_kinds;  // added: parallel to deps
};

struct MemoryPeak {
  std::int64_t total = 0;
  std::int64_t weights = 0, grads = 0, optimizer_state = 0, activations = 0, temporaries = 0,
               inputs = 0;  // each category's size at the moment of the total peak
  // Added. reserved: bytes of allocator segments (what nvidia-smi would show);
  // max_grads: the most param-grad bytes live at any moment;
  // grads_at_step_boundary: param-grad bytes live when step 1 starts (forward-fused keeps
  // every grad of step 0 alive until its update runs inside step 1's forward).
  std::int64_t reserved = 0, max_grads = 0, grads_at_step_boundary = 0;
};

// Per-layer placement of U_i, the building block of every ordering (and of `mixed`).
enum class LayerMode { Eager, Backward, Forward };
std::string_view to_string(LayerMode mode);  // "eager", "backward", "forward"
std::optional<LayerMode> parse_layer_mode(std::string_view name);

// A mixed ordering: {"layers": {"<layer name>": "eager|backward|forward", ...},
//                    "default": "eager"}   (see mixed.h for the strict reader)
struct MixedOrdering {
  std::map<std::string, LayerMode> layers;
  LayerMode fallback = LayerMode::Eager;
  std::string file;  // where it was read from ("" in memory), for messages
};

struct Schedule {
  Ordering ordering = Ordering::Eager;
  std::string optimizer;  // "adam", "sgd", ...
  OptimizerImpl impl = OptimizerImpl::Foreach;
  int steps = 1;
  std::vector<Op> ops;  // issue order (priority)
  std::vector<Tensor> tensors;
  MemoryPeak peak;
  // Added: the U placement used for each trace layer (size == trace.layers.size()).
  std::vector<LayerMode> layer_modes;
  bool gpu_streams = false;
  DeviceKind device = DeviceKind::Cpu;      // added
  Execution execution = Execution::Layers;  // added
  MemoryOptions memory;  // added (issue 20): precision, sharding, grad buffer, attention
};

struct ScheduleOptions {
  Ordering ordering = Ordering::Eager;
  std::string optimizer = "adam";  // a name of optimizer_table() (optimizer.h)
  OptimizerImpl impl = OptimizerImpl::Foreach;
  int steps = 0;           // 0: the ordering's default (1; 2 where some U_i is forward-fused)
  std::string mixed_file;  // Mixed: the per-layer JSON file ...
  std::optional<MixedOrdering> mixed;   // ... or the spec in memory (wins over the file)
  bool gpu_streams = false;             // U of backward-fused layers on stream 1 (overlaps B_{i-1})
  DeviceKind device = DeviceKind::Cpu;  // added: kernels per optimizer impl
  Execution execution = Execution::Layers;  // added: host costs of the backend's execution
  MemoryOptions memory;                     // mixed precision, sharding, grad buffer, attention
};

// Builds the op DAG, issue order, streams, tensors, passes, addresses and peak memory.
// Bad options (unknown optimizer, steps < 1, forward-fused with steps < 2, bad mixed
// file) throw InputError.
Schedule build_schedule(const workload::Trace& trace, const ScheduleOptions& options);

// Where each step begins, for both executors (the simulator's boundary snapshots, the
// backend's iterations): for s in [0, steps), the id of the first forward op of step s in
// issue order, or -1 when step s has none (a schedule without forward ops).
std::vector<int> step_openers(const Schedule& schedule);

// Proves a schedule correct against the trace, independently of the builder (check.cpp).
// Empty: valid. Otherwise one message per violation, naming the edge, e.g.
// "missing edge U#40 (U fc1, step 0) -> F#52 (F fc1, step 1): F reads fc1.weight while
//  its update from step 0 is pending".
std::vector<std::string> check_schedule(const workload::Trace& trace, const Schedule& schedule);

}  // namespace fusim::schedule
