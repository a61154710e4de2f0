#include "backend/layer_optimizer.h"

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
}  // namespace

LayerOptimizer::LayerOptimizer(OptimizerConfig config, OptimizerImpl impl,
                               std::vector<at::Tensor> params)
    : config_(std::move(config)), impl_(impl) {
  for (auto& p : params) {
    params_.push_back(p.detach());
    if (needs_state1(config_)) state1_.push_back(at::zeros_like(params_.back()));
    if (needs_state2(config_)) state2_.push_back(at::zeros_like(params_.back()));
    if (config_.kind == OptimizerKind::Lamb && impl == OptimizerImpl::Fused)
      update_.push_back(at::empty_like(params_.back()));
    step_tensors_.push_back(at::zeros({}, params_.back().options().dtype(at::kFloat)));
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

// torch/optim/{sgd,adam,adamw,adagrad,rmsprop}.py, _single_tensor_*: the same ATen calls;
// LAMB: timm/optim/lamb.py's per-tensor body (the ops of schedule/optimizer.cpp's "lamb").
void LayerOptimizer::step_loop(const std::vector<at::Tensor>& grads) {
  const auto& c = config_;
  const double t = double(step_);
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
        if (c.kind == OptimizerKind::AdamW)
          p.mul_(1 - c.lr * c.weight_decay);
        else if (c.weight_decay != 0)
          g = g.add(p, c.weight_decay);
        state1_[i].mul_(c.beta1).add_(g, 1 - c.beta1);
        state2_[i].mul_(c.beta2).addcmul_(g, g, 1 - c.beta2);
        const double step_size = c.lr / (1 - std::pow(c.beta1, t));
        const double bc2_sqrt = std::sqrt(1 - std::pow(c.beta2, t));
        auto denom = (state2_[i].sqrt() / bc2_sqrt).add_(c.eps);
        p.addcdiv_(state1_[i], denom, -step_size);
        break;
      }
      case OptimizerKind::Adagrad: {
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

// torch/optim/*.py, _multi_tensor_*: the same steps over the layer's tensor list.
void LayerOptimizer::step_foreach(const std::vector<at::Tensor>& grads_in) {
  const auto& c = config_;
  const double t = double(step_);
  std::vector<at::Tensor> g = grads_in;
  const std::size_t n = params_.size();
  switch (c.kind) {
    case OptimizerKind::Sgd:
      if (c.weight_decay != 0) g = at::_foreach_add(g, params_, c.weight_decay);
      if (c.momentum != 0) {
        at::_foreach_mul_(state1_, c.momentum);
        at::_foreach_add_(state1_, g, 1 - c.dampening);
        g = c.nesterov ? at::_foreach_add(g, state1_, c.momentum) : state1_;
      }
      at::_foreach_add_(params_, g, -c.lr);
      break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW: {
      if (c.kind == OptimizerKind::AdamW)
        at::_foreach_mul_(params_, 1 - c.lr * c.weight_decay);
      else if (c.weight_decay != 0)
        g = at::_foreach_add(g, params_, c.weight_decay);
      at::_foreach_mul_(state1_, c.beta1);
      at::_foreach_add_(state1_, g, 1 - c.beta1);
      at::_foreach_mul_(state2_, c.beta2);
      at::_foreach_addcmul_(state2_, g, g, 1 - c.beta2);
      const double step_size = -c.lr / (1 - std::pow(c.beta1, t));
      const double bc2_sqrt = std::sqrt(1 - std::pow(c.beta2, t));
      auto denom = at::_foreach_sqrt(state2_);
      at::_foreach_div_(denom, scalars(std::vector<double>(n, bc2_sqrt)));
      denom = at::_foreach_add(denom, c.eps);
      at::_foreach_addcdiv_(params_, state1_, denom, scalars(std::vector<double>(n, step_size)));
      break;
    }
    case OptimizerKind::Adagrad: {
      if (c.weight_decay != 0) g = at::_foreach_add(g, params_, c.weight_decay);
      const double minus_clr = -c.lr / (1 + (t - 1) * c.lr_decay);
      at::_foreach_addcmul_(state1_, g, g, 1.0);
      auto std_ = at::_foreach_add(at::_foreach_sqrt(state1_), c.eps);
      at::_foreach_addcdiv_(params_, g, std_, scalars(std::vector<double>(n, minus_clr)));
      break;
    }
    case OptimizerKind::RmsProp: {
      if (c.weight_decay != 0) g = at::_foreach_add(g, params_, c.weight_decay);
      at::_foreach_mul_(state1_, c.alpha);
      at::_foreach_addcmul_(state1_, g, g, 1 - c.alpha);
      auto avg = at::_foreach_sqrt(state1_);
      at::_foreach_add_(avg, c.eps);
      at::_foreach_addcdiv_(params_, g, avg, -c.lr);
      break;
    }
    case OptimizerKind::Lamb: {
      // timm's body with each step over the tensor list; the norms are _foreach_norm.
      at::_foreach_mul_(state1_, c.beta1);
      at::_foreach_add_(state1_, g, 1 - c.beta1);
      at::_foreach_mul_(state2_, c.beta2);
      at::_foreach_addcmul_(state2_, g, g, 1 - c.beta2);
      const double bc1 = 1 - std::pow(c.beta1, t);
      const double bc2_sqrt = std::sqrt(1 - std::pow(c.beta2, t));
      auto denom = at::_foreach_div(at::_foreach_sqrt(state2_), bc2_sqrt);
      at::_foreach_add_(denom, c.eps);
      auto update = at::_foreach_div(state1_, bc1);
      at::_foreach_div_(update, denom);
      if (c.weight_decay != 0) {
        at::_foreach_add_(update, params_, c.weight_decay);
        const auto w_norms = at::_foreach_norm(params_, 2);
        const auto u_norms = at::_foreach_norm(update, 2);
        // One where over the layer's stacked norms; each ratio expanded to its tensor's
        // shape (a stride-0 view, so _foreach_mul_ pairs equal shapes on every device).
        const auto ratios = lamb_trust_ratio(at::stack(w_norms), at::stack(u_norms)).unbind();
        std::vector<at::Tensor> expanded;
        for (std::size_t i = 0; i < n; ++i) expanded.push_back(ratios[i].expand_as(update[i]));
        at::_foreach_mul_(update, expanded);
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
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = grads[i].contiguous();
    fused::lamb_stage1(params_[i].data_ptr<float>(), g[i].data_ptr<float>(),
                       state1_[i].data_ptr<float>(), state2_[i].data_ptr<float>(),
                       update_[i].data_ptr<float>(), params_[i].numel(), step_, c.beta1, c.beta2,
                       c.eps, c.weight_decay);
  }
  std::vector<double> w_norm(n), u_norm(n);
  for (std::size_t i = 0; i < n; ++i)
    w_norm[i] = fused::l2_norm(params_[i].data_ptr<float>(), params_[i].numel());
  for (std::size_t i = 0; i < n; ++i)
    u_norm[i] = fused::l2_norm(update_[i].data_ptr<float>(), update_[i].numel());
  for (std::size_t i = 0; i < n; ++i) {
    const bool adapt = c.weight_decay != 0 && w_norm[i] > 0 && u_norm[i] > 0;
    const double ratio = adapt ? c.lr * (w_norm[i] / u_norm[i]) : c.lr;
    fused::lamb_stage2(params_[i].data_ptr<float>(), update_[i].data_ptr<float>(),
                       params_[i].numel(), ratio);
  }
}

std::vector<at::Tensor> LayerOptimizer::state_tensors() const {
  std::vector<at::Tensor> all;
  for (const auto* v : {&state1_, &state2_, &update_, &step_tensors_})
    all.insert(all.end(), v->begin(), v->end());
  return all;
}

}  // namespace fusim::backend
