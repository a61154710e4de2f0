// MobileNetV2 exactly as torchvision.models.mobilenet_v2 (v0.14), width 1.0: Sandler et al.
// 2018, "MobileNetV2: Inverted Residuals and Linear Bottlenecks", Table 2.
#include <fmt/format.h>
#include <array>

#include "networks/network_builder.h"
#include "networks/networks.h"

namespace fusim::networks {
namespace {

using workload::OpKind;

// torchvision's Conv2dNormActivation: conv (padding (k-1)/2, no bias), BN, ReLU6, named
// prefix.0 / .1 / .2.
InputRef conv_bn_relu6(NetworkBuilder& b, const std::string& prefix, InputRef x, std::int64_t out,
                       std::int64_t kernel, std::int64_t stride, std::int64_t groups) {
  x = b.conv2d(prefix + ".0", x,
               Conv2dSpec{out, kernel, stride, (kernel - 1) / 2, 1, groups, false});
  x = b.batch_norm(prefix + ".1", x);
  return b.activation(prefix + ".2", x, OpKind::Relu6);
}

// InvertedResidual: optional 1x1 expansion, 3x3 depthwise, 1x1 linear projection + BN;
// the residual add when the block keeps stride 1 and the channel count.
InputRef inverted_residual(NetworkBuilder& b, const std::string& p, InputRef x, std::int64_t out,
                           std::int64_t stride, std::int64_t expand) {
  std::int64_t in = b.shape(x)[1];
  std::int64_t hidden = in * expand;
  int index = 0;
  InputRef y = x;
  if (expand != 1) y = conv_bn_relu6(b, fmt::format("{}conv.{}", p, index++), y, hidden, 1, 1, 1);
  y = conv_bn_relu6(b, fmt::format("{}conv.{}", p, index++), y, hidden, 3, stride, hidden);
  y = b.conv2d(fmt::format("{}conv.{}", p, index++), y, Conv2dSpec{out, 1, 1, 0, 1, 1, false});
  y = b.batch_norm(fmt::format("{}conv.{}", p, index++), y);
  return stride == 1 && in == out ? b.add(x, y) : y;
}

struct Stage {
  std::int64_t expand, channels, repeats, stride;  // t, c, n, s in the paper's Table 2
};

}  // namespace

workload::Trace make_mobilenet_v2(const NetworkOptions& o) {
  constexpr std::array<Stage, 7> stages{{
      {1, 16, 1, 1},
      {6, 24, 2, 2},
      {6, 32, 3, 2},
      {6, 64, 4, 2},
      {6, 96, 3, 1},
      {6, 160, 3, 2},
      {6, 320, 1, 1},
  }};
  NetworkBuilder b("mobilenet_v2", o.batch, o.source, "--resolution");
  InputRef x = b.input("input", {o.batch, 3, o.resolution, o.resolution}, workload::DType::Float32);
  x = conv_bn_relu6(b, "features.0", x, 32, 3, 2, 1);
  int feature = 1;
  for (const Stage& s : stages)
    for (std::int64_t i = 0; i < s.repeats; ++i)
      x = inverted_residual(b, fmt::format("features.{}.", feature++), x, s.channels,
                            i == 0 ? s.stride : 1, s.expand);
  x = conv_bn_relu6(b, fmt::format("features.{}", feature), x, 1280, 1, 1, 1);
  // forward() calls nn.functional.adaptive_avg_pool2d and torch.flatten: fx node names.
  x = b.adaptive_avg_pool2d("adaptive_avg_pool2d", x, 1, 1);
  x = b.flatten("flatten", x, 1);
  x = b.dropout("classifier.0", x, 0.2);
  return b.finish(b.linear("classifier.1", x, 1000));
}

}  // namespace fusim::networks
