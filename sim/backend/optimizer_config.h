#pragma once
// Hyper-parameters of the optimizers the backend runs, with torch.optim's defaults
// (PyTorch 1.13 docs of torch.optim.SGD/Adam/AdamW/Adagrad/RMSprop) and, for LAMB (not in
// torch.optim), timm's (timm/optim/lamb.py). No torch headers here.
#include <string>
#include <string_view>
#include <vector>

namespace fusim::backend {

enum class OptimizerKind { Sgd, Adam, AdamW, Adagrad, RmsProp, Lamb };

struct OptimizerConfig {
  std::string name;  // as given: "sgd", "momentum", "nesterov", "adam", "adamw", ...
  OptimizerKind kind = OptimizerKind::Sgd;
  double lr = 0.01;
  double momentum = 0.0, dampening = 0.0;  // sgd
  bool nesterov = false;                   // sgd
  double weight_decay = 0.0;
  double beta1 = 0.9, beta2 = 0.999;  // adam, adamw, lamb
  double eps = 1e-8;                  // adam, adamw, rmsprop (adagrad: 1e-10, lamb: 1e-6)
  double alpha = 0.99;                // rmsprop smoothing constant
  double lr_decay = 0.0;              // adagrad
};

// "sgd" (lr 0.01), "momentum" (sgd, momentum 0.9), "nesterov" (momentum 0.9, nesterov),
// "adam" (lr 1e-3), "adamw" (lr 1e-3, weight_decay 1e-2), "adagrad" (lr 0.01, eps 1e-10),
// "rmsprop" (lr 0.01, alpha 0.99, eps 1e-8), "lamb" (lr 1e-3, betas (0.9, 0.999), eps 1e-6,
// weight_decay 0.01: timm's Lamb without grad clipping, the schedule's "lamb").
// Unknown names throw InputError listing these.
OptimizerConfig optimizer_config(std::string_view name);
const std::vector<std::string>& optimizer_names();

}  // namespace fusim::backend
