#include "backend/optimizer_config.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

namespace fusim::backend {

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names{"sgd",   "momentum", "nesterov", "adam",
                                              "adamw", "adagrad",  "rmsprop",  "lamb"};
  return names;
}

OptimizerConfig optimizer_config(std::string_view name) {
  OptimizerConfig c;
  c.name = std::string(name);
  if (name == "sgd") {
    c.kind = OptimizerKind::Sgd;
  } else if (name == "momentum" || name == "nesterov") {
    c.kind = OptimizerKind::Sgd;
    c.momentum = 0.9;
    c.nesterov = name == "nesterov";
  } else if (name == "adam" || name == "adamw") {
    c.kind = name == "adam" ? OptimizerKind::Adam : OptimizerKind::AdamW;
    c.lr = 1e-3;
    c.weight_decay = name == "adamw" ? 1e-2 : 0.0;
  } else if (name == "adagrad") {
    c.kind = OptimizerKind::Adagrad;
    c.eps = 1e-10;
  } else if (name == "rmsprop") {
    c.kind = OptimizerKind::RmsProp;
  } else if (name == "lamb") {
    // timm/optim/lamb.py defaults (You et al. 2020 use the same betas); grad_averaging on
    // (exp_avg gets 1 - beta1 of the grad), bias correction on, max_grad_norm not applied.
    c.kind = OptimizerKind::Lamb;
    c.lr = 1e-3;
    c.eps = 1e-6;
    c.weight_decay = 0.01;
  } else {
    throw InputError(fmt::format("unknown optimizer '{}': expected one of {}{}", name,
                                 fmt::join(optimizer_names(), ", "),
                                 did_you_mean(c.name, optimizer_names())));
  }
  return c;
}

}  // namespace fusim::backend
