#pragma once
// U_i: the optimizer update of one layer's parameters, in one of three implementations
// with identical math (torch.optim, PyTorch 1.13), each making the ATen calls the
// schedule's optimizer table lists for it (schedule/optimizer.h; tests/backend/
// update_count_test.cpp counts them):
//   loop    - per tensor, one ATen op per elementwise step (torch.optim foreach=False),
//             the 0-dim step counter bumped and read as torch does;
//   foreach - torch's _multi_tensor_* body as at::_foreach_* ops over the layer's tensors;
//   fused   - one pass per tensor: fused::* kernels on CPU, at::_fused_adam_ on CUDA.
// State (momentum buffers, exp_avg, exp_avg_sq, sums) is allocated up front, as a tuned
// trainer does, so that no step allocates it lazily.
#include <ATen/ATen.h>
#include <cstdint>
#include <vector>

#include "backend/optimizer_config.h"
#include "schedule/schedule.h"

namespace fusim::backend {

class LayerOptimizer {
 public:
  LayerOptimizer(OptimizerConfig config, schedule::OptimizerImpl impl,
                 std::vector<at::Tensor> params);

  // One update with these gradients (same order as the params). Params change in place.
  void step(const std::vector<at::Tensor>& grads);
  std::int64_t steps_taken() const { return step_; }
  // The optimizer state it holds (buffers of every kind), for memory accounting.
  std::vector<at::Tensor> state_tensors() const;

 private:
  void step_loop(const std::vector<at::Tensor>& grads);
  void step_foreach(const std::vector<at::Tensor>& grads);
  void step_fused(const std::vector<at::Tensor>& grads);
  void step_lamb_fused(const std::vector<at::Tensor>& grads);

  OptimizerConfig config_;
  schedule::OptimizerImpl impl_;
  std::vector<at::Tensor> params_;  // detached views sharing storage with the model's
  std::vector<at::Tensor> state1_;  // momentum_buffer | exp_avg | sum | square_avg
  std::vector<at::Tensor> state2_;  // exp_avg_sq (adam, adamw, lamb)
  // 0-dim float step counts: torch's state['step'] of adam, adamw, adagrad (CPU), and the
  // device step counts of at::_fused_adam_ (CUDA).
  std::vector<at::Tensor> step_tensors_;
  std::int64_t step_ = 0;
};

}  // namespace fusim::backend
