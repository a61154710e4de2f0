// The optimizer table. Each sequence is the per-tensor body of torch.optim's
// `_single_tensor_<name>` in PyTorch 1.13 (torch/optim/<name>.py) with default
// hyper-parameters, written op by op; FLOPs count each multiply, add, divide and sqrt of
// the element as 1 (addcmul/addcdiv with a scale: 3).
#include "schedule/optimizer.h"

#include <fmt/format.h>

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
  // Same with nesterov=True: d_p = d_p.add(buf, alpha=momentum) (a new tensor).
  t.push_back({"nesterov",
               "torch.optim.SGD(lr, momentum=0.9, nesterov=True)",
               {"momentum_buffer"},
               {{"buf.mul_(momentum)", {{S0, RW}}, 1},
                {"buf.add_(grad, alpha=1-dampening)", {{G, R}, {S0, RW}}, 2},
                {"d_p = grad.add(buf, alpha=momentum)", {{G, R}, {S0, R}, {T0, W}}, 2},
                {"param.add_(d_p, alpha=-lr)", {{T0, R}, {P, RW}}, 2}},
               {range(0, 3)}});
  // adam.py, weight_decay=0 (default): no grad.add(param) pass. fused=True
  // (_fused_adam, aten/src/ATen/native/cuda/fused_adam_impl.cu) does the whole body in one
  // pass: reads grad, param, exp_avg, exp_avg_sq; writes the last three.
  t.push_back({"adam",
               "torch.optim.Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8)",
               {"exp_avg", "exp_avg_sq"},
               adam_body(),
               {range(0, 7)}});
  // adamw.py, _single_tensor_adamw, weight_decay=1e-2 (default):
  //   param.mul_(1 - lr * weight_decay), then Adam's body.
  {
    OptimizerSpec s{"adamw",
                    "torch.optim.AdamW(lr=1e-3, weight_decay=1e-2)",
                    {"exp_avg", "exp_avg_sq"},
                    {{"param.mul_(1-lr*weight_decay)", {{P, RW}}, 1}},
                    {range(0, 8)}};
    for (auto& op : adam_body()) s.ops.push_back(op);
    t.push_back(s);
  }
  // adagrad.py, _single_tensor_adagrad, lr_decay=0, weight_decay=0, eps=1e-10:
  //   state_sum.addcmul_(grad, grad, value=1); std = state_sum.sqrt().add_(eps)
  //   param.addcdiv_(grad, std, value=-clr)
  t.push_back({"adagrad",
               "torch.optim.Adagrad(lr=1e-2)",
               {"sum"},
               {{"state_sum.addcmul_(grad, grad, value=1)", {{G, R}, {S0, RW}}, 3},
                {"std = state_sum.sqrt()", {{S0, R}, {T0, W}}, 1},
                {"std.add_(eps)", {{T0, RW}}, 1},
                {"param.addcdiv_(grad, std, value=-clr)", {{G, R}, {T0, R}, {P, RW}}, 3}},
               {range(0, 3)}});
  // rmsprop.py, _single_tensor_rmsprop, alpha=0.99, momentum=0, centered=False:
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
  // the update is materialised between the stages.
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
               {range(0, 9), {10}, {11}, {12, 13}}});
  return t;
}

bool is_temp(Operand o) {
  return o == Operand::Temp0 || o == Operand::Temp1 || o == Operand::Temp2;
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

std::string optimizer_names() {
  std::string names;
  for (const auto& spec : optimizer_table())
    names += (names.empty() ? "" : ", ") + std::string(spec.name);
  return names;
}

std::vector<OptimizerPass> optimizer_passes(const OptimizerSpec& spec, OptimizerImpl impl) {
  std::vector<OptimizerPass> passes;
  if (impl != OptimizerImpl::Fused) {
    for (std::size_t i = 0; i < spec.ops.size(); ++i) {
      OptimizerPass pass{{}, spec.ops[i].flops_per_element, spec.ops[i].reduction, int(i)};
      for (auto a : spec.ops[i].accesses) merge_access(pass.accesses, a);
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

int optimizer_kernels(const OptimizerSpec& spec, OptimizerImpl impl, int tensors) {
  switch (impl) {
    case OptimizerImpl::Loop:
      return int(spec.ops.size()) * tensors;
    case OptimizerImpl::Foreach:
      return int(spec.ops.size());
    case OptimizerImpl::Fused:
      return int(spec.fused_stages.size());
  }
  return 0;
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
