#pragma once
// The optimizer table: per optimizer, its per-element state tensors and the exact sequence
// of elementwise (and reduction) ops its update runs on ONE param tensor, as written in
// torch.optim's single-tensor implementations (PyTorch 1.13, torch/optim/*.py,
// `_single_tensor_<name>`), with torch defaults. The real backend must run this same math;
// the simulator derives kernels and memory passes of each implementation from it:
//   loop    (foreach=False): one kernel and one memory pass per op per tensor;
//   foreach (_multi_tensor_*): the same passes, one kernel per op for the whole group;
//   fused   (fused=True Adam, apex FusedLAMB): one pass per tensor per fused stage, one
//           kernel per stage for the whole group; temporaries that stay inside a stage
//           live in registers and vanish.
// Modelled in steady state (step >= 2: momentum buffers exist, no first-step clone).
// The scalar `step` counters (0-dim tensors in torch 1.13) are not modelled as memory.
#include <string>
#include <string_view>
#include <vector>

#include "schedule/schedule.h"

namespace fusim::schedule {

// What an optimizer op touches, relative to one param tensor.
enum class Operand { Param, Grad, State0, State1, Temp0, Temp1, Temp2 };

struct OptimizerOpAccess {
  Operand operand = Operand::Param;
  AccessMode mode = AccessMode::Read;
};

// One torch call on one tensor, e.g. `exp_avg_sq.addcmul_(grad, grad, value=1-beta2)`.
struct OptimizerOp {
  std::string_view expr;
  std::vector<OptimizerOpAccess> accesses;
  int flops_per_element = 1;
  bool reduction = false;  // a norm: reads a tensor, produces a scalar
};

struct OptimizerSpec {
  std::string_view name;
  std::string_view torch;               // the configuration the table describes
  std::vector<std::string_view> state;  // per-element state, same shape/dtype as the param
  std::vector<OptimizerOp> ops;         // the single-tensor sequence, in program order
  // Fused implementation: consecutive groups of ops (by index into ops) that one kernel
  // runs in one pass over memory. {{0..n-1}} for one-pass fused optimizers.
  std::vector<std::vector<int>> fused_stages;
};

// All optimizers: sgd, momentum, nesterov, adam, adamw, adagrad, rmsprop, lamb.
// An immutable table (no mutable state).
const std::vector<OptimizerSpec>& optimizer_table();
const OptimizerSpec* find_optimizer(std::string_view name);  // nullptr when unknown
std::string optimizer_names();  // "sgd, momentum, ..." for help texts and errors

// One memory pass of an implementation over one param tensor.
struct OptimizerPass {
  std::vector<OptimizerOpAccess> accesses;  // merged per operand
  int flops_per_element = 0;
  bool reduction = false;
  int stage = 0;  // index of the op (loop/foreach) or fused stage it implements
};

// The passes one implementation makes over one param tensor, in program order.
std::vector<OptimizerPass> optimizer_passes(const OptimizerSpec& spec, OptimizerImpl impl);

// Kernels one U op of `tensors` param tensors costs.
int optimizer_kernels(const OptimizerSpec& spec, OptimizerImpl impl, int tensors);

// Per element of a param: FLOPs and bytes moved by one implementation.
struct OptimizerElementCost {
  int passes = 0;
  int flops = 0;
  int bytes_read = 0, bytes_written = 0;  // a ReadWrite access counts in both
};
OptimizerElementCost optimizer_element_cost(const OptimizerSpec& spec, OptimizerImpl impl,
                                            int element_bytes);

}  // namespace fusim::schedule
