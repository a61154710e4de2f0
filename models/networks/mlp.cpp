// The MLP of scripts/fusim_models.py:mlp: 784 inputs (an MNIST image), hidden Linear+ReLU
// layers (default 2 of 1024), 10 classes; names fc1, relu1, fc2, relu2, fc3.
#include <fmt/format.h>

#include "core/error.h"
#include "networks/network_builder.h"
#include "networks/networks.h"

namespace fusim::networks {

workload::Trace make_mlp(const NetworkOptions& o) {
  std::int64_t layers = o.layers > 0 ? o.layers : 2;
  std::int64_t hidden = o.hidden > 0 ? o.hidden : 1024;
  NetworkBuilder b("mlp", o.batch, o.source, "--hidden");
  InputRef x = b.input("input", {o.batch, 784}, workload::DType::Float32);
  for (std::int64_t i = 1; i <= layers; ++i)
    x = b.activation(fmt::format("relu{}", i), b.linear(fmt::format("fc{}", i), x, hidden),
                     workload::OpKind::Relu);
  return b.finish(b.linear(fmt::format("fc{}", layers + 1), x, 10));
}

}  // namespace fusim::networks
