// The grid of calibrate's op-family probes (family_probe.h): the shapes, each a small trace
// (layer norm, the probed layer, a linear head, the loss), scheduled eager.
#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "backend/family_probe.h"
#include "backend/optimizer_config.h"
#include "backend/probe_trace.h"
#include "compute/op_cost_model.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::backend {
namespace {
using nlohmann::json;

// One probed layer: its op, attrs, extra inputs (beyond the relu's output) and params.
struct Probe {
  std::string what;      // for progress lines
  json input_shape;      // of the model input (and of the layer norm before the layer)
  json layer;            // "op", "attrs", "output", "params", optional "buffers"; inputs set here
  int layer_inputs = 1;  // how many times the relu's output feeds it (add: 2, attention: 3)
  // Which of those inputs is the layer norm's output with its last two dims swapped (a
  // permute view before the probed layer: bmm's q k^T), -1: none.
  int transposed = -1;
  std::string optimizer = "sgd", impl = "foreach";
  bool update = false;  // measure the layer's U (else its F, Bx, Bw)
  bool loss = false;    // the layer feeds cross_entropy directly: measure the loss (L)
};

// The probed layer's id (and index: the trace's layers are in id order).
int probed_id(const Probe& p) {
  return p.transposed >= 0 ? 2 : 1;
}

json tensor(const std::string& name, json shape) {
  return probe_tensor(name, std::move(shape));
}

workload::Trace parse(const Probe& p, const json& layers);

// layer_norm -> probed layer -> flatten -> linear(4) -> cross_entropy, as trace JSON (loss
// probes: layer_norm -> linear -> cross_entropy).
workload::Trace probe_trace(const Probe& p) {
  const std::int64_t n = p.input_shape.at(0).get<std::int64_t>();
  json out = p.layer.at("output");
  std::int64_t features = 1;
  for (std::size_t d = 1; d < out.size(); ++d) features *= out[d].get<std::int64_t>();
  const int id = probed_id(p);
  json layer = p.layer;
  layer["id"] = id;
  layer["name"] = "probe";
  layer["inputs"] = json::array();
  for (int k = 0; k < p.layer_inputs; ++k) layer["inputs"].push_back(k == p.transposed ? 1 : 0);
  // A trained layer norm first: its backward makes the probed layer's input need a
  // gradient, so that the probe has a Bx op.
  const std::int64_t last_dim = p.input_shape.back().get<std::int64_t>();
  json layers = json::array();
  layers.push_back(
      {{"id", 0},
       {"name", "pre"},
       {"op", "layer_norm"},
       {"attrs", {{"normalized_shape", {last_dim}}}},
       {"inputs", {"input"}},
       {"output", p.input_shape},
       {"params", {tensor("pre.weight", {last_dim}), tensor("pre.bias", {last_dim})}}});
  if (p.transposed >= 0) {
    json dims = json::array(), shape = p.input_shape;
    for (std::size_t d = 0; d < shape.size(); ++d) dims.push_back(d);
    std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    layers.push_back({{"id", 1},
                      {"name", "pre_t"},
                      {"op", "permute"},
                      {"attrs", {{"dims", dims}}},
                      {"inputs", {0}},
                      {"output", shape}});
  }
  layers.push_back(layer);
  int last = id;
  if (p.loss) {
    layers.push_back({{"id", 4},
                      {"name", "loss"},
                      {"op", "cross_entropy"},
                      {"inputs", {1, "target"}},
                      {"output", json::array()}});
    return parse(p, layers);
  }
  if (out.size() > 2) {
    layers.push_back({{"id", id + 1},
                      {"name", "flat"},
                      {"op", "flatten"},
                      {"inputs", {id}},
                      {"output", {n, features}}});
    last = id + 1;
  }
  append_head_and_loss(layers, id + 2, last, n, features);
  return parse(p, layers);
}

workload::Trace parse(const Probe& p, const json& layers) {
  return parse_probe_trace(p.input_shape, layers, "calibrate-probe", "calibrate probe " + p.what);
}

std::int64_t conv_out(std::int64_t h, int k, int s, int pad) {
  return (h + 2 * pad - (k - 1) - 1) / s + 1;
}

std::vector<Probe> probes() {
  std::vector<Probe> v;
  // linear: rows x in x out (MLPs, classifier heads, transformer projections and MLPs).
  for (std::int64_t m : {8, 64, 512})
    for (auto [k, nout] :
         std::vector<std::pair<int, int>>{{64, 64}, {256, 512}, {1024, 1024}, {768, 3072}})
      v.push_back(
          {fmt::format("linear {}x{}x{}", m, k, nout),
           {m, k},
           {{"op", "linear"},
            {"attrs", {{"bias", true}}},
            {"output", {m, nout}},
            {"params", {tensor("probe.weight", {nout, k}), tensor("probe.bias", {nout})}}}});
  // conv2d, batch 8: stems, 3x3 of every ResNet/VGG stage, strided 3x3, 1x1 bottlenecks;
  // then depthwise (MobileNet) 3x3.
  struct Conv {
    int cin, cout, hw, k, s, groups;
  };
  const std::vector<Conv> convs{
      {3, 64, 64, 7, 2, 1},
      {16, 16, 32, 3, 1, 1},
      {32, 32, 32, 3, 1, 1},
      {64, 64, 16, 3, 1, 1},
      {64, 128, 16, 3, 2, 1},
      {128, 128, 8, 3, 1, 1},
      {256, 256, 4, 3, 1, 1},
      {512, 512, 2, 3, 1, 1},
      {64, 256, 16, 1, 1, 1},
      {256, 64, 16, 1, 1, 1},
      // Stage transitions: strided 3x3 and the strided 1x1 of ResNet's downsample branches
      // (resnet18 at 64x64 ran them at 0.66-0.76 of the stride-1 fit's time here).
      {128, 256, 8, 3, 2, 1},
      {256, 512, 4, 3, 2, 1},
      {64, 128, 16, 1, 2, 1},
      {256, 512, 4, 1, 2, 1},
      {32, 32, 32, 3, 1, 32},
      {96, 96, 16, 3, 2, 96},
      {144, 144, 8, 3, 1, 144},
      {384, 384, 4, 3, 1, 384},
      // EfficientNet/MnasNet's 5x5 depthwise (strided too) up to 1152 channels, 3x3
      // depthwise on a 2x2 map (MobileNetV2's last stages at 64x64: ~1 us per channel per
      // op on a 2-core EPYC VM, 6x the rate of 4x4 maps), and grouped 3x3 of RegNet's group
      // width (8 and 16 channels per group).
      {16, 16, 64, 3, 1, 16},
      {240, 240, 8, 5, 1, 240},
      {672, 672, 4, 5, 2, 672},
      {1152, 1152, 2, 5, 1, 1152},
      {960, 960, 2, 3, 1, 960},
      // oneDNN's reference path for depthwise Bw (compute/op_cost_model.cpp
      // depthwise_bw_reference): fewer channels of 2x2 and a strided 5x5 on a larger map,
      // so that its own family's per-channel and per-element terms are both seen; and a
      // small 3x3 depthwise map the JIT kernel takes (the fixed cost of late stages at 64x64).
      {128, 128, 2, 3, 1, 128},
      {144, 144, 16, 5, 2, 144},
      {32, 32, 4, 3, 1, 32},
      // ConvNeXt's 7x7 depthwise (the reference Bw path: k > 3), early and late stages at
      // 64x64 inputs: without them that path's fit, made of 3x3 and 5x5 points, gave
      // ConvNeXt-T's 7x7 Bw ops 1.6-2.9x their time.
      {96, 96, 16, 7, 1, 96},
      {384, 384, 4, 7, 1, 384},
      {64, 64, 16, 3, 1, 8},
      {128, 128, 8, 3, 2, 8}};
  for (const auto& c : convs) {
    const int pad = c.k / 2;
    const auto ho = conv_out(c.hw, c.k, c.s, pad);
    v.push_back({fmt::format("conv2d {}->{} {}x{} k{} s{}{}", c.cin, c.cout, c.hw, c.hw, c.k, c.s,
                             c.groups == c.cin ? " depthwise"
                             : c.groups > 1    ? fmt::format(" groups {}", c.groups)
                                               : ""),
                 {8, c.cin, c.hw, c.hw},
                 {{"op", "conv2d"},
                  {"attrs",
                   {{"kernel", {c.k, c.k}},
                    {"stride", {c.s, c.s}},
                    {"padding", {pad, pad}},
                    {"groups", c.groups}}},
                  {"output", {8, c.cout, ho, ho}},
                  {"params", {tensor("probe.weight", {c.cout, c.cin / c.groups, c.k, c.k})}}}});
  }
  // Norms, pooling, elementwise, softmax, attention.
  // Batch norm at equal elements and at many channels of few pixels (the per-channel loops
  // of late EfficientNet/MobileNet stages: op_cost_model.h), and planes whose size is not a
  // whole number of vectors (OpShape::ragged_planes: 2x2, 7x7 and 14x14, as at 224x224
  // inputs' last stages, beside 4x4, 8x8 and 16x16 that are).
  for (auto [c, hw] : std::vector<std::pair<int, int>>{{16, 32},
                                                       {64, 16},
                                                       {256, 8},
                                                       {512, 2},
                                                       {32, 64},
                                                       {96, 16},
                                                       {576, 4},
                                                       {1152, 2},
                                                       {256, 7},
                                                       {64, 14},
                                                       {384, 3},
                                                       // small maps of few channels (late
                                                       // stages at 64x64 inputs): the
                                                       // per-op floor
                                                       {32, 8},
                                                       {128, 4}})
    v.push_back({fmt::format("batch_norm {}x{}x{}", c, hw, hw),
                 {8, c, hw, hw},
                 {{"op", "batch_norm"},
                  {"output", {8, c, hw, hw}},
                  {"params", {tensor("probe.weight", {c}), tensor("probe.bias", {c})}},
                  {"buffers",
                   {{{"name", "probe.running_mean"}, {"shape", {c}}, {"requires_grad", false}},
                    {{"name", "probe.running_var"}, {"shape", {c}}, {"requires_grad", false}}}}}});
  // Layer norm's rows (its per-row term), up to Swin-T's first stage at 64x64 inputs (2048
  // rows of 96) and rows shorter than that.
  for (auto [rows, d] :
       std::vector<std::pair<int, int>>{{64, 64}, {512, 256}, {1024, 768}, {2048, 96}, {8192, 32}})
    v.push_back({fmt::format("layer_norm {}x{}", rows, d),
                 {rows, d},
                 {{"op", "layer_norm"},
                  {"attrs", {{"normalized_shape", {d}}}},
                  {"output", {rows, d}},
                  {"params", {tensor("probe.weight", {d}), tensor("probe.bias", {d})}}}});
  for (auto [c, hw] : std::vector<std::pair<int, int>>{{16, 64}, {64, 32}, {128, 8}}) {
    v.push_back({fmt::format("max_pool2d {}x{}x{}", c, hw, hw),
                 {8, c, hw, hw},
                 {{"op", "max_pool2d"},
                  {"attrs", {{"kernel", {3, 3}}, {"stride", {2, 2}}, {"padding", {1, 1}}}},
                  {"output", {8, c, conv_out(hw, 3, 2, 1), conv_out(hw, 3, 2, 1)}}}});
    v.push_back({fmt::format("avg_pool2d {}x{}x{}", c, hw, hw),
                 {8, c, hw, hw},
                 {{"op", "avg_pool2d"},
                  {"attrs", {{"kernel", {2, 2}}}},
                  {"output", {8, c, hw / 2, hw / 2}}}});
    v.push_back({fmt::format("adaptive_avg_pool2d {}x{}x{}", c, hw, hw),
                 {8, c, hw, hw},
                 {{"op", "adaptive_avg_pool2d"},
                  {"attrs", {{"output_size", {1, 1}}}},
                  {"output", {8, c, 1, 1}}}});
  }
  // Adaptive average pooling over many small planes (squeeze-and-excitation blocks: one
  // mean per N x C plane, its per-plane term).
  for (auto [c, hw] : std::vector<std::pair<int, int>>{{576, 4}, {960, 2}})
    v.push_back({fmt::format("adaptive_avg_pool2d {}x{}x{}", c, hw, hw),
                 {8, c, hw, hw},
                 {{"op", "adaptive_avg_pool2d"},
                  {"attrs", {{"output_size", {1, 1}}}},
                  {"output", {8, c, 1, 1}}}});
  // Softmax over short rows (attention scores: Swin's windows of 49, ViT's 197 tokens),
  // beside the long rows below: its per-row term.
  for (auto [rows, cols] :
       std::vector<std::pair<int, int>>{{1024, 49}, {4096, 49}, {2048, 128}, {512, 197}})
    v.push_back({fmt::format("softmax {}x{}", rows, cols),
                 {rows, cols},
                 {{"op", "softmax"}, {"attrs", {{"dim", -1}}}, {"output", {rows, cols}}}});
  for (std::int64_t e : {4096, 65536, 1048576}) {
    const json shape{8, e / 8};
    for (const char* op : {"relu", "gelu", "dropout", "silu", "sigmoid", "relu6", "tanh"}) {
      json layer{{"op", op}, {"output", shape}};
      if (std::string(op) == "dropout") layer["attrs"] = {{"p", 0.1}};
      v.push_back({fmt::format("{} {}", op, e), shape, layer});
    }
    for (const char* op : {"add", "mul"}) {
      Probe two{fmt::format("{} {}", op, e), shape, {{"op", op}, {"output", shape}}};
      two.layer_inputs = 2;
      v.push_back(two);
    }
    // Ops without arithmetic: their work is the elements they move (op_cost_model.h).
    Probe cat{fmt::format("concat {}", e),
              shape,
              {{"op", "concat"}, {"attrs", {{"dim", 1}}}, {"output", {8, e / 4}}}};
    cat.layer_inputs = 2;
    v.push_back(cat);
    // ATen ops the captures record without a dedicated kind: the backend runs a stand-in
    // of the same traffic (backend/layer_ops.cpp generic_forward), measured as such.
    v.push_back({fmt::format("generic_elementwise {}", e),
                 shape,
                 {{"op", "generic_elementwise"},
                  {"attrs", {{"aten", "aten.hardswish.default"}, {"flops_per_element", 4}}},
                  {"output", shape}}});
    v.push_back({fmt::format("generic_data_movement {}", e),
                 shape,
                 {{"op", "generic_data_movement"},
                  {"attrs", {{"aten", "aten.clone.default"}}},
                  {"output", shape}}});
    v.push_back({fmt::format("softmax {}", e),
                 shape,
                 {{"op", "softmax"}, {"attrs", {{"dim", -1}}}, {"output", shape}}});
  }
  // Views (no kernel; the layer execution's call and autograd boundary around them).
  for (std::int64_t e : {4096, 262144}) {
    v.push_back({fmt::format("reshape {}", e),
                 {8, 16, e / 128},
                 {{"op", "reshape"}, {"output", {8, e / 8}}}});
    v.push_back(
        {fmt::format("permute {}", e),
         {8, 16, e / 128},
         {{"op", "permute"}, {"attrs", {{"dims", {0, 2, 1}}}}, {"output", {8, e / 128, 16}}}});
  }
  for (auto [n, l, e, h] :
       std::vector<std::array<int, 4>>{{1, 128, 768, 12}, {4, 64, 256, 4}, {2, 256, 512, 8}}) {
    Probe p{
        fmt::format("attention {}x{}x{} h{}", n, l, e, h),
        {n, l, e},
        {{"op", "scaled_dot_product_attention"}, {"attrs", {{"heads", h}}}, {"output", {n, l, e}}}};
    p.layer_inputs = 3;
    v.push_back(p);
  }
  // bmm: batched products of small matrices, as hand-written attention runs them (Swin's
  // window attention at 64x64 inputs: 216 matrices of 49 x 32 by 32 x 49, then 49 x 49 by
  // 49 x 32). x [B, L, d] from the layer norm times its transpose: q k^T ([B, L, L], a
  // contraction over d), or x^T x ([B, d, d], over L: the shape of attention's dv = P^T dO).
  // Without a family of their own they took the class efficiency of large GEMMs, and a
  // Swin-T step's bmm ops were predicted at 0.27-0.32 of their time (2-core EPYC VM).
  for (auto [b, l, d, scores] : std::vector<std::array<int, 4>>{{96, 49, 32, 1},
                                                                {48, 64, 64, 1},
                                                                {24, 128, 64, 1},
                                                                {8, 256, 64, 1},
                                                                {96, 49, 32, 0},
                                                                {24, 128, 64, 0}}) {
    Probe p{fmt::format("bmm {}x{}x{}{}", b, l, d, scores ? "" : " transposed first"),
            {b, l, d},
            {{"op", "bmm"}, {"output", scores ? json{b, l, l} : json{b, d, d}}}};
    p.layer_inputs = 2;
    p.transposed = scores ? 1 : 0;
    v.push_back(p);
  }
  // cross_entropy: the head's loss at several class counts (a linear before it), ImageNet's
  // 1000 classes also at batch 8 and 32: on a 2-core EPYC VM torchvision models at batch 8
  // measured their loss at 170-280 us, where a fit through 8 x 10 (45 us) and 64 x 1000
  // (230 us) gave 30-60 us.
  for (auto [m, classes] : std::vector<std::pair<int, int>>{
           {8, 10}, {8, 1000}, {32, 1000}, {64, 1000}, {512, 1000}, {256, 8192}}) {
    Probe p{fmt::format("cross_entropy {}x{}", m, classes),
            {m, 64},
            {{"op", "linear"},
             {"output", {m, classes}},
             {"params", {tensor("probe.weight", {classes, 64})}}}};
    p.loss = true;
    v.push_back(p);
  }
  // Updates: every optimizer x implementation at 4 parameter counts (one linear layer).
  for (const auto& opt : optimizer_names())
    for (const char* impl : {"loop", "foreach", "fused"})
      for (int d : {32, 256, 1024, 1536}) {
        Probe p{fmt::format("update {} {} {}x{}", opt, impl, d, d),
                {8, d},
                {{"op", "linear"},
                 {"attrs", {{"bias", true}}},
                 {"output", {8, d}},
                 {"params", {tensor("probe.weight", {d, d}), tensor("probe.bias", {d})}}}};
        p.optimizer = opt;
        p.impl = impl;
        p.update = true;
        v.push_back(p);
      }
  return v;
}

}  // namespace

std::vector<FamilyProbe> family_probes() {
  std::vector<FamilyProbe> out;
  for (const auto& p : probes()) {
    FamilyProbe f;
    f.what = p.what;
    f.optimizer = p.optimizer;
    f.trace = probe_trace(p);
    schedule::ScheduleRequest request;
    request.optimizer = p.optimizer;
    request.impl = schedule::parse_impl_option(p.impl);
    request.steps = 2;
    f.schedules = schedule::build_schedules(f.trace, {schedule::Ordering::Eager}, request);
    const int probed = p.loss ? int(f.trace.layers.size()) - 1 : probed_id(p);  // loss last
    for (const auto& op : f.schedules[0].ops) {
      if (op.step != 1 || op.layer != probed) continue;
      const bool update = op.kind == schedule::OpKind::Update;
      const std::string family = compute::op_family(f.trace, f.schedules[0], op);
      if (!family.empty() && (p.loss ? op.kind == schedule::OpKind::Loss : p.update == update))
        f.families.push_back(family);
    }
    f.probed_layer = probed;
    f.update = p.update;
    f.loss = p.loss;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fusim::backend
