// The optimizer table. Each sequence is the per-tensor body of torch.optim's
// `_single_tensor_<name>` in PyTorch 1.13 (torch/optim/<name>.py, line numbers of the
// Debian python3-torch 1.13.1 sources) with default hyper-parameters, written op by op,
// and, where it differs, the body of `_multi_tensor_<name>`; FLOPs count each multiply,
// add, divide and sqrt of the element as 1 (addcmul/addcdiv with a scale: 3).
// docs/optimizer_update.md lists the passes, temporaries, kernels and threads per impl.
#include "schedule/optimizer.h"

#include <fmt/format.h>
#include <algorithm>

namespace fusim::schedule {
namespace {
constexpr auto R = AccessMode::Read;
constexpr auto W = AccessMode::Write;
constexpr auto RW = AccessMode::ReadWrite;
constexpr auto P = Operand::Param;
constexpr auto G = Operand::Grad;
constexpr auto S0 = Operand::State0;
constexpr auto S1 = Operand::State1;
constexpr auto T0 = Operand::Temp0;
constexpr auto T1 = Operand::Temp1;
constexpr auto T2 = Operand::Temp2;
constexpr auto T3 = Operand::Temp3;

std::vector<int> range(int first, int last) {
  std::vector<int> v;
  for (int i = first; i <= last; ++i) v.push_back(i);
  return v;
}

// Adam's body after weight decay (adam.py, _single_tensor_adam, amsgrad=False):
//   exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)
//   bias_correction1 = 1 - beta1 ** step; bias_correction2 = 1 - beta2 ** step  (scalars)
//   denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
//   param.addcdiv_(exp_avg, denom, value=-lr / bias_correction1)
// (PyTorch 2.x writes the first line as exp_avg.lerp_(grad, 1 - beta1): one pass, not two.)
// Before it, per tensor: `step_t += 1` (adam.py:351) and `step = step_t.item()` (:395) on
// the 0-dim float step tensor: two kernels, no pass.
std::vector<OptimizerOp> adam_body() {
  return {
      {"exp_avg.mul_(beta1)", {{S0, RW}}, 1},
      {"exp_avg.add_(grad, alpha=1-beta1)", {{G, R}, {S0, RW}}, 2},
      {"exp_avg_sq.mul_(beta2)", {{S1, RW}}, 1},
      {"exp_avg_sq.addcmul_(grad, grad, value=1-beta2)", {{G, R}, {S1, RW}}, 3},
      {"t0 = exp_avg_sq.sqrt()", {{S1, R}, {T0, W}}, 1},
      {"denom = t0 / sqrt(bias_correction2)", {{T0, R}, {T1, W}}, 1},
      {"denom.add_(eps)", {{T1, RW}}, 1},
      {"param.addcdiv_(exp_avg, denom, value=-lr/bias_correction1)",
       {{S0, R}, {T1, R}, {P, RW}},
       3},
  };
}
// _multi_tensor_adam (adam.py:453-523, capturable=False): the same ops over the tensor
// list, except that the division by sqrt(bias_correction2) is in place and the eps
// addition makes the new tensor:
//   exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs)           (t0)
//   torch._foreach_div_(exp_avg_sq_sqrt, bias_correction2_sqrt)  (t0 in place)
//   denom = torch._foreach_add(exp_avg_sq_sqrt, eps)              (t1)
//   torch._foreach_addcdiv_(params_, exp_avgs, denom, step_size)
// Steps: `torch._foreach_add_(state_steps, 1)` (:453), then `step.item()` twice per
// tensor, once in each bias-correction list (:503-504).
std::vector<OptimizerOp> adam_foreach_body() {
  return {
      {"_foreach_mul_(exp_avgs, beta1)", {{S0, RW}}, 1},
      {"_foreach_add_(exp_avgs, grads, alpha=1-beta1)", {{G, R}, {S0, RW}}, 2},
      {"_foreach_mul_(exp_avg_sqs, beta2)", {{S1, RW}}, 1},
      {"_foreach_addcmul_(exp_avg_sqs, grads, grads, 1-beta2)", {{G, R}, {S1, RW}}, 3},
      {"t0 = _foreach_sqrt(exp_avg_sqs)", {{S1, R}, {T0, W}}, 1},
      {"_foreach_div_(t0, bias_correction2_sqrt)", {{T0, RW}}, 1},
      {"denom = _foreach_add(t0, eps)", {{T0, R}, {T1, W}}, 1},
      {"_foreach_addcdiv_(params, exp_avgs, denom, step_size)", {{S0, R}, {T1, R}, {P, RW}}, 3},
  };
}
const std::vector<std::string_view> kStepScalarOps{"step_t += 1", "step_t.item()"};
const std::vector<std::string_view> kAdamForeachScalarOps{"_foreach_add_(state_steps, 1)",
                                                          "bias_correction1: step.item()",
                                                          "bias_correction2: step.item()"};

std::vector<OptimizerSpec> make_table() {
  std::vector<OptimizerSpec> t;
  // sgd.py, _single_tensor_sgd with momentum=0, weight_decay=0:
  //   param.add_(d_p, alpha=-lr)
  t.push_back({"sgd",
               "torch.optim.SGD(lr, momentum=0)",
               {},
               {{"param.add_(grad, alpha=-lr)", {{G, R}, {P, RW}}, 2}},
               {{0}}});
  // _single_tensor_sgd with momentum=0.9, dampening=0 (buffer exists after step 1):
  //   buf.mul_(momentum).add_(d_p, alpha=1 - dampening); d_p = buf; param.add_(d_p, alpha=-lr)
  t.push_back({"momentum",
               "torch.optim.SGD(lr, momentum=0.9)",
               {"momentum_buffer"},
               {{"buf.mul_(momentum)", {{S0, RW}}, 1},
                {"buf.add_(grad, alpha=1-dampening)", {{G, R}, {S0, RW}}, 2},
                {"param.add_(buf, alpha=-lr)", {{S0, R}, {P, RW}}, 2}},
               {range(0, 2)}});
  // Same with nesterov=True: d_p = d_p.add(buf, alpha=momentum) (sgd.py:241, a new
  // tensor). _multi_tensor_sgd adds in place into the gradients instead (sgd.py:298:
  // torch._foreach_add_(grads, bufs, alpha=momentum)): no temporary, the grad is written.
  {
    OptimizerSpec s{"nesterov",
                    "torch.optim.SGD(lr, momentum=0.9, nesterov=True)",
                    {"momentum_buffer"},
                    {{"buf.mul_(momentum)", {{S0, RW}}, 1},
                     {"buf.add_(grad, alpha=1-dampening)", {{G, R}, {S0, RW}}, 2},
                     {"d_p = grad.add(buf, alpha=momentum)", {{G, R}, {S0, R}, {T0, W}}, 2},
                     {"param.add_(d_p, alpha=-lr)", {{T0, R}, {P, RW}}, 2}},
                    {range(0, 3)}};
    s.foreach_ops = {{"_foreach_mul_(bufs, momentum)", {{S0, RW}}, 1},
                     {"_foreach_add_(bufs, grads, alpha=1-dampening)", {{G, R}, {S0, RW}}, 2},
                     {"_foreach_add_(grads, bufs, alpha=momentum)", {{S0, R}, {G, RW}}, 2},
                     {"_foreach_add_(params, grads, alpha=-lr)", {{G, R}, {P, RW}}, 2}};
    t.push_back(s);
  }
  // adam.py, weight_decay=0 (default): no grad.add(param) pass. fused=True
  // (_fused_adam, aten/src/ATen/native/cuda/fused_adam_impl.cu) does the whole body in one
  // pass: reads grad, param, exp_avg, exp_avg_sq; writes the last three.
  {
    OptimizerSpec s{"adam",
                    "torch.optim.Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8)",
                    {"exp_avg", "exp_avg_sq"},
                    adam_body(),
                    {range(0, 7)}};
    s.foreach_ops = adam_foreach_body();
    s.scalar_ops = kStepScalarOps;
    s.foreach_scalar_ops = kAdamForeachScalarOps;
    s.fused_gpu_extra_kernels = 1;  // torch._foreach_add_(state_steps, 1) before _fused_adam_
    t.push_back(s);
  }
  // adamw.py, _single_tensor_adamw, weight_decay=1e-2 (default): step_t += 1 (:267),
  //   param.mul_(1 - lr * weight_decay), then Adam's body (step_t.item(): :301);
  // _multi_tensor_adamw: torch._foreach_mul_(params, 1 - lr * weight_decay), then
  //   _multi_tensor_adam's body, steps alike (:352, :402-403).
  {
    OptimizerSpec s{"adamw",
                    "torch.optim.AdamW(lr=1e-3, weight_decay=1e-2)",
                    {"exp_avg", "exp_avg_sq"},
                    {{"param.mul_(1-lr*weight_decay)", {{P, RW}}, 1}},
                    {range(0, 8)}};
    for (auto& op : adam_body()) s.ops.push_back(op);
    s.foreach_ops = {{"_foreach_mul_(params, 1-lr*weight_decay)", {{P, RW}}, 1}};
    for (auto& op : adam_foreach_body()) s.foreach_ops.push_back(op);
    s.scalar_ops = kStepScalarOps;
    s.foreach_scalar_ops = kAdamForeachScalarOps;
    t.push_back(s);
  }
  // adagrad.py, _single_tensor_adagrad, lr_decay=0, weight_decay=0, eps=1e-10:
  //   step_t += 1; step = step_t.item()  (:246-247)
  //   state_sum.addcmul_(grad, grad, value=1); std = state_sum.sqrt().add_(eps)
  //   param.addcdiv_(grad, std, value=-clr)
  // _multi_tensor_adagrad (:324-342) takes two more passes and four temporaries:
  //   torch._foreach_add_(state_steps, 1)
  //   minus_clr = [-lr / (1 + (step - 1) * lr_decay) for step in state_steps]  (0-dim
  //     tensors: sub, mul, add, reciprocal, mul per tensor)
  //   torch._foreach_addcmul_(state_sums, grads, grads, value=1)
  //   std = torch._foreach_add(torch._foreach_sqrt(state_sums), eps)
  //   toAdd = torch._foreach_div(torch._foreach_mul(grads, minus_clr), std)
  //   torch._foreach_add_(params, toAdd)
  {
    OptimizerSpec s{"adagrad",
                    "torch.optim.Adagrad(lr=1e-2)",
                    {"sum"},
                    {{"state_sum.addcmul_(grad, grad, value=1)", {{G, R}, {S0, RW}}, 3},
                     {"std = state_sum.sqrt()", {{S0, R}, {T0, W}}, 1},
                     {"std.add_(eps)", {{T0, RW}}, 1},
                     {"param.addcdiv_(grad, std, value=-clr)", {{G, R}, {T0, R}, {P, RW}}, 3}},
                    {range(0, 3)}};
    s.foreach_ops = {
        {"_foreach_addcmul_(state_sums, grads, grads, value=1)", {{G, R}, {S0, RW}}, 3},
        {"t0 = _foreach_sqrt(state_sums)", {{S0, R}, {T0, W}}, 1},
        {"std = _foreach_add(t0, eps)", {{T0, R}, {T1, W}}, 1},
        {"t2 = _foreach_mul(grads, minus_clr)", {{G, R}, {T2, W}}, 1},
        {"toAdd = _foreach_div(t2, std)", {{T2, R}, {T1, R}, {T3, W}}, 1},
        {"_foreach_add_(params, toAdd)", {{T3, R}, {P, RW}}, 1}};
    s.scalar_ops = kStepScalarOps;
    s.foreach_scalar_ops = {"_foreach_add_(state_steps, 1)", "step - 1", "* lr_decay", "1 + ",
                            "reciprocal (-lr / x)",          "* -lr"};
    t.push_back(s);
  }
  // rmsprop.py, _single_tensor_rmsprop, alpha=0.99, momentum=0, centered=False (its step
  // is a Python int, rmsprop.py:131-147: no kernel; _multi_tensor_rmsprop runs the same
  // ops, :304-324):
  //   square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
  //   avg = square_avg.sqrt().add_(eps); param.addcdiv_(grad, avg, value=-lr)
  t.push_back({"rmsprop",
               "torch.optim.RMSprop(lr=1e-2, alpha=0.99)",
               {"square_avg"},
               {{"square_avg.mul_(alpha)", {{S0, RW}}, 1},
                {"square_avg.addcmul_(grad, grad, value=1-alpha)", {{G, R}, {S0, RW}}, 3},
                {"avg = square_avg.sqrt()", {{S0, R}, {T0, W}}, 1},
                {"avg.add_(eps)", {{T0, RW}}, 1},
                {"param.addcdiv_(grad, avg, value=-lr)", {{G, R}, {T0, R}, {P, RW}}, 3}},
               {range(0, 4)}});
  // LAMB (You et al., ICLR 2020, Algorithm 2), not in torch.optim: the single-tensor form
  // of timm (timm/optim/lamb.py, weight_decay=0.01, no grad clipping):
  //   exp_avg.mul_(beta1).add_(grad, alpha=1-beta1)
  //   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1-beta2)
  //   denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
  //   update = (exp_avg / bias_correction1).div_(denom); update.add_(p, alpha=wd)
  //   trust_ratio = ||p|| / ||update||  (two per-tensor L2-norm reductions)
  //   update.mul_(trust_ratio); p.add_(update, alpha=-lr)
  // Fused as apex FusedLAMB (csrc/multi_tensor_lamb.cu): LAMBStage1 (moments + update),
  // multi_tensor_l2norm of the params and of the updates, LAMBStage2 (p -= lr*ratio*u):
  // the update is materialised between the stages. timm's step is a Python int per group;
  // the trust ratio is 0-dim arithmetic per tensor: w_norm / u_norm, w_norm > 0,
  // u_norm > 0, a tensor of one, two torch.where (scalar kernels, no pass; the fused
  // implementation computes it on the host).
  const std::vector<std::string_view> trust_ratio{"w_norm / u_norm", "w_norm > 0", "u_norm > 0",
                                                  "ones_like",       "where",      "where"};
  t.push_back({"lamb",
               "LAMB(lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01)",
               {"exp_avg", "exp_avg_sq"},
               {{"exp_avg.mul_(beta1)", {{S0, RW}}, 1},
                {"exp_avg.add_(grad, alpha=1-beta1)", {{G, R}, {S0, RW}}, 2},
                {"exp_avg_sq.mul_(beta2)", {{S1, RW}}, 1},
                {"exp_avg_sq.addcmul_(grad, grad, value=1-beta2)", {{G, R}, {S1, RW}}, 3},
                {"t0 = exp_avg_sq.sqrt()", {{S1, R}, {T0, W}}, 1},
                {"denom = t0 / sqrt(bias_correction2)", {{T0, R}, {T1, W}}, 1},
                {"denom.add_(eps)", {{T1, RW}}, 1},
                {"update = exp_avg / bias_correction1", {{S0, R}, {T2, W}}, 1},
                {"update.div_(denom)", {{T1, R}, {T2, RW}}, 1},
                {"update.add_(param, alpha=weight_decay)", {{P, R}, {T2, RW}}, 2},
                {"w_norm = param.norm(2)", {{P, R}}, 2, true},
                {"u_norm = update.norm(2)", {{T2, R}}, 2, true},
                {"update.mul_(w_norm / u_norm)", {{T2, RW}}, 1},
                {"param.add_(update, alpha=-lr)", {{T2, R}, {P, RW}}, 2}},
               {range(0, 9), {10}, {11}, {12, 13}},
               {},
               trust_ratio,
               trust_ratio});
  return t;
}

bool is_temp(Operand o) {
  return o >= Operand::Temp0 && o <= Operand::Temp3;
}

// Merges the accesses of consecutive ops into one pass: an operand whose first access
// writes it is a Write, one that is also written later a ReadWrite, else a Read.
void merge_access(std::vector<OptimizerOpAccess>& merged, OptimizerOpAccess a) {
  for (auto& m : merged) {
    if (m.operand != a.operand) continue;
    if (m.mode == AccessMode::Read && a.mode != AccessMode::Read) m.mode = AccessMode::ReadWrite;
    return;
  }
  merged.push_back(a);
}
}  // namespace

const std::vector<OptimizerSpec>& optimizer_table() {
  static const std::vector<OptimizerSpec> table = make_table();  // immutable after init
  return table;
}

const OptimizerSpec* find_optimizer(std::string_view name) {
  for (const auto& spec : optimizer_table())
    if (spec.name == name) return &spec;
  return nullptr;
}

std::vector<std::string> optimizer_name_list() {
  std::vector<std::string> names;
  for (const auto& spec : optimizer_table()) names.emplace_back(spec.name);
  return names;
}

std::string optimizer_names() {
  std::string names;
  for (const auto& spec : optimizer_table())
    names += (names.empty() ? "" : ", ") + std::string(spec.name);
  return names;
}

const std::vector<OptimizerOp>& optimizer_ops(const OptimizerSpec& spec, OptimizerImpl impl) {
  return impl == OptimizerImpl::Foreach && !spec.foreach_ops.empty() ? spec.foreach_ops : spec.ops;
}

std::vector<OptimizerPass> optimizer_passes(const OptimizerSpec& spec, OptimizerImpl impl) {
  std::vector<OptimizerPass> passes;
  if (impl != OptimizerImpl::Fused) {
    const auto& ops = optimizer_ops(spec, impl);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      OptimizerPass pass{{}, ops[i].flops_per_element, ops[i].reduction, int(i)};
      for (auto a : ops[i].accesses) merge_access(pass.accesses, a);
      passes.push_back(pass);
    }
    return passes;
  }
  // A temporary survives fusion only if another stage needs it.
  auto stage_of = [&](int op) {
    for (std::size_t s = 0; s < spec.fused_stages.size(); ++s)
      for (int o : spec.fused_stages[s])
        if (o == op) return int(s);
    return -1;
  };
  auto crosses_stages = [&](Operand operand) {
    int first = -1;
    for (std::size_t i = 0; i < spec.ops.size(); ++i)
      for (auto a : spec.ops[i].accesses)
        if (a.operand == operand) {
          if (first < 0)
            first = stage_of(int(i));
          else if (stage_of(int(i)) != first)
            return true;
        }
    return false;
  };
  for (std::size_t s = 0; s < spec.fused_stages.size(); ++s) {
    OptimizerPass pass{{}, 0, false, int(s)};
    for (int o : spec.fused_stages[s]) {
      const auto& op = spec.ops[std::size_t(o)];
      pass.flops_per_element += op.flops_per_element;
      pass.reduction = pass.reduction || op.reduction;
      for (auto a : op.accesses)
        if (!is_temp(a.operand) || crosses_stages(a.operand)) merge_access(pass.accesses, a);
    }
    passes.push_back(pass);
  }
  return passes;
}

int optimizer_temporaries(const OptimizerSpec& spec, OptimizerImpl impl) {
  bool used[kMaxTemporaries] = {};
  for (const auto& pass : optimizer_passes(spec, impl))
    for (auto a : pass.accesses)
      if (is_temp(a.operand)) used[int(a.operand) - int(Operand::Temp0)] = true;
  int n = 0;
  for (bool u : used) n += u ? 1 : 0;
  return n;
}

int optimizer_kernels(const OptimizerSpec& spec, OptimizerImpl impl, int tensors,
                      DeviceKind device) {
  const bool gpu = device == DeviceKind::Gpu;
  switch (impl) {
    case OptimizerImpl::Loop:
      return int(spec.ops.size() + spec.scalar_ops.size()) * tensors;
    case OptimizerImpl::Foreach: {
      // The 0-dim step ops stay per tensor on both (CPU step tensors, Python lists).
      const int scalar = int(spec.foreach_scalar_ops.size()) * tensors;
      const int ops = int(optimizer_ops(spec, impl).size());
      return (gpu ? ops : ops * tensors) + scalar;
    }
    case OptimizerImpl::Fused: {
      const int stages = int(spec.fused_stages.size());
      return gpu ? stages + spec.fused_gpu_extra_kernels : stages * tensors;
    }
  }
  return 0;
}

int optimizer_pass_threads(OptimizerImpl impl, std::int64_t elements) {
  const std::int64_t grain = impl == OptimizerImpl::Fused ? kFusedGrain : kAtenGrain;
  const std::int64_t chunks = std::max<std::int64_t>(1, (elements + grain - 1) / grain);
  return int(std::min<std::int64_t>(chunks, 1 << 20));
}

OptimizerElementCost optimizer_element_cost(const OptimizerSpec& spec, OptimizerImpl impl,
                                            int element_bytes) {
  OptimizerElementCost cost;
  for (const auto& pass : optimizer_passes(spec, impl)) {
    ++cost.passes;
    cost.flops += pass.flops_per_element;
    for (auto a : pass.accesses) {
      if (a.mode != AccessMode::Write) cost.bytes_read += element_bytes;
      if (a.mode != AccessMode::Read) cost.bytes_written += element_bytes;
    }
  }
  return cost;
}

}  // namespace fusim::schedule
