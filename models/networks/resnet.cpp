// ResNet 18/34/50/101 exactly as torchvision.models.resnet (v0.14): He et al. 2016,
// "Deep Residual Learning", with the stride on the 3x3 conv of a bottleneck (ResNet v1.5).
#include <fmt/format.h>
#include <array>

#include "core/error.h"
#include "networks/network_builder.h"
#include "networks/networks.h"

namespace fusim::networks {
namespace {

using workload::OpKind;

struct ResNetSpec {
  bool bottleneck;
  std::array<int, 4> blocks;
};

ResNetSpec resnet_spec(int depth) {
  switch (depth) {
    case 18:
      return {false, {2, 2, 2, 2}};
    case 34:
      return {false, {3, 4, 6, 3}};
    case 50:
      return {true, {3, 4, 6, 3}};
    case 101:
      return {true, {3, 4, 23, 3}};
  }
  throw InputError(fmt::format("resnet: expected depth 18, 34, 50 or 101, got {}", depth));
}

Conv2dSpec conv(std::int64_t out, std::int64_t kernel, std::int64_t stride = 1) {
  // torchvision's conv3x3/conv1x1 helpers: padding k/2, no bias (batch norm follows).
  return Conv2dSpec{out, kernel, stride, kernel / 2, 1, 1, false};
}

// One BasicBlock or Bottleneck; the forward order is the one fx records.
InputRef block(NetworkBuilder& b, const std::string& p, InputRef x, std::int64_t planes,
               std::int64_t stride, bool bottleneck) {
  const int expansion = bottleneck ? 4 : 1;
  std::int64_t in_channels = b.shape(x)[1];
  InputRef out = x;
  if (bottleneck) {
    out = b.activation(p + "relu",
                       b.batch_norm(p + "bn1", b.conv2d(p + "conv1", out, conv(planes, 1))),
                       OpKind::Relu);
    out = b.activation(p + "relu",
                       b.batch_norm(p + "bn2", b.conv2d(p + "conv2", out, conv(planes, 3, stride))),
                       OpKind::Relu);
    out = b.batch_norm(p + "bn3", b.conv2d(p + "conv3", out, conv(planes * expansion, 1)));
  } else {
    out = b.activation(p + "relu",
                       b.batch_norm(p + "bn1", b.conv2d(p + "conv1", out, conv(planes, 3, stride))),
                       OpKind::Relu);
    out = b.batch_norm(p + "bn2", b.conv2d(p + "conv2", out, conv(planes, 3)));
  }
  InputRef identity = x;
  if (stride != 1 || in_channels != planes * expansion)
    identity = b.batch_norm(p + "downsample.1",
                            b.conv2d(p + "downsample.0", x, conv(planes * expansion, 1, stride)));
  return b.activation(p + "relu", b.add(out, identity), OpKind::Relu);
}

}  // namespace

workload::Trace make_resnet(int depth, const NetworkOptions& o) {
  ResNetSpec spec = resnet_spec(depth);
  NetworkBuilder b(fmt::format("resnet{}", depth), o.batch, o.source, "--resolution");
  InputRef x = b.input("input", {o.batch, 3, o.resolution, o.resolution}, workload::DType::Float32);
  x = b.conv2d("conv1", x, Conv2dSpec{64, 7, 2, 3, 1, 1, false});
  x = b.activation("relu", b.batch_norm("bn1", x), OpKind::Relu);
  x = b.max_pool2d("maxpool", x, 3, 2, 1);
  const std::array<std::int64_t, 4> planes{64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage)
    for (int i = 0; i < spec.blocks[stage]; ++i)
      x = block(b, fmt::format("layer{}.{}.", stage + 1, i), x, planes[stage],
                stage > 0 && i == 0 ? 2 : 1, spec.bottleneck);
  x = b.adaptive_avg_pool2d("avgpool", x, 1, 1);
  x = b.flatten("flatten", x, 1);
  return b.finish(b.linear("fc", x, 1000));
}

}  // namespace fusim::networks
