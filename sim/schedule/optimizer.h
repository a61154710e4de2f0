#pragma once
// The optimizer table: per optimizer, its per-element state tensors and the exact sequence
// of elementwise (and reduction) ops its update runs on ONE param tensor, as written in
// torch.optim's implementations (PyTorch 1.13, torch/optim/*.py: `_single_tensor_<name>`
// for loop, `_multi_tensor_<name>` for foreach), with torch defaults. The real backend
// runs this same sequence op for op (backend/layer_optimizer.cpp); a test counts the ATen
// calls it makes and compares them with this table (tests/backend/update_count_test.cpp).
// The simulator derives kernels, memory passes and threads of each implementation from it:
//   loop    (foreach=False): one kernel and one memory pass per op per tensor, plus the
//           0-dim ops on the step counter (`step_t += 1`, `step_t.item()`);
//   foreach (_multi_tensor_*): the multi-tensor body (it differs in places: Adam divides
//           in place, Adagrad makes two more passes); on a GPU one kernel per op for the
//           group, on a CPU one per op per tensor (ATen's CPU foreach kernels are a loop
//           over the tensors: foreach_tensor_*_slow in ForeachOpsKernels.cpp);
//   fused   (fused=True Adam, apex FusedLAMB): one pass per tensor per fused stage, one
//           kernel per stage for the group on a GPU, one per stage per tensor on a CPU
//           (fusim's own kernels, backend/fused_kernels.cpp); temporaries that stay inside
//           a stage live in registers and vanish.
// Modelled in steady state (step >= 2: momentum buffers exist, no first-step clone).
// The 0-dim step counters are kernels (dispatches) but not memory passes.
#include <string>
#include <string_view>
#include <vector>

#include "schedule/schedule.h"

namespace fusim::schedule {

// What an optimizer op touches, relative to one param tensor.
enum class Operand { Param, Grad, State0, State1, Temp0, Temp1, Temp2, Temp3 };
constexpr int kMaxTemporaries = 4;  // Temp0..Temp3

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
  // The multi-tensor (foreach) sequence where it differs from `ops`; empty: the same.
  std::vector<OptimizerOp> foreach_ops;
  // Ops on 0-dim tensors per param tensor (the step counter and what is computed from it):
  // a kernel each, no memory pass. Loop and foreach count them apart (torch 1.13's
  // foreach Adam reads the step twice, once per bias correction).
  std::vector<std::string_view> scalar_ops, foreach_scalar_ops;
  // Fused on a GPU: kernels besides the stages (torch's fused Adam bumps its step tensors
  // with one _foreach_add_ first).
  int fused_gpu_extra_kernels = 0;
};

// All optimizers: sgd, momentum, nesterov, adam, adamw, adagrad, rmsprop, lamb.
// An immutable table (no mutable state).
const std::vector<OptimizerSpec>& optimizer_table();
const OptimizerSpec* find_optimizer(std::string_view name);  // nullptr when unknown
std::string optimizer_names();                   // "sgd, momentum, ..." for help texts and errors
std::vector<std::string> optimizer_name_list();  // the same names, one by one

// The op sequence one implementation runs per tensor (loop and fused: `ops`; foreach:
// `foreach_ops` where given).
const std::vector<OptimizerOp>& optimizer_ops(const OptimizerSpec& spec, OptimizerImpl impl);

// One memory pass of an implementation over one param tensor.
struct OptimizerPass {
  std::vector<OptimizerOpAccess> accesses;  // merged per operand
  int flops_per_element = 0;
  bool reduction = false;
  int stage = 0;  // index of the op (loop/foreach) or fused stage it implements
};

// The passes one implementation makes over one param tensor, in program order.
std::vector<OptimizerPass> optimizer_passes(const OptimizerSpec& spec, OptimizerImpl impl);

// Param-sized temporaries one implementation allocates per param tensor (the Temp
// operands its passes touch).
int optimizer_temporaries(const OptimizerSpec& spec, OptimizerImpl impl);

// Kernels (ATen calls / launches) one U op over `tensors` param tensors costs on `device`.
int optimizer_kernels(const OptimizerSpec& spec, OptimizerImpl impl, int tensors,
                      DeviceKind device = DeviceKind::Cpu);

// Threads a CPU pass over `elements` elements of one tensor can use: ATen's elementwise
// and reduction kernels split a tensor into chunks of at least 32768 elements
// (at::internal::GRAIN_SIZE, ATen/Parallel.h; TensorIterator::for_each runs serially
// below it, at::parallel_for gives each thread one chunk: ATen/ParallelOpenMP.h);
// fusim's fused kernels use 4096 (backend/fused_kernels.cpp, kFusedGrain).
constexpr std::int64_t kAtenGrain = 32768;
constexpr std::int64_t kFusedGrain = 4096;
int optimizer_pass_threads(OptimizerImpl impl, std::int64_t elements);

// Per element of a param: FLOPs and bytes moved by one implementation.
struct OptimizerElementCost {
  int passes = 0;
  int flops = 0;
  int bytes_read = 0, bytes_written = 0;  // a ReadWrite access counts in both
};
OptimizerElementCost optimizer_element_cost(const OptimizerSpec& spec, OptimizerImpl impl,
                                            int element_bytes);

}  // namespace fusim::schedule
