#include "backend/layer_optimizer.h"

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <cmath>

#include "backend/fused_kernels.h"
#include "core/error.h"

namespace fusim::backend {
namespace {
using schedule::OptimizerImpl;

bool needs_state1(const OptimizerConfig& c) {
  return c.kind != OptimizerKind::Sgd || c.momentum != 0;
}
bool needs_state2(const OptimizerConfig& c) {
  return c.kind == OptimizerKind::Adam || c.kind == OptimizerKind::AdamW ||
         c.kind == OptimizerKind::Lamb;
}
// torch 1.13 keeps state['step'] as a 0-dim float tensor for these (adam.py:212,
// adamw.py, adagrad.py): bumping and reading it are kernels of every update. RMSprop's
// step and timm LAMB's are Python ints.
bool has_step_tensor(const OptimizerConfig& c) {
  return c.kind == OptimizerKind::Adam || c.kind == OptimizerKind::AdamW ||
         c.kind == OptimizerKind::Adagrad;
}
// LAMB's layer-wise trust ratio ||p|| / ||update|| as timm computes it: 1 where either norm
// is zero (a zero weight, e.g. a fresh bias, or a zero update), as 0-dim tensors so that
// no value goes back to the host (timm/optim/lamb.py: nested torch.where).
at::Tensor lamb_trust_ratio(const at::Tensor& w_norm, const at::Tensor& u_norm) {
  const auto one = at::ones_like(w_norm);
  return at::where(w_norm > 0, at::where(u_norm > 0, w_norm / u_norm, one), one);
}
std::vector<at::Scalar> scalars(const std::vector<double>& v) {
  return std::vector<at::Scalar>(v.begin(), v.end());
}
const char* fused_kernel_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::Sgd:
      return "fusim::fused_sgd";
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
      return "fusim::fused_adam";
    case OptimizerKind::Adagrad:
      return "fusim::fused_adagrad";
    case OptimizerKind::RmsProp:
      return "fusim::fused_rmsprop";
    case OptimizerKind::Lamb:
      break;
  }
  return "fusim::fused_lamb";
}
}  // namespace

LayerOptimizer::LayerOptimizer(OptimizerConfig config, OptimizerImpl impl,
                               std::vector<at::Tensor> params)
    : config_(std::move(config)), impl_(impl) {
  for (auto& p : params) {
    params_.push_back(p.detach());
    if (needs_state1(config_)) state1_.push_back(at::zeros_like(params_.back()));
    if (needs_state2(config_)) state2_.push_back(at::zeros_like(params_.back()));
    // torch.tensor(0.) on the CPU whatever the param's device (adam.py:212), except for
    // the fused CUDA kernel, which reads them on the device (torch.zeros((1,), cuda)).
    const bool device_steps = impl == OptimizerImpl::Fused && params_.back().is_cuda();
    if ((has_step_tensor(config_) && impl != OptimizerImpl::Fused) || device_steps)
      step_tensors_.push_back(
          at::zeros({}, at::TensorOptions()
                            .dtype(at::kFloat)
                            .device(device_steps ? params_.back().device() : at::kCPU)));
  }
  if (impl_ == OptimizerImpl::Fused) {
    for (const auto& p : params_) {
      bool cuda_adam = p.is_cuda() && config_.kind == OptimizerKind::Adam;
      if (!cuda_adam && (!p.is_cpu() || p.scalar_type() != at::kFloat))
        throw InputError(fmt::format(
            "optimizer '{}' with impl 'fused' runs on float32 CPU tensors (own kernels) and, on "
            "CUDA, for adam only (torch 1.13's at::_fused_adam_); got a {} tensor on {}",
            config_.name, std::string(c10::toString(p.scalar_type())), p.device().str()));
    }
  }
}

void LayerOptimizer::step(const std::vector<at::Tensor>& grads) {
  FUSIM_ASSERT(grads.size() == params_.size(), "one gradient per parameter");
  at::NoGradGuard no_grad;
  ++step_;
  switch (impl_) {
    case OptimizerImpl::Loop:
      step_loop(grads);
      break;
    case OptimizerImpl::Foreach:
      step_foreach(grads);
      break;
    case OptimizerImpl::Fused:
      step_fused(grads);
      break;
  }
}

// torch/optim/{sgd,adam,adamw,adagrad,rmsprop}.py, _single_tensor_* (PyTorch 1.13): the
// same ATen calls in the same order, the step counter included; LAMB: timm/optim/lamb.py's
// per-tensor body (the ops of schedule/optimizer.cpp's "lamb"). grad.conj() (adam.py:364)
// is the identity on real tensors and dispatches no kernel: left out.
void LayerOptimizer::step_loop(const std::vector<at::Tensor>& grads) {
  const auto& c = config_;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    at::Tensor g = grads[i];
    switch (c.kind) {
      case OptimizerKind::Sgd:
        if (c.weight_decay != 0) g = g.add(p, c.weight_decay);
        if (c.momentum != 0) {
          // Zero-initialised buffer: mul_ then add_ equals torch's clone(d_p) on step 1.
          state1_[i].mul_(c.momentum).add_(g, 1 - c.dampening);
          g = c.nesterov ? g.add(state1_[i], c.momentum) : state1_[i];
        }
        p.add_(g, -c.lr);
        break;
      case OptimizerKind::Adam:
      case OptimizerKind::AdamW: {
        step_tensors_[i].add_(1);  // step_t += 1
        if (c.kind == OptimizerKind::AdamW)
          p.mul_(1 - c.lr * c.weight_decay);
        else if (c.weight_decay != 0)
          g = g.add(p, c.weight_decay);
        state1_[i].mul_(c.beta1).add_(g, 1 - c.beta1);
        state2_[i].mul_(c.beta2).addcmul_(g, g, 1 - c.beta2);
        const double t = step_tensors_[i].item<double>();  // step = step_t.item()
        const double step_size = c.lr / (1 - std::pow(c.beta1, t));
        const double bc2_sqrt = std::sqrt(1 - std::pow(c.beta2, t));
        auto denom = (state2_[i].sqrt() / bc2_sqrt).add_(c.eps);
        p.addcdiv_(state1_[i], denom, -step_size);
        break;
      }
      case OptimizerKind::Adagrad: {
        step_tensors_[i].add_(1);
        const double t = step_tensors_[i].item<double>();
        if (c.weight_decay != 0) g = g.add(p, c.weight_decay);
        const double clr = c.lr / (1 + (t - 1) * c.lr_decay);
        state1_[i].addcmul_(g, g, 1.0);
        auto std_ = state1_[i].sqrt().add_(c.eps);
        p.addcdiv_(g, std_, -clr);
        break;
      }
      case OptimizerKind::RmsProp: {
        if (c.weight_decay != 0) g = g.add(p, c.weight_decay);
        state1_[i].mul_(c.alpha).addcmul_(g, g, 1 - c.alpha);
        auto avg = state1_[i].sqrt().add_(c.eps);
        p.addcdiv_(g, avg, -c.lr);
        break;
      }
      case OptimizerKind::Lamb: {
        const double t = double(step_);  // timm: group['step'], a Python int
        state1_[i].mul_(c.beta1).add_(g, 1 - c.beta1);
        state2_[i].mul_(c.beta2).addcmul_(g, g, 1 - c.beta2);
        const double bc1 = 1 - std::pow(c.beta1, t);
        const double bc2_sqrt = std::sqrt(1 - std::pow(c.beta2, t));
        auto denom = (state2_[i].sqrt() / bc2_sqrt).add_(c.eps);
        auto update = (state1_[i] / bc1).div_(denom);
        // timm adapts only parameters with weight decay (always_adapt=False).
        if (c.weight_decay != 0) {
          update.add_(p, c.weight_decay);
          update.mul_(lamb_trust_ratio(p.norm(2), update.norm(2)));
        }
        p.add_(update, -c.lr);
        break;
      }
    }
  }
}

// torch/optim/*.py, _multi_tensor_* (PyTorch 1.13): the same steps over the layer's tensor
// list, in torch's order and with torch's in-place choices (schedule/optimizer.cpp's
// foreach bodies); line numbers of the Debian 1.13.1 sources.
void LayerOptimizer::step_foreach(const std::vector<at::Tensor>& grads_in) {
  const auto& c = config_;
  std::vector<at::Tensor> g = grads_in;
  const std::size_t n = params_.size();
  switch (c.kind) {
    case OptimizerKind::Sgd:  // sgd.py:248-304
      if (c.weight_decay != 0) g = at::_foreach_add(g, params_, c.weight_decay);
      if (c.momentum != 0) {
        at::_foreach_mul_(state1_, c.momentum);
        at::_foreach_add_(state1_, g, 1 - c.dampening);
        if (c.nesterov)
          at::_foreach_add_(g, state1_, c.momentum);  // into the grads (sgd.py:298)
        else
          g = state1_;
      }
      at::_foreach_add_(params_, g, -c.lr);
      break;
    case OptimizerKind::Adam:  // adam.py:453-523; adamw.py:352-422
    case OptimizerKind::AdamW: {
      at::_foreach_add_(step_tensors_, 1);
      if (c.kind == OptimizerKind::AdamW)
        at::_foreach_mul_(params_, 1 - c.lr * c.weight_decay);
      else if (c.weight_decay != 0)
        at::_foreach_add_(g, params_, c.weight_decay);
      at::_foreach_mul_(state1_, c.beta1);
      at::_foreach_add_(state1_, g, 1 - c.beta1);
      at::_foreach_mul_(state2_, c.beta2);
      at::_foreach_addcmul_(state2_, g, g, 1 - c.beta2);
      // bias_correction1 = [1 - beta1 ** step.item() ...], bias_correction2 likewise.
      std::vector<double> bc1(n), bc2(n);
      for (std::size_t i = 0; i < n; ++i)
        bc1[i] = 1 - std::pow(c.beta1, step_tensors_[i].item<double>());
      for (std::size_t i = 0; i < n; ++i)
        bc2[i] = 1 - std::pow(c.beta2, step_tensors_[i].item<double>());
      std::vector<double> step_size(n), bc2_sqrt(n);
      for (std::size_t i = 0; i < n; ++i) {
        step_size[i] = (c.lr / bc1[i]) * -1;
        bc2_sqrt[i] = std::sqrt(bc2[i]);
      }
      auto sqrt = at::_foreach_sqrt(state2_);
      at::_foreach_div_(sqrt, scalars(bc2_sqrt));
      const auto denom = at::_foreach_add(sqrt, c.eps);
      sqrt.clear();  // as the schedule's allocator model: a temporary dies after its last pass
      at::_foreach_addcdiv_(params_, state1_, denom, scalars(step_size));
      break;
    }
    case OptimizerKind::Adagrad: {  // adagrad.py:324-342
      at::_foreach_add_(step_tensors_, 1);
      if (c.weight_decay != 0) at::_foreach_add_(g, params_, c.weight_decay);
      // minus_clr = [-lr / (1 + (step - 1) * lr_decay) for step in state_steps]: 0-dim
      // tensor arithmetic (Tensor.__rtruediv__ is reciprocal() * other, torch/_tensor.py).
      std::vector<at::Tensor> minus_clr;
      for (const auto& step : step_tensors_)
        minus_clr.push_back(step.sub(1).mul(c.lr_decay).add(1).reciprocal().mul(-c.lr));
      at::_foreach_addcmul_(state1_, g, g, 1);
      auto sqrt = at::_foreach_sqrt(state1_);
      const auto std_ = at::_foreach_add(sqrt, c.eps);
      sqrt.clear();
      auto scaled = at::_foreach_mul(g, minus_clr);
      const auto to_add = at::_foreach_div(scaled, std_);
      scaled.clear();
      at::_foreach_add_(params_, to_add);
      break;
    }
    case OptimizerKind::RmsProp: {  // rmsprop.py:289-324
      if (c.weight_decay != 0) at::_foreach_add_(g, params_, c.weight_decay);
      at::_foreach_mul_(state1_, c.alpha);
      at::_foreach_addcmul_(state1_, g, g, 1 - c.alpha);
      auto avg = at::_foreach_sqrt(state1_);
      at::_foreach_add_(avg, c.eps);
      at::_foreach_addcdiv_(params_, g, avg, -c.lr);
      break;
    }
    case OptimizerKind::Lamb: {
      // timm's body with each step over the tensor list; the norms are _foreach_norm, the
      // trust ratio 0-dim arithmetic per tensor as in the loop.
      const double t = double(step_);
      at::_foreach_mul_(state1_, c.beta1);
      at::_foreach_add_(state1_, g, 1 - c.beta1);
      at::_foreach_mul_(state2_, c.beta2);
      at::_foreach_addcmul_(state2_, g, g, 1 - c.beta2);
      const double bc1 = 1 - std::pow(c.beta1, t);
      const double bc2_sqrt = std::sqrt(1 - std::pow(c.beta2, t));
      auto sqrt = at::_foreach_sqrt(state2_);
      auto denom = at::_foreach_div(sqrt, bc2_sqrt);
      sqrt.clear();
      at::_foreach_add_(denom, c.eps);
      auto update = at::_foreach_div(state1_, bc1);
      at::_foreach_div_(update, denom);
      denom.clear();
      if (c.weight_decay != 0) {
        at::_foreach_add_(update, params_, c.weight_decay);
        const auto w_norms = at::_foreach_norm(params_, 2);
        const auto u_norms = at::_foreach_norm(update, 2);
        std::vector<at::Tensor> ratios;
        for (std::size_t i = 0; i < n; ++i)
          ratios.push_back(lamb_trust_ratio(w_norms[i], u_norms[i]));
        at::_foreach_mul_(update, ratios);  // each 0-dim ratio broadcast over its tensor
      }
      at::_foreach_add_(params_, update, -c.lr);
      break;
    }
  }
}

void LayerOptimizer::step_fused(const std::vector<at::Tensor>& grads) {
  const auto& c = config_;
  if (c.kind == OptimizerKind::Lamb) return step_lamb_fused(grads);
  if (!params_.empty() && params_[0].is_cuda()) {
    // Adam only (checked in the constructor): torch's multi-tensor fused CUDA kernel.
    at::_foreach_add_(step_tensors_, 1.0);
    at::_fused_adam_(params_, grads, state1_, state2_, {}, step_tensors_, c.lr, c.beta1, c.beta2,
                     c.weight_decay, c.eps, false, false);
    return;
  }
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    // Visible to torch.profiler and to OpCounter as one kernel over the param.
    RECORD_FUNCTION(fused_kernel_name(c.kind), std::vector<c10::IValue>({p}));
    const at::Tensor g = grads[i].contiguous();
    float* pp = p.data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    const auto n = p.numel();
    switch (c.kind) {
      case OptimizerKind::Sgd:
        fused::sgd(pp, gp, c.momentum != 0 ? state1_[i].data_ptr<float>() : nullptr, n, c.lr,
                   c.momentum, c.dampening, c.weight_decay, c.nesterov);
        break;
      case OptimizerKind::Adam:
      case OptimizerKind::AdamW:
        fused::adam(pp, gp, state1_[i].data_ptr<float>(), state2_[i].data_ptr<float>(), n, step_,
                    c.lr, c.beta1, c.beta2, c.eps, c.weight_decay, c.kind == OptimizerKind::AdamW);
        break;
      case OptimizerKind::Adagrad:
        fused::adagrad(pp, gp, state1_[i].data_ptr<float>(), n, step_, c.lr, c.lr_decay, c.eps,
                       c.weight_decay);
        break;
      case OptimizerKind::RmsProp:
        fused::rmsprop(pp, gp, state1_[i].data_ptr<float>(), n, c.lr, c.alpha, c.eps,
                       c.weight_decay);
        break;
      case OptimizerKind::Lamb:
        FUSIM_ASSERT(false, "fused lamb runs in step_lamb_fused");
    }
  }
}

// apex FusedLAMB (apex/optimizers/fused_lamb.py, csrc/multi_tensor_lamb.cu), as the
// schedule's fused "lamb" stages it, each stage over all the layer's tensors:
//   1. LAMBStage1: moments and the update u (materialised: the norms need all of it);
//   2. L2 norm of every param;  3. L2 norm of every update;
//   4. LAMBStage2: param -= lr * ratio * u, ratio = ||p|| / ||u|| (1 if either is zero,
//      or without weight decay: apex's use_nvlamb=False).
void LayerOptimizer::step_lamb_fused(const std::vector<at::Tensor>& grads) {
  const auto& c = config_;
  const std::size_t n = params_.size();
  std::vector<at::Tensor> g(n);
  // The update, materialised between the stages: a temporary of each step, as the
  // schedule's allocator model has it (freed after stage 4).
  std::vector<at::Tensor> update(n);
  for (std::size_t i = 0; i < n; ++i) {
    update[i] = at::empty_like(params_[i]);
    RECORD_FUNCTION("fusim::fused_lamb_stage1", std::vector<c10::IValue>({params_[i]}));
    g[i] = grads[i].contiguous();
    fused::lamb_stage1(params_[i].data_ptr<float>(), g[i].data_ptr<float>(),
                       state1_[i].data_ptr<float>(), state2_[i].data_ptr<float>(),
                       update[i].data_ptr<float>(), params_[i].numel(), step_, c.beta1, c.beta2,
                       c.eps, c.weight_decay);
  }
  std::vector<double> w_norm(n), u_norm(n);
  for (std::size_t i = 0; i < n; ++i) {
    RECORD_FUNCTION("fusim::fused_l2_norm", std::vector<c10::IValue>({params_[i]}));
    w_norm[i] = fused::l2_norm(params_[i].data_ptr<float>(), params_[i].numel());
  }
  for (std::size_t i = 0; i < n; ++i) {
    RECORD_FUNCTION("fusim::fused_l2_norm", std::vector<c10::IValue>({update[i]}));
    u_norm[i] = fused::l2_norm(update[i].data_ptr<float>(), update[i].numel());
  }
  for (std::size_t i = 0; i < n; ++i) {
    RECORD_FUNCTION("fusim::fused_lamb_stage2", std::vector<c10::IValue>({params_[i]}));
    const bool adapt = c.weight_decay != 0 && w_norm[i] > 0 && u_norm[i] > 0;
    const double ratio = adapt ? c.lr * (w_norm[i] / u_norm[i]) : c.lr;
    fused::lamb_stage2(params_[i].data_ptr<float>(), update[i].data_ptr<float>(),
                       params_[i].numel(), ratio);
  }
}

std::vector<at::Tensor> LayerOptimizer::state_tensors() const {
  std::vector<at::Tensor> all;
  for (const auto* v : {&state1_, &state2_, &step_tensors_})
    all.insert(all.end(), v->begin(), v->end());
  return all;
}

}  // namespace fusim::backend
