#include "compute/op_cost_model.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "compute/access_program.h"
#include "compute/compute_config.h"
#include "compute/op_cost_terms.h"
#include "workload/cost.h"
#include "workload/shape_rules.h"

namespace fusim::compute {
namespace {
using schedule::OpKind;

double saturation(double d, double half) {
  return half > 0 ? d / (d + half) : 1.0;
}

// Whether oneDNN's JIT depthwise backward-weights kernel takes a depthwise convolution's Bw:
// jit_uni_dw_conv_bwd_weights_kernel::init_conf (oneDNN 2.x, which libtorch's mkldnn
// convolution dispatches x86 float convolutions to) refuses kernels wider than 3, strides
// wider than the kernel, padding beyond (k - 1 + 1) / 2 and inputs lower than the kernel
// plus (-padding mod stride) ("input must fully accommodate the filter"). Those Bw ops run a
// GEMM-based reference path, one small GEMM per channel: on a 2-core EPYC VM 2.4-2.8 us per
// channel at batch 8 (960 channels of 2x2, 3x3: 2.3 ms; 1152 of 2x2, 5x5: 3.3 ms) against
// ~0.1 us per channel for the JIT kernel (384 channels of 4x4, 3x3: 98 us).
bool depthwise_bw_reference(const workload::Trace& trace, const workload::Layer& layer) {
  const auto& a = layer.attrs;
  const auto& x = workload::input_shape(trace, layer.inputs.at(0));
  if (x.size() != 4 || a.groups != x[1] || layer.output.size() != 4 || layer.output[1] != a.groups)
    return false;  // grouped, or a channel multiplier: not the depthwise kernel's
  auto at = [](const std::vector<std::int64_t>& v, std::size_t i, std::int64_t d) {
    return v.size() > i ? v[i] : v.empty() ? d : v.front();
  };
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t k = at(a.kernel, i, 1), s = at(a.stride, i, 1), p = at(a.padding, i, 0);
    if (k > 3 || s > k || p > k / 2 || at(a.dilation, i, 1) != 1) return true;
    const std::int64_t min_in = k + ((-p % s) + s) % s;
    if (x[2 + i] < min_in) return true;
  }
  return false;
}

// The independent reductions of a softmax (rows along its dim), a layer norm (rows of its
// normalized shape) or an adaptive average pool (N x C planes), 0 where the shape says
// nothing (OpShape::channels).
std::int64_t reduction_rows(const workload::Trace& trace, const workload::Layer& layer) {
  const auto& x = workload::input_shape(trace, layer.inputs.at(0));
  const std::int64_t n = workload::numel(x);
  if (layer.op == workload::OpKind::Softmax) {
    const auto d = workload::normalize_dim(layer.attrs.dim, x.size());
    return d && std::size_t(*d) < x.size() && x[std::size_t(*d)] > 0 ? n / x[std::size_t(*d)] : 0;
  }
  if (layer.op == workload::OpKind::LayerNorm) {
    const std::int64_t row = workload::numel(layer.attrs.normalized_shape);
    return row > 0 ? n / row : 0;
  }
  return x.size() == 4 ? x[0] * x[1] : 0;  // adaptive_avg_pool2d
}

bool gemm_like(workload::OpKind op) {
  using K = workload::OpKind;
  return op == K::Linear || op == K::Conv2d || op == K::Matmul || op == K::Bmm ||
         op == K::ScaledDotProductAttention;
}
}  // namespace

double FamilyCost::shape_efficiency(const OpShape& s) const {
  if (s.gemm)
    return efficiency * saturation(double(std::max<std::int64_t>(1, s.m)), half_m) *
           saturation(double(std::max<std::int64_t>(1, s.n)), half_n) *
           saturation(double(std::max<std::int64_t>(1, s.k)), half_k);
  return efficiency * saturation(double(std::max<std::int64_t>(1, s.elements)), half_elements);
}

double FamilyCost::local_correction(const OpShape& s, int kernels, int skip) const {
  if (anchors.empty() || !(anchor_reach > 1)) return 1;
  auto ln1 = [](double x) { return std::log1p(std::max(0.0, x)); };
  const double sigma = std::log(anchor_reach), prior = 0.05;
  double weights = prior, sum = 0;
  for (std::size_t i = 0; i < anchors.size(); ++i) {
    if (int(i) == skip) continue;
    const auto& a = anchors[i];
    double d2 = 0;
    for (auto [x, y] : {std::pair<double, double>{double(s.m), double(a.shape.m)},
                        {double(s.n), double(a.shape.n)},
                        {double(s.k), double(a.shape.k)},
                        {double(s.elements), double(a.shape.elements)},
                        {double(s.channels), double(a.shape.channels)},
                        {double(kernels), double(a.kernels)}}) {
      const double d = ln1(x) - ln1(y);
      d2 += d * d;
    }
    const double w = std::exp(-d2 / (2 * sigma * sigma));
    weights += w;
    sum += w * std::log(a.ratio);
  }
  return std::exp(sum / weights);
}

const FamilyCost* OpCostModel::find(const std::string& family) const {
  auto it = families.find(family);
  return it == families.end() ? nullptr : &it->second;
}

std::string op_family(const workload::Trace& trace, const schedule::Schedule& schedule,
                      const schedule::Op& op) {
  if (op.kernels == 0) {
    // A view runs no kernel, but the layer execution still calls it through an autograd
    // boundary (backend/training_state.cpp); a parameter layer's ops are not calls at all.
    const bool view = op.kind != OpKind::Update && op.layer >= 0 &&
                      trace.layers.at(std::size_t(op.layer)).op != workload::OpKind::Parameter;
    return view ? fmt::format("view.{}", schedule::to_string(op.kind)) : "";
  }
  if (op.kind == OpKind::Update)
    return fmt::format("update.{}.{}", schedule.optimizer, schedule::to_string(schedule.impl));
  std::string name(workload::to_string(op.layer_op));
  if (op.layer >= 0 && op.layer_op == workload::OpKind::Conv2d &&
      trace.layers.at(std::size_t(op.layer)).attrs.groups > 1) {
    const auto& layer = trace.layers.at(std::size_t(op.layer));
    name = op.kind == OpKind::BackwardWeight && depthwise_bw_reference(trace, layer)
               ? "conv2d_dw_ref"
               : "conv2d_grouped";
  }
  return fmt::format("{}.{}", name, schedule::to_string(op.kind));
}

std::string parent_family(const std::string& family) {
  if (family == "conv2d_dw_ref.Bw") return "conv2d_grouped.Bw";
  // torch.matmul of batched operands runs bmm (aten/src/ATen/native/LinearAlgebra.cpp,
  // _matmul_impl): calibrate probes bmm alone.
  if (family.rfind("matmul.", 0) == 0) return "bmm." + family.substr(7);
  return "";
}

OpShape op_shape(const workload::Trace& trace, const schedule::Schedule& schedule,
                 const schedule::Op& op) {
  OpShape s;
  // Elements of the largest tensor the op touches (for updates: of the whole group, which
  // is what a foreach or fused kernel walks).
  std::int64_t largest = 0, update_total = 0;
  const int elem = workload::dtype_bytes(trace.dtype);
  for (const auto& pass : op.passes)
    for (const auto& a : pass.accesses)
      largest = std::max(largest, schedule.tensors.at(std::size_t(a.tensor)).bytes);
  if (op.kind == OpKind::Update && op.layer >= 0) {
    const auto& layer = trace.layers.at(std::size_t(op.layer));
    for (const auto& p : layer.params)
      if (p.requires_grad) update_total += workload::numel(p.shape);
    s.elements = update_total;
    return s;
  }
  s.elements = largest / std::max(1, elem);
  if (op.layer < 0) return s;
  const auto& layer = trace.layers.at(std::size_t(op.layer));
  if (layer.op == workload::OpKind::BatchNorm) {
    const auto& x = workload::input_shape(trace, layer.inputs.at(0));
    s.channels = x.size() > 1 ? x[1] : 1;
    std::int64_t plane = 1;
    for (std::size_t d = 2; d < x.size(); ++d) plane *= x[d];
    if (x.size() > 2 && plane > 1 && plane % kVectorFloats != 0)
      s.ragged_planes = x[0] * s.channels;
  }
  if (layer.op == workload::OpKind::Conv2d && layer.attrs.groups > 1)
    s.channels = layer.attrs.groups;
  if (layer.op == workload::OpKind::Softmax || layer.op == workload::OpKind::LayerNorm ||
      layer.op == workload::OpKind::AdaptiveAvgPool2d)
    s.channels = reduction_rows(trace, layer);
  if (!gemm_like(op.layer_op)) return s;
  s.gemm = true;
  if (op.layer_op == workload::OpKind::Linear || op.layer_op == workload::OpKind::Conv2d) {
    const GemmDims d = gemm_dims(trace, layer);
    // The GEMM each kind computes (access_program.h): F y = x W^T, Bx dx = dy W,
    // Bw dW = dy^T x.
    if (op.kind == OpKind::BackwardInput) {
      s.m = d.rows_in, s.n = d.cin_g, s.k = d.kc / std::max<std::int64_t>(1, d.cin_g) * d.cout_g;
    } else if (op.kind == OpKind::BackwardWeight) {
      s.m = d.cout_g, s.n = d.kc, s.k = d.rows_out;
    } else {
      s.m = d.rows_out, s.n = d.cout_g, s.k = d.kc;
    }
    return s;
  }
  if (op.layer_op == workload::OpKind::ScaledDotProductAttention) {
    // Per head: scores [L x S] = q [L x d] k^T; the batch and heads multiply the rows.
    const auto& q = workload::input_shape(trace, layer.inputs.at(0));
    const auto& k = workload::input_shape(trace, layer.inputs.at(1));
    const std::int64_t heads = std::max<std::int64_t>(1, layer.attrs.heads);
    s.m = q.at(0) * heads * q.at(1), s.n = k.at(1), s.k = q.at(2) / heads;
    return s;
  }
  const auto d = workload::matmul_dims(workload::input_shape(trace, layer.inputs.at(0)),
                                       workload::input_shape(trace, layer.inputs.at(1)));
  if (d) s.m = d->batch * d->n, s.n = d->m, s.k = d->k;
  return s;
}

OpCost family_cost(const FamilyCost& f, double peak, std::int64_t work, int kernels,
                   const OpShape& shape) {
  OpCost c;
  const double local = f.local_correction(shape, kernels);
  c.serial = ns(local * (f.fixed_ns + f.per_kernel_ns * kernels));
  double compute_ps = f.per_channel_ns * 1e3 * double(shape.channels) +
                      f.per_ragged_plane_ns * 1e3 * double(shape.ragged_planes);
  if (work > 0 && peak > 0) compute_ps += double(work) / (peak * f.shape_efficiency(shape)) * 1e12;
  c.compute = static_cast<Tick>(local * compute_ps + 0.5);
  return c;
}

Tick switch_cost(const OpCostModel& model, const schedule::Schedule& schedule,
                 const schedule::Op& op) {
  if (model.families.empty()) return 0;
  const bool update = op.kind == OpKind::Update;
  // Most specific first: an update's own optimizer and layer op ("switch.U.sgd.conv2d"),
  // its optimizer's ("switch.U.sgd"), its layer op's ("switch.U.conv2d": calibrate's CNN
  // probe, backend/switch_probe.h), else the general one.
  const std::string name = update ? "switch.U" : "switch.after_U";
  const std::string layer_op(workload::to_string(op.layer_op));
  const FamilyCost* f = nullptr;
  if (update) f = model.find(name + "." + schedule.optimizer + "." + layer_op);
  if (!f) f = model.find(name + "." + schedule.optimizer);
  if (!f && update) f = model.find(name + "." + layer_op);
  if (!f) f = model.find(name);
  if (!f) return 0;
  for (int j = op.id - 1; j >= 0; --j) {
    const auto& prev = schedule.ops[static_cast<std::size_t>(j)];
    if (prev.stream != op.stream) continue;
    if ((prev.kind == OpKind::Update) == update) return 0;
    const double mib = double(touched_bytes(schedule, update ? op : prev)) / double(1 << 20);
    // The per-MiB part was measured on updates right after the backward op that wrote
    // their gradient (calibrate's backward-fused probes): an update after another layer's
    // op (forward-fused: the forward before it) pays the fixed part alone.
    const bool own = prev.layer == op.layer;
    return ns(f->fixed_ns + (own || !update ? f->per_mib_ns * mib : 0.0));
  }
  return 0;
}

std::int64_t touched_bytes(const schedule::Schedule& schedule, const schedule::Op& op) {
  std::vector<int> seen;
  std::int64_t bytes = 0;
  for (const auto& pass : op.passes)
    for (const auto& a : pass.accesses) {
      if (std::find(seen.begin(), seen.end(), a.tensor) != seen.end()) continue;
      seen.push_back(a.tensor);
      bytes += schedule.tensors[static_cast<std::size_t>(a.tensor)].bytes;
    }
  return bytes;
}

std::string default_family(const schedule::Op& op) {
  return fmt::format("default.{}", schedule::to_string(op.kind));
}

std::int64_t cost_flops(const schedule::Op& op) {
  std::int64_t flops = 0;
  for (const auto& p : op.passes) flops += p.flops;
  return flops > 0 ? flops : op.flops;
}

std::int64_t cost_work(const schedule::Op& op, const OpShape& shape) {
  const std::int64_t flops = cost_flops(op);
  return flops > 0 || op.kind == OpKind::Update ? flops : shape.elements;
}

double cost_peak(const ComputeConfig& compute, const workload::Trace& trace, const schedule::Op& op,
                 int units) {
  const OpClass op_class = op.kind == OpKind::Update ? OpClass::Elementwise
                           : op.kind == OpKind::Loss ? OpClass::Reduction
                                                     : classify(op.layer_op);
  return compute.peak_flops_per_second(op_class, trace.dtype, units);
}

std::optional<OpCost> calibrated_cost(const ComputeConfig& compute, const workload::Trace& trace,
                                      const schedule::Schedule& schedule, const schedule::Op& op,
                                      int units) {
  if (compute.op_costs.families.empty()) return std::nullopt;
  const std::string family = op_family(trace, schedule, op);
  if (family.empty()) return std::nullopt;
  const FamilyCost* f = compute.op_costs.find(family);
  // A machine file from before a family was split off takes the family it was part of.
  if (!f && !parent_family(family).empty()) f = compute.op_costs.find(parent_family(family));
  if (f) {
    const OpShape shape = op_shape(trace, schedule, op);
    return family_cost(*f, cost_peak(compute, trace, op, units), cost_work(op, shape), op.kernels,
                       shape);
  }
  // Views have no work to fall back on; any other op takes its kind's per-op cost.
  if (op.kernels == 0 || op.kind == OpKind::Update) return std::nullopt;
  const FamilyCost* d = compute.op_costs.find(default_family(op));
  if (!d) return std::nullopt;
  OpCost c;
  c.serial = ns(d->fixed_ns);
  c.has_compute = false;
  return c;
}

OpCostModel parse_op_cost_model(const JsonView& v) {
  v.require_object();
  OpCostModel m;
  for (const auto& key : v.keys()) {
    JsonView f = v.at(key);
    f.require_object();
    f.reject_unknown_keys({"fixed_ns", "per_kernel_ns", "per_channel_ns", "efficiency", "half_m",
                           "half_n", "half_k", "half_elements", "fit_error_pct", "points",
                           "dropped_points", "anchors", "anchor_reach", "local_error_pct",
                           "per_mib_ns", "per_ragged_plane_ns"});
    if (key.empty() || key.find('.') == std::string::npos)
      f.fail(
          "a family named <layer op>.<F|Bx|Bw|L>, update.<optimizer>.<impl>, view.<kind>, "
          "default.<kind> or switch.<U|after_U>");
    FamilyCost c;
    c.fixed_ns = f.at("fixed_ns").as_number_in(0, 1e9);
    c.per_kernel_ns = f.get_number("per_kernel_ns", 0);
    if (c.per_kernel_ns < 0) f.at("per_kernel_ns").fail_got("a time in ns >= 0");
    c.per_channel_ns = f.get_number("per_channel_ns", 0);
    if (c.per_channel_ns < 0) f.at("per_channel_ns").fail_got("a time in ns >= 0");
    c.per_ragged_plane_ns = f.get_number("per_ragged_plane_ns", 0);
    if (c.per_ragged_plane_ns < 0) f.at("per_ragged_plane_ns").fail_got("a time in ns >= 0");
    c.per_mib_ns = f.get_number("per_mib_ns", 0);
    if (!(c.per_mib_ns >= 0 && c.per_mib_ns <= 1e9))
      f.at("per_mib_ns").fail_got("a time in ns in [0, 1e9]");
    // Above 1: FLOPs are the mathematical count (workload/cost.h), and a convolution
    // algorithm may do fewer (Winograd), so the achieved rate can pass the FMA peak.
    c.efficiency = f.at("efficiency").as_number();
    if (!(c.efficiency > 0 && c.efficiency <= 2)) f.at("efficiency").fail_got("a number in (0, 2]");
    auto half = [&](std::string_view k) {
      double x = f.get_number(k, 0);
      if (x < 0) f.at(k).fail_got("a size >= 0");
      return x;
    };
    c.half_m = half("half_m");
    c.half_n = half("half_n");
    c.half_k = half("half_k");
    c.half_elements = half("half_elements");
    c.fit_error_pct = f.get_number("fit_error_pct", 0);
    c.points = static_cast<int>(f.get_int("points", 0));
    c.dropped_points = static_cast<int>(f.get_int("dropped_points", 0));
    c.local_error_pct = f.get_number("local_error_pct", 0);
    c.anchor_reach = f.get_number("anchor_reach", 1);
    if (!(c.anchor_reach >= 1 && c.anchor_reach <= 1e3))
      f.at("anchor_reach").fail_got("a factor in [1, 1000]");
    if (auto anchors = f.find("anchors")) {
      anchors->require_array();
      for (const auto& a : anchors->elements()) {
        // [m, n, k, elements, channels, kernels, ratio]
        a.require_array();
        if (a.size() != 7)
          a.fail_got("an array [m, n, k, elements, channels, kernels, ratio] of 7 numbers");
        CostAnchor x;
        x.shape.m = a[0].as_int_at_least(0);
        x.shape.n = a[1].as_int_at_least(0);
        x.shape.k = a[2].as_int_at_least(0);
        x.shape.elements = a[3].as_int_at_least(0);
        x.shape.channels = a[4].as_int_at_least(0);
        x.kernels = static_cast<int>(a[5].as_int_at_least(0));
        x.ratio = a[6].as_number();
        if (!(x.ratio > 0 && x.ratio < kMaxAnchorRatio)) a[6].fail_got("a ratio in (0, 1000)");
        c.anchors.push_back(x);
      }
    }
    m.families.emplace(key, c);
  }
  return m;
}

nlohmann::json op_cost_model_json(const OpCostModel& m) {
  nlohmann::json j = nlohmann::json::object();
  auto round = [](double v, int digits) {
    if (v == 0) return 0.0;
    const double scale = std::pow(10.0, digits - 1 - std::floor(std::log10(std::abs(v))));
    return std::round(v * scale) / scale;
  };
  for (const auto& [name, c] : m.families) {
    nlohmann::json f{{"fixed_ns", round(c.fixed_ns, 4)}, {"efficiency", round(c.efficiency, 4)}};
    if (c.per_kernel_ns > 0) f["per_kernel_ns"] = round(c.per_kernel_ns, 4);
    if (c.per_channel_ns > 0) f["per_channel_ns"] = round(c.per_channel_ns, 4);
    if (c.per_ragged_plane_ns > 0) f["per_ragged_plane_ns"] = round(c.per_ragged_plane_ns, 4);
    if (c.per_mib_ns > 0) f["per_mib_ns"] = round(c.per_mib_ns, 4);
    if (c.half_m > 0) f["half_m"] = round(c.half_m, 3);
    if (c.half_n > 0) f["half_n"] = round(c.half_n, 3);
    if (c.half_k > 0) f["half_k"] = round(c.half_k, 3);
    if (c.half_elements > 0) f["half_elements"] = round(c.half_elements, 3);
    f["fit_error_pct"] = round(c.fit_error_pct, 3);
    f["points"] = c.points;
    if (c.dropped_points > 0) f["dropped_points"] = c.dropped_points;
    if (!c.anchors.empty()) {
      f["local_error_pct"] = round(c.local_error_pct, 3);
      f["anchor_reach"] = round(c.anchor_reach, 4);
      nlohmann::json a = nlohmann::json::array();
      for (const auto& x : c.anchors)
        a.push_back({x.shape.m, x.shape.n, x.shape.k, x.shape.elements, x.shape.channels, x.kernels,
                     round(x.ratio, 4)});
      f["anchors"] = a;
    }
    j[name] = f;
  }
  return j;
}

}  // namespace fusim::compute
