// VGG 11/16 exactly as torchvision.models.vgg (v0.14), configurations "A" and "D" of
// Simonyan & Zisserman 2015 (no batch norm): 3x3 convs with bias + ReLU, 2x2 max pools,
// adaptive 7x7 average pool, and the 4096-4096-1000 classifier with dropout 0.5.
#include <fmt/format.h>
#include <vector>

#include "core/error.h"
#include "networks/network_builder.h"
#include "networks/networks.h"

namespace fusim::networks {

workload::Trace make_vgg(int depth, const NetworkOptions& o) {
  constexpr int M = 0;  // a max pool in the configuration list
  std::vector<int> config;
  if (depth == 11)
    config = {64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
  else if (depth == 16)
    config = {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M};
  else
    throw InputError(fmt::format("vgg: expected depth 11 or 16, got {}", depth));

  NetworkBuilder b(fmt::format("vgg{}", depth), o.batch, o.source, "--resolution");
  InputRef x = b.input("input", {o.batch, 3, o.resolution, o.resolution}, workload::DType::Float32);
  int index = 0;  // position in the `features` Sequential
  auto next = [&] { return fmt::format("features.{}", index++); };
  for (int channels : config) {
    if (channels == M) {
      x = b.max_pool2d(next(), x, 2, 2, 0);
    } else {
      x = b.conv2d(next(), x, Conv2dSpec{channels, 3, 1, 1, 1, 1, true});
      x = b.activation(next(), x, workload::OpKind::Relu);
    }
  }
  x = b.adaptive_avg_pool2d("avgpool", x, 7, 7);
  x = b.flatten("flatten", x, 1);
  x = b.activation("classifier.1", b.linear("classifier.0", x, 4096), workload::OpKind::Relu);
  x = b.dropout("classifier.2", x, 0.5);
  x = b.activation("classifier.4", b.linear("classifier.3", x, 4096), workload::OpKind::Relu);
  x = b.dropout("classifier.5", x, 0.5);
  return b.finish(b.linear("classifier.6", x, 1000));
}

}  // namespace fusim::networks
