// Zoo networks without a bundled capture: parameter counts published by torchvision
// (its weights tables list num_params) and by the model papers, output shapes worked out by
// hand from the conv formula out = floor((in + 2p - d(k-1) - 1)/s) + 1, and bad options.
#include <catch2/catch.hpp>
#include <string>

#include "core/error.h"
#include "networks/networks.h"

using fusim::networks::make_network;
using fusim::networks::NetworkOptions;
using fusim::workload::OpKind;
using fusim::workload::Shape;
using fusim::workload::Trace;

namespace {

NetworkOptions with(std::int64_t batch, std::int64_t resolution = 224) {
  NetworkOptions o;
  o.batch = batch;
  o.resolution = resolution;
  return o;
}

const fusim::workload::Layer& layer(const Trace& t, const std::string& name) {
  for (const auto& l : t.layers)
    if (l.name == name) return l;
  FAIL("no layer " << name);
  throw;
}

int count(const Trace& t, OpKind op) {
  int n = 0;
  for (const auto& l : t.layers) n += l.op == op;
  return n;
}

}  // namespace

TEST_CASE("resnet34 and resnet101 have torchvision's parameter counts") {
  CHECK(make_network("resnet34", with(1)).param_count() == 21797672);
  CHECK(make_network("resnet101", with(1)).param_count() == 44549160);
}

TEST_CASE("vgg11 has torchvision's parameter count and 8 convs, 5 pools, 3 linears") {
  Trace t = make_network("vgg11", with(2));
  CHECK(t.param_count() == 132863336);
  CHECK(count(t, OpKind::Conv2d) == 8);
  CHECK(count(t, OpKind::MaxPool2d) == 5);
  CHECK(count(t, OpKind::Linear) == 3);
}

TEST_CASE("resnet101 has 3+4+23+3 bottlenecks: 104 convs (4 of them downsample)") {
  // 1 stem conv + 33 blocks * 3 convs + 4 downsample convs = 104; one add per block.
  Trace t = make_network("resnet101", with(1));
  CHECK(count(t, OpKind::Conv2d) == 104);
  CHECK(count(t, OpKind::Add) == 33);
  CHECK(layer(t, "layer3.22.relu_2").output == Shape{1, 1024, 14, 14});
}

TEST_CASE("resnet50 shapes follow the resolution") {
  // 160: conv1 s2 -> 80, maxpool s2 -> 40, layer2..4 halve: 20, 10, 5.
  Trace t = make_network("resnet50", with(4, 160));
  CHECK(layer(t, "maxpool").output == Shape{4, 64, 40, 40});
  CHECK(layer(t, "layer2.0.conv2").output == Shape{4, 128, 20, 20});  // stride on the 3x3
  CHECK(layer(t, "layer2.0.conv1").output == Shape{4, 128, 40, 40});
  CHECK(layer(t, "layer4.2.relu_2").output == Shape{4, 2048, 5, 5});
  CHECK(layer(t, "fc").output == Shape{4, 1000});
  CHECK(t.inputs.back().name == "target");
  CHECK(t.inputs.back().shape == Shape{4});
}

TEST_CASE("mobilenet_v2 has 10 residual adds and depthwise convs with groups = channels") {
  // Residual blocks (stride 1, same channels): 1 + 2 + 3 + 2 + 2 of the repeats n > 1.
  Trace t = make_network("mobilenet_v2", with(1));
  CHECK(count(t, OpKind::Add) == 10);
  const auto& dw = layer(t, "features.2.conv.1.0");
  CHECK(dw.attrs.groups == 96);  // 16 channels expanded 6x
  CHECK(dw.params.at(0).shape == Shape{96, 1, 3, 3});
  CHECK(dw.output == Shape{1, 96, 56, 56});
}

TEST_CASE("gpt2-medium has 406286336 parameters and causal attention") {
  // per block 12h^2 + 13h (q,k,v,proj, 2 LNs, fc1, fc2) at h = 1024: 12596224; x24,
  // + token 50257*1024 + positions 1024*1024 + ln_f 2*1024 + untied LM head 50257*1024.
  Trace t = make_network("gpt2-medium", with(1));
  CHECK(t.param_count() == 406286336);
  const auto& attn = layer(t, "blocks.23.attn.sdpa");
  CHECK(attn.attrs.heads == 16);
  CHECK(attn.attrs.causal);
  CHECK(layer(t, "reshape").output == Shape{128, 50257});
}

TEST_CASE("transformer options override the preset") {
  NetworkOptions o;
  o.batch = 2;
  o.seq = 16;
  o.layers = 2;
  o.hidden = 128;
  o.heads = 2;
  Trace t = make_network("bert-base", o);
  // 2 blocks * (12*128^2 + 13*128) + 30522*128 + 512*128 + 2*128 (emb LN)
  // + head 128*128+128 + 2*128 + 128*30522+30522
  CHECK(t.param_count() == 2 * 198272 + 3906816 + 65536 + 256 + 16512 + 256 + 3937338);
  CHECK(layer(t, "reshape").output == Shape{32, 30522});
  CHECK(layer(t, "blocks.1.mlp.fc1").output == Shape{2, 16, 512});
}

TEST_CASE("mlp options set depth and width") {
  NetworkOptions o;
  o.batch = 8;
  o.layers = 3;
  o.hidden = 100;
  Trace t = make_network("mlp", o);
  CHECK(t.layers.size() == 3 * 2 + 1 + 1);  // (fc, relu) x3, fc4, loss
  CHECK(t.param_count() == 784 * 100 + 100 + 2 * (100 * 100 + 100) + 100 * 10 + 10);
  CHECK(layer(t, "fc4").output == Shape{8, 10});
}

TEST_CASE("bad zoo options are input errors naming the option") {
  CHECK_THROWS_WITH(make_network("resnet42", with(1)),
                    Catch::Contains("NETWORK: expected one of mlp, resnet18") &&
                        Catch::Contains("got 'resnet42'"));
  CHECK_THROWS_WITH(make_network("resnet18", with(0)),
                    Catch::Contains("--batch: expected a positive integer, got 0"));
  // vgg16 at 16 px: four 2x2 pools leave 1 pixel for the fifth (features.30).
  CHECK_THROWS_WITH(
      make_network("vgg16", with(1, 16)),
      Catch::Contains("--resolution: too small for vgg16") && Catch::Contains("'features.30'"));
  NetworkOptions heads;
  heads.hidden = 100;
  heads.heads = 12;
  CHECK_THROWS_WITH(make_network("gpt2-small", heads),
                    Catch::Contains("--hidden: expected a multiple of --heads (12), got 100"));
  NetworkOptions seq;
  seq.seq = 513;
  CHECK_THROWS_WITH(make_network("bert-base", seq), Catch::Contains("--seq: expected at most 512"));
  CHECK_NOTHROW(make_network("gpt2-small", seq));  // GPT-2 has 1024 positions
}
