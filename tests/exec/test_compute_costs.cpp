// Calibrated and profiled compute times (issue 16, points 2 and 3): the per-family fit
// recovers known coefficients, the cost model and a profile's compute times reach the
// simulated op as computed by hand, and an op measured in isolation and simulated in
// isolation gives its measured time back.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "builders/machine_builder.h"
#include "compute/access_program.h"
#include "compute/cost_fit.h"
#include "compute/op_cost_model.h"
#include "compute/op_cost_terms.h"
#include "compute/op_signature.h"
#include "core/error.h"
#include "exec/compute_solver.h"
#include "exec/profiled_compute.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using schedule::AccessMode;

namespace {
workload::Trace mlp() {
  return workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"mlp","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,4]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],"output":[2,8],
    "params":[{"name":"fc1.weight","shape":[8,4]},{"name":"fc1.bias","shape":[8]}]},
   {"id":1,"name":"act","op":"relu","attrs":{},"inputs":[0],"output":[2,8]},
   {"id":2,"name":"fc2","op":"linear","attrs":{"bias":false},"inputs":[1],"output":[2,3],
    "params":[{"name":"fc2.weight","shape":[3,8]}]},
   {"id":3,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[2,"target"],"output":[]}]})"),
                               "mlp.json");
}

// One relu F op (layer 1) reading h and writing a, 64 B each, with `flops`.
schedule::Schedule one_relu(std::int64_t flops) {
  schedule::Schedule s;
  s.steps = 1;
  for (int t = 0; t < 2; ++t) {
    schedule::Tensor x;
    x.id = t;
    x.name = t == 0 ? "h" : "a";
    x.bytes = 64;
    x.address = std::uint64_t(t) * 64;
    s.tensors.push_back(x);
  }
  schedule::Op op;
  op.kind = schedule::OpKind::Forward;
  op.layer = 1;
  op.layer_op = workload::OpKind::Relu;
  op.flops = flops;
  op.passes.push_back({{{0, AccessMode::Read}, {1, AccessMode::Write}}, flops});
  s.ops.push_back(op);
  return s;
}

exec::SimOptions no_warmup() {
  exec::SimOptions o;
  o.warmup_steps = 0;
  return o;
}

// The profile tests' case: the MLP's SGD foreach schedule of 3 steps.
// Two steps of eager Adam (the default impl).
schedule::Schedule adam_two_steps(const workload::Trace& trace) {
  schedule::ScheduleOptions so;
  so.optimizer = "adam";
  so.steps = 2;
  return schedule::build_schedule(trace, so);
}

schedule::Schedule sgd_foreach(const workload::Trace& trace) {
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.impl = schedule::OptimizerImpl::Foreach;
  so.steps = 3;
  return schedule::build_schedule(trace, so);
}

// A warm profile ("p.json") of every distinct op of `s`, measured at 3, 4, 5 ... us.
exec::OpProfile stepped_profile(const workload::Trace& trace, const schedule::Schedule& s,
                                int threads) {
  exec::OpProfile profile;
  profile.file = "p.json";
  profile.optimizer = "sgd";
  profile.impl = "foreach";
  profile.device = "cpu";
  profile.threads = threads;
  for (const auto& d : exec::distinct_ops(trace, s)) {
    exec::ProfiledOp p;
    p.signature = d.signature;
    p.kind = "F";  // what the reader requires; not used by the solver
    p.median = us(3) + us(1) * Tick(profile.ops.size());
    p.repeats = 5;
    profile.ops.push_back(p);
  }
  return profile;
}
}  // namespace

TEST_CASE("cost fit: recovers a GEMM family's fixed cost, efficiency and half sizes") {
  compute::FamilyCost truth;
  truth.fixed_ns = 5000;
  truth.efficiency = 0.6;
  truth.half_m = 64;
  truth.half_n = 32;
  const double peak = 1e11;
  std::vector<compute::CostPoint> points;
  for (std::int64_t m : {8, 32, 128, 512, 2048})
    for (std::int64_t n : {16, 64, 256, 1024})
      for (std::int64_t k : {64, 576}) {
        compute::CostPoint p;
        p.shape.gemm = true;
        p.shape.m = m, p.shape.n = n, p.shape.k = k;
        p.flops = 2 * m * n * k;
        p.time_ns = compute::model_time_ns(truth, peak, p);
        points.push_back(p);
      }
  const auto fit = compute::fit_family_cost(points, peak);
  CHECK(fit.fixed_ns == Approx(5000).epsilon(1e-3));
  CHECK(fit.efficiency == Approx(0.6).epsilon(1e-3));
  CHECK(fit.half_m == Approx(64).epsilon(1e-3));
  CHECK(fit.half_n == Approx(32).epsilon(1e-3));
  CHECK(fit.half_k == 0);
  CHECK(fit.per_kernel_ns == 0);
  CHECK(fit.points == int(points.size()));
  CHECK(fit.fit_error_pct < 0.01);
}

TEST_CASE("cost fit: recovers an update family's per-kernel cost and efficiency") {
  compute::FamilyCost truth;
  truth.fixed_ns = 2000;
  truth.per_kernel_ns = 800;
  truth.efficiency = 0.3;
  const double peak = 4e10;
  std::vector<compute::CostPoint> points;
  for (std::int64_t e : {256, 4096, 65536, 1 << 20, 1 << 23})
    for (int kernels : {3, 11, 24}) {
      compute::CostPoint p;
      p.shape.elements = e;
      p.kernels = kernels;
      p.flops = (kernels == 11 ? 12 : 4) * e;
      p.time_ns = compute::model_time_ns(truth, peak, p);
      points.push_back(p);
    }
  const auto fit = compute::fit_family_cost(points, peak, {/*per_kernel=*/true});
  CHECK(fit.fixed_ns == Approx(2000).epsilon(1e-3));
  CHECK(fit.per_kernel_ns == Approx(800).epsilon(1e-3));
  CHECK(fit.efficiency == Approx(0.3).epsilon(1e-3));
  CHECK(fit.half_elements == 0);
  CHECK(fit.fit_error_pct < 0.01);
  // With FLOPs proportional to elements, a half size is a fixed cost in disguise:
  // flops / (peak eff) x h / e = (flops / e) h / (peak eff). The fit finds the same
  // times with h = 0 (it prefers the simpler model on ties).
  truth.half_elements = 16384;
  for (auto& p : points)
    p.flops = 12 * p.shape.elements, p.time_ns = compute::model_time_ns(truth, peak, p);
  const auto same = compute::fit_family_cost(points, peak, {/*per_kernel=*/true});
  CHECK(same.half_elements == 0);
  CHECK(same.fixed_ns == Approx(2000 + 12 * 16384 / (peak * 0.3) * 1e9).epsilon(1e-3));
  CHECK(same.fit_error_pct < 0.01);
}

TEST_CASE("cost fit: recovers a per-channel cost beside the fixed cost and efficiency") {
  // Batch norm's shape: at equal elements, more channels cost more (op_cost_model.h).
  compute::FamilyCost truth;
  truth.fixed_ns = 3000;
  truth.per_channel_ns = 40;
  truth.efficiency = 0.05;
  const double peak = 2e11;
  std::vector<compute::CostPoint> points;
  for (std::int64_t c : {16, 64, 256, 1152})
    for (std::int64_t hw : {4, 64, 1024}) {
      compute::CostPoint p;
      p.shape.channels = c;
      p.shape.elements = 8 * c * hw;
      p.flops = 4 * p.shape.elements;
      p.time_ns = compute::model_time_ns(truth, peak, p);
      points.push_back(p);
    }
  // By hand, c = 1152, hw = 4: 3000 + 40 x 1152 + 4 x (8 x 1152 x 4) / (2e11 x 0.05) x 1e9
  // = 3000 + 46080 + 14745.6 = 63825.6 ns.
  CHECK(points[9].time_ns == Approx(63825.6).epsilon(1e-9));
  compute::FitTerms terms;
  terms.per_channel = true;
  const auto fit = compute::fit_family_cost(points, peak, terms);
  CHECK(fit.fixed_ns == Approx(3000).epsilon(1e-3));
  CHECK(fit.per_channel_ns == Approx(40).epsilon(1e-3));
  CHECK(fit.efficiency == Approx(0.05).epsilon(1e-3));
  CHECK(fit.per_kernel_ns == 0);
  CHECK(fit.fit_error_pct < 0.01);
  // Without the term the same points cannot be fitted: channels cost is not proportional
  // to the elements.
  CHECK(compute::fit_family_cost(points, peak).fit_error_pct > 5);
}

TEST_CASE("cost fit: recovers a per-ragged-plane cost beside the per-channel one") {
  // Batch norm over planes of 2x2, 3x3, 7x7 (ragged: not a whole number of 8-float
  // vectors) and 4x4, 8x8 (whole): the ragged ones pay 25 ns per (n, c) plane more.
  compute::FamilyCost truth;
  truth.fixed_ns = 3000;
  truth.per_channel_ns = 40;
  truth.per_ragged_plane_ns = 25;
  truth.efficiency = 0.05;
  const double peak = 2e11;
  std::vector<compute::CostPoint> points;
  for (std::int64_t c : {64, 256, 1152})
    for (std::int64_t hw : {2, 3, 4, 7, 8}) {
      compute::CostPoint p;
      p.shape.channels = c;
      p.shape.elements = 8 * c * hw * hw;
      p.shape.ragged_planes = (hw * hw) % compute::kVectorFloats != 0 ? 8 * c : 0;
      p.flops = 4 * p.shape.elements;
      p.time_ns = compute::model_time_ns(truth, peak, p);
      points.push_back(p);
    }
  // By hand, c = 1152, hw = 2 (points[10]): 3000 + 40 x 1152 + 25 x 8 x 1152
  // + 4 x 36864 / (2e11 x 0.05) x 1e9 = 3000 + 46080 + 230400 + 14745.6 = 294225.6 ns.
  CHECK(points[10].time_ns == Approx(294225.6).epsilon(1e-9));
  compute::FitTerms terms;
  terms.per_channel = true;
  terms.per_ragged_plane = true;
  const auto fit = compute::fit_family_cost(points, peak, terms);
  CHECK(fit.fixed_ns == Approx(3000).epsilon(1e-3));
  CHECK(fit.per_channel_ns == Approx(40).epsilon(1e-3));
  CHECK(fit.per_ragged_plane_ns == Approx(25).epsilon(1e-3));
  CHECK(fit.efficiency == Approx(0.05).epsilon(1e-3));
  CHECK(fit.fit_error_pct < 0.01);
  // Without the term, the 2x2 planes are what the old fit missed by 4.5-5.5x.
  terms.per_ragged_plane = false;
  CHECK(compute::fit_family_cost(points, peak, terms).fit_error_pct > 10);
  // And it reaches the op's cost: 2 ragged planes at 25 ns more compute, nothing serial.
  compute::OpShape shape;
  shape.elements = 8;
  shape.ragged_planes = 2;
  const auto c = compute::family_cost(fit, peak, 0, 1, shape);
  CHECK(c.compute == Approx(2 * 25e3).epsilon(1e-3));
}

TEST_CASE("batch norm's shape: channels and ragged planes, by hand") {
  // Batch norms over planes of 7x7 (49 floats: ragged), 4x4 (16: two whole AVX2 vectors)
  // and 1x1 (the channels-last kernel: no per-plane loop), batch 2.
  const auto trace = workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"bn","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,3,7,7]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"bn7","op":"batch_norm","attrs":{},"inputs":["input"],"output":[2,3,7,7],
    "params":[{"name":"bn7.weight","shape":[3]},{"name":"bn7.bias","shape":[3]}]},
   {"id":1,"name":"c4","op":"conv2d","attrs":{"kernel":[4,4],"stride":[1,1],"padding":[0,0],
    "groups":1,"bias":false},"inputs":[0],"output":[2,5,4,4],
    "params":[{"name":"c4.weight","shape":[5,3,4,4]}]},
   {"id":2,"name":"bn4","op":"batch_norm","attrs":{},"inputs":[1],"output":[2,5,4,4],
    "params":[{"name":"bn4.weight","shape":[5]},{"name":"bn4.bias","shape":[5]}]},
   {"id":3,"name":"c1","op":"conv2d","attrs":{"kernel":[4,4],"stride":[1,1],"padding":[0,0],
    "groups":1,"bias":false},"inputs":[2],"output":[2,6,1,1],
    "params":[{"name":"c1.weight","shape":[6,5,4,4]}]},
   {"id":4,"name":"bn1","op":"batch_norm","attrs":{},"inputs":[3],"output":[2,6,1,1],
    "params":[{"name":"bn1.weight","shape":[6]},{"name":"bn1.bias","shape":[6]}]},
   {"id":5,"name":"flatten","op":"flatten","attrs":{"start_dim":1,"end_dim":-1},"inputs":[4],
    "output":[2,6]},
   {"id":6,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[5,"target"],"output":[]}]})"),
                                           "bn.json");
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.steps = 1;
  const auto s = schedule::build_schedule(trace, so);
  std::map<int, compute::OpShape> forward;
  for (const auto& op : s.ops)
    if (op.kind == schedule::OpKind::Forward) forward[op.layer] = compute::op_shape(trace, s, op);
  CHECK(forward[0].channels == 3);
  CHECK(forward[0].ragged_planes == 2 * 3);
  CHECK(forward[2].channels == 5);
  CHECK(forward[2].ragged_planes == 0);
  CHECK(forward[4].channels == 6);
  CHECK(forward[4].ragged_planes == 0);
  CHECK(forward[1].ragged_planes == 0);  // a convolution has no planes of its own
}

TEST_CASE("softmax and layer norm count their rows, adaptive pooling its planes, by hand") {
  // x [2, 3, 5, 7]: a layer norm over the last dim (2*3*5 = 30 rows of 7), a softmax along
  // dim 2 (2*3*7 = 42 rows of 5), one along -1 (30 rows), an adaptive pool (2*3 = 6 planes).
  const auto trace = workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"rows","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,3,5,7]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"ln","op":"layer_norm","attrs":{"normalized_shape":[7]},"inputs":["input"],
    "output":[2,3,5,7],"params":[{"name":"ln.weight","shape":[7]},{"name":"ln.bias","shape":[7]}]},
   {"id":1,"name":"sm2","op":"softmax","attrs":{"dim":2},"inputs":[0],"output":[2,3,5,7]},
   {"id":2,"name":"sm","op":"softmax","attrs":{"dim":-1},"inputs":[1],"output":[2,3,5,7]},
   {"id":3,"name":"pool","op":"adaptive_avg_pool2d","attrs":{"output_size":[1,1]},"inputs":[2],
    "output":[2,3,1,1]},
   {"id":4,"name":"flatten","op":"flatten","attrs":{"start_dim":1,"end_dim":-1},"inputs":[3],
    "output":[2,3]},
   {"id":5,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[4,"target"],"output":[]}]})"),
                                           "rows.json");
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.steps = 1;
  const auto s = schedule::build_schedule(trace, so);
  std::map<std::pair<int, schedule::OpKind>, compute::OpShape> shapes;
  for (const auto& op : s.ops) shapes[{op.layer, op.kind}] = compute::op_shape(trace, s, op);
  using K = schedule::OpKind;
  CHECK(shapes.at({0, K::Forward}).channels == 30);
  CHECK(shapes.at({0, K::BackwardWeight}).channels == 30);  // (its input needs no gradient)
  CHECK(shapes.at({1, K::Forward}).channels == 42);
  CHECK(shapes.at({2, K::Forward}).channels == 30);
  CHECK(shapes.at({2, K::BackwardInput}).channels == 30);
  CHECK(shapes.at({3, K::Forward}).channels == 6);
  // A family fitted with a per-row cost charges it: 30 rows x 100 ns = 3 us of compute.
  compute::FamilyCost f;
  f.fixed_ns = 1000;
  f.per_channel_ns = 100;
  const auto c = compute::family_cost(f, 0, 0, 1, shapes.at({0, K::Forward}));
  CHECK(c.serial == ns(1000));
  CHECK(c.compute == ns(3000));
}

TEST_CASE("cost fit: noisy points give a fit error of the noise's size") {
  // +-10% alternating around a pure fixed cost of 1 us: least squares of the relative error
  // gives f = sum(1/T) / sum(1/T^2) = 980.2 ns, off by 8.9% and 10.9%.
  std::vector<compute::CostPoint> points;
  for (int i = 0; i < 8; ++i) {
    compute::CostPoint p;
    p.shape.elements = 1;
    p.flops = 0;
    p.time_ns = i % 2 ? 1100 : 900;
    points.push_back(p);
  }
  const auto fit = compute::fit_family_cost(points, 1e10);
  const double f = (1 / 900.0 + 1 / 1100.0) / (1 / (900.0 * 900.0) + 1 / (1100.0 * 1100.0));
  CHECK(fit.fixed_ns == Approx(f).epsilon(1e-9));
  CHECK(fit.fit_error_pct ==
        Approx(100 * (std::abs(f / 900 - 1) + std::abs(f / 1100 - 1)) / 2).epsilon(1e-6));
}

TEST_CASE("anchors: an op near a calibrated point takes its residual, far ones the formula") {
  // A batch-norm-like family of 10 us fixed, with anchors at 2x and 0.5x of it: 1152
  // channels of 2x2 (36864 elements) and 16 channels of 32x32 (131072), reach 2.
  compute::FamilyCost f;
  f.fixed_ns = 10000;
  f.anchor_reach = 2;
  compute::OpShape a, b;
  a.elements = 36864;
  a.channels = 1152;
  b.elements = 131072;
  b.channels = 16;
  f.anchors = {{a, 1, 2.0}, {b, 1, 0.5}};
  // At the first: its own weight 1, the other's exp(-d^2 / (2 ln2^2)) with
  // d^2 = (ln 36865 - ln 131073)^2 + (ln 1153 - ln 17)^2 = 1.6083 + 17.8246 = 19.433,
  // so w = exp(-20.22) = 1.6e-9; correction = exp((ln 2 - 1.6e-9 ln 2) / 1.05) = 1.93494.
  const double at_a = f.local_correction(a, 1);
  CHECK(at_a == Approx(std::exp(std::log(2.0) / 1.05)).epsilon(1e-6));
  CHECK(compute::family_cost(f, 1e11, 0, 1, a).serial == Tick(std::llround(10000 * at_a * 1000)));
  // A factor sqrt(2) away in elements and channels: d^2 = 2 (ln sqrt 2)^2 = ln2^2 / 2,
  // w = exp(-1/4) = 0.7788, correction exp(0.7788 ln 2 / 0.8288).
  compute::OpShape near = a;
  near.elements = std::llround(36865 * std::sqrt(2.0)) - 1;
  near.channels = std::llround(1153 * std::sqrt(2.0)) - 1;
  CHECK(f.local_correction(near, 1) ==
        Approx(std::exp(0.7788 * std::log(2.0) / (0.7788 + 0.05))).epsilon(2e-3));
  // Far from both (2 elements, 1 channel): the formula alone. Reach 1: never corrected.
  compute::OpShape far;
  far.elements = 2;
  far.channels = 1;
  CHECK(f.local_correction(far, 1) == Approx(1).epsilon(1e-6));
  f.anchor_reach = 1;
  CHECK(f.local_correction(a, 1) == 1);
  // Written and read back: the same anchors, reach and costs.
  f.anchor_reach = 2;
  compute::OpCostModel m;
  m.families["batch_norm.Bx"] = f;
  const nlohmann::json written = compute::op_cost_model_json(m);
  const auto back = compute::parse_op_cost_model(JsonView(written, "m.json", "compute.op_costs"));
  const auto& g = back.families.at("batch_norm.Bx");
  REQUIRE(g.anchors.size() == 2);
  CHECK(g.anchors[0].shape.channels == 1152);
  CHECK(g.anchors[1].ratio == Approx(0.5));
  CHECK(g.anchor_reach == 2);
  CHECK(g.local_correction(near, 1) == Approx(f.local_correction(near, 1)).epsilon(1e-4));
}

TEST_CASE(
    "anchors: their reach is chosen by leave-one-out, the probed shapes alone where residuals "
    "do not carry") {
  // Two pairs of points, each pair a factor 2^(1/4) apart in elements with one residual
  // (2x and 0.5x of a 10 us fixed cost), the pairs 10^4 apart.
  auto point = [](std::int64_t elements, double time_ns) {
    compute::CostPoint p;
    p.shape.elements = elements;
    p.time_ns = time_ns;
    return p;
  };
  compute::FamilyCost f;
  f.fixed_ns = 10000;
  const std::vector<compute::CostPoint> pairs{point(4096, 20000), point(4871, 20000),
                                              point(40960000, 5000), point(48710000, 5000)};
  compute::anchor_family(f, pairs, 1e11);
  // Without anchors the mean error is (0.5 + 0.5 + 1 + 1) / 4 = 75%; each point's partner
  // carries its residual, the more the farther the reach: 4 wins. At reach 4 the partner
  // weighs exp(-(ln(4872/4097))^2 / (2 ln4^2)) = 0.99222, the correction is
  // r^(0.99222/1.04222) = r^0.95203, errors 1 - 2^-0.04797 = 3.2707% and 2^0.04797 - 1 =
  // 3.3812%.
  CHECK(f.anchor_reach == 4);
  REQUIRE(f.anchors.size() == 4);
  CHECK(f.local_error_pct == Approx((3.2707 + 3.3812) / 2).epsilon(1e-3));
  // Two lone points with opposite residuals: no reach helps, so the anchors stay at the
  // exact reach 2^(1/32) (a probed shape is a measurement of that op) and the local error is
  // the formula's.
  compute::FamilyCost lone;
  lone.fixed_ns = 10000;
  compute::anchor_family(lone, {point(4096, 20000), point(40960000, 5000)}, 1e11);
  CHECK(lone.anchor_reach == compute::kExactReach);
  REQUIRE(lone.anchors.size() == 2);
  CHECK(lone.local_error_pct == Approx(75));
  // The probed shape itself: weight 1 beside the prior's 0.05 (the far anchor's is ~0), so
  // 2^(1/1.05) = 1.93492.
  compute::OpShape at;
  at.elements = 4096;
  CHECK(lone.local_correction(at, 1) == Approx(1.93492).epsilon(1e-4));
  // 10% away: d = ln(4507/4097) = 0.095380, sigma = ln 2 / 32 = 0.021661, weight
  // exp(-d^2 / (2 sigma^2)) = 6.17e-5: 2^(6.17e-5 / 0.0500617) = 1.00085.
  at.elements = 4506;
  CHECK(lone.local_correction(at, 1) == Approx(1.00085).epsilon(1e-4));
}

// A point the formula misses by more than a machine file's anchors may say (the fit left an
// Adam loop update's smallest point at 1498x its formula): the anchor is clamped to 999x, and
// the model is written and read back (it failed to load, and calibrate lost its run).
TEST_CASE("anchors: a ratio beyond what a machine file holds is clamped, and the file loads") {
  compute::CostPoint far, near;
  far.shape.elements = 1024;
  far.time_ns = 5e6;  // 5000x the 1 us formula
  near.shape.elements = 1 << 20;
  near.time_ns = 1000;
  compute::FamilyCost f;
  f.fixed_ns = 1000;
  compute::anchor_family(f, {far, near}, 1e11);
  REQUIRE(f.anchors.size() == 2);
  CHECK(f.anchors[0].ratio == Approx(999));
  CHECK(f.anchors[1].ratio == Approx(1));
  compute::OpCostModel m;
  m.families["update.adam.loop"] = f;
  const auto back = compute::parse_op_cost_model(
      JsonView(compute::op_cost_model_json(m), "t.json", "compute.op_costs"));
  CHECK(back.find("update.adam.loop")->anchors[0].ratio == Approx(999));
}

TEST_CASE("set_compute_time spreads a time over passes by FLOPs, summing exactly") {
  compute::AccessProgram p;
  p.passes.resize(3);
  p.passes[0].flops = 1;
  p.passes[1].flops = 1;
  p.passes[2].flops = 1;
  compute::set_compute_time(p, 1000);
  // 333.33.. each, cumulatively rounded: 333, 334 (667 - 333), 333.
  CHECK(p.passes[0].compute == 333);
  CHECK(p.passes[1].compute == 334);
  CHECK(p.passes[2].compute == 333);
  p.passes[0].flops = 0, p.passes[1].flops = 3, p.passes[2].flops = 1;
  compute::set_compute_time(p, 1000);
  CHECK(p.passes[0].compute == 0);
  CHECK(p.passes[1].compute == 750);
  CHECK(p.passes[2].compute == 250);
}

TEST_CASE(
    "depthwise Bw ops oneDNN's JIT kernel refuses are conv2d_dw_ref.Bw, else their parent's") {
  // Batch 2, 8 channels. oneDNN's JIT depthwise backward-weights kernel needs a kernel at
  // most 3 wide and an input at least k + (-pad mod stride) high: 4x4 with 3x3 (stride 1:
  // 3; stride 2: 4) it takes; 2x2 with 3x3, and any 5x5, it does not. A grouped
  // convolution (4 groups) and a depthwise one with a channel multiplier are not its.
  const auto trace = workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"dw","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,8,4,4]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"k3s1","op":"conv2d","attrs":{"kernel":[3,3],"stride":[1,1],"padding":[1,1],
    "groups":8},"inputs":["input"],"output":[2,8,4,4],"params":[{"name":"a.weight","shape":[8,1,3,3]}]},
   {"id":1,"name":"k3s2","op":"conv2d","attrs":{"kernel":[3,3],"stride":[2,2],"padding":[1,1],
    "groups":8},"inputs":[0],"output":[2,8,2,2],"params":[{"name":"b.weight","shape":[8,1,3,3]}]},
   {"id":2,"name":"k3on2","op":"conv2d","attrs":{"kernel":[3,3],"stride":[1,1],"padding":[1,1],
    "groups":8},"inputs":[1],"output":[2,8,2,2],"params":[{"name":"c.weight","shape":[8,1,3,3]}]},
   {"id":3,"name":"k5","op":"conv2d","attrs":{"kernel":[5,5],"stride":[1,1],"padding":[2,2],
    "groups":8},"inputs":[2],"output":[2,8,2,2],"params":[{"name":"d.weight","shape":[8,1,5,5]}]},
   {"id":4,"name":"g4k5","op":"conv2d","attrs":{"kernel":[5,5],"stride":[1,1],"padding":[2,2],
    "groups":4},"inputs":[3],"output":[2,8,2,2],"params":[{"name":"e.weight","shape":[8,2,5,5]}]},
   {"id":5,"name":"x2k3on2","op":"conv2d","attrs":{"kernel":[3,3],"stride":[1,1],
    "padding":[1,1],"groups":8},"inputs":[4],"output":[2,16,2,2],
    "params":[{"name":"f.weight","shape":[16,1,3,3]}]},
   {"id":6,"name":"flatten","op":"flatten","attrs":{"start_dim":1,"end_dim":-1},"inputs":[5],
    "output":[2,64]},
   {"id":7,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[6,"target"],"output":[]}]})"),
                                           "dw.json");
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.steps = 1;
  const auto s = schedule::build_schedule(trace, so);
  std::map<std::pair<int, schedule::OpKind>, const schedule::Op*> ops;
  for (const auto& op : s.ops) ops[{op.layer, op.kind}] = &op;
  auto family = [&](int layer, schedule::OpKind kind) {
    REQUIRE(ops.count({layer, kind}));
    return compute::op_family(trace, s, *ops.at({layer, kind}));
  };
  using K = schedule::OpKind;
  CHECK(family(0, K::BackwardWeight) == "conv2d_grouped.Bw");
  CHECK(family(1, K::BackwardWeight) == "conv2d_grouped.Bw");
  CHECK(family(2, K::BackwardWeight) == "conv2d_dw_ref.Bw");
  CHECK(family(3, K::BackwardWeight) == "conv2d_dw_ref.Bw");
  CHECK(family(4, K::BackwardWeight) == "conv2d_grouped.Bw");
  CHECK(family(5, K::BackwardWeight) == "conv2d_grouped.Bw");
  // Only Bw splits: the JIT forward and backward-data kernels take these shapes.
  CHECK(family(3, K::Forward) == "conv2d_grouped.F");
  CHECK(family(3, K::BackwardInput) == "conv2d_grouped.Bx");

  // A machine without the split family costs such an op by conv2d_grouped.Bw; with it, by
  // its own (fixed parts only: 7 and 90 us before any work).
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  doc["compute"]["op_costs"] = {{"conv2d_grouped.Bw", {{"fixed_ns", 7000}, {"efficiency", 1}}}};
  const auto& ref = *ops.at({2, K::BackwardWeight});
  auto serial = [&](const nlohmann::json& d) {
    const auto m = exec::parse_machine(d, "tiny.json");
    const auto c = compute::calibrated_cost(m.compute, trace, s, ref, 1);
    REQUIRE(c);
    return c->serial;
  };
  CHECK(compute::parent_family("conv2d_dw_ref.Bw") == "conv2d_grouped.Bw");
  CHECK(compute::parent_family("conv2d_grouped.Bw").empty());
  CHECK(serial(doc) == ns(7000));
  doc["compute"]["op_costs"]["conv2d_dw_ref.Bw"] = {{"fixed_ns", 90000}, {"efficiency", 1}};
  CHECK(serial(doc) == ns(90000));
}

TEST_CASE("a matmul op takes bmm's calibrated family where the machine has no matmul one") {
  // x [4, 8, 16] (from a linear) times its transpose: torch.matmul of batched operands is bmm.
  const auto trace = workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"m","batch":4,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[4,8,16]},{"name":"target","shape":[4],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"fc","op":"linear","inputs":["input"],"output":[4,8,16],
    "params":[{"name":"fc.weight","shape":[16,16]}]},
   {"id":1,"name":"t","op":"permute","attrs":{"dims":[0,2,1]},"inputs":[0],"output":[4,16,8]},
   {"id":2,"name":"mm","op":"matmul","inputs":[0,1],"output":[4,8,8]},
   {"id":3,"name":"fl","op":"flatten","inputs":[2],"output":[4,64]},
   {"id":4,"name":"head","op":"linear","inputs":[3],"output":[4,3],
    "params":[{"name":"head.weight","shape":[3,64]}]},
   {"id":5,"name":"loss","op":"cross_entropy","inputs":[4,"target"],"output":[]}]})"),
                                           "m.json");
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.steps = 1;
  const auto s = schedule::build_schedule(trace, so);
  const schedule::Op* f = nullptr;
  const schedule::Op* bx = nullptr;
  for (const auto& op : s.ops) {
    if (op.layer != 2) continue;
    if (op.kind == schedule::OpKind::Forward) f = &op;
    if (op.kind == schedule::OpKind::BackwardInput) bx = &op;
  }
  REQUIRE(f);
  REQUIRE(bx);
  CHECK(compute::op_family(trace, s, *f) == "matmul.F");
  CHECK(compute::parent_family("matmul.F") == "bmm.F");
  CHECK(compute::parent_family("matmul.Bx") == "bmm.Bx");
  CHECK(compute::parent_family("bmm.F").empty());
  CHECK(compute::parent_family("linear.F").empty());
  auto serial = [&](const nlohmann::json& d, const schedule::Op& op) {
    const auto m = exec::parse_machine(d, "tiny.json");
    const auto c = compute::calibrated_cost(m.compute, trace, s, op, 1);
    REQUIRE(c);
    return c->serial;
  };
  // bmm's fixed parts (3 and 5 us) reach the matmul's F and Bx; its own family wins.
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  doc["compute"]["op_costs"] = {{"bmm.F", {{"fixed_ns", 3000}, {"efficiency", 1}}},
                                {"bmm.Bx", {{"fixed_ns", 5000}, {"efficiency", 1}}},
                                {"default.F", {{"fixed_ns", 700}, {"efficiency", 1}}}};
  CHECK(serial(doc, *f) == ns(3000));
  CHECK(serial(doc, *bx) == ns(5000));
  doc["compute"]["op_costs"]["matmul.F"] = {{"fixed_ns", 4000}, {"efficiency", 1}};
  CHECK(serial(doc, *f) == ns(4000));
}

TEST_CASE("a calibrated family and a profile's compute time reach the op, by hand") {
  const auto trace = mlp();
  const auto s = one_relu(200);
  // Without a cost model (tiny_cpu: 2 FLOP/ns, no dispatch): h and a miss, issued at 0 and
  // 1 ns, a's data in at 13 ns (1 + 1 ns of lookups, 10 ns memory, after the issue at 1);
  // 200 FLOP = 100 ns of compute after the data: 113 ns.
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  const auto machine = [](const nlohmann::json& d) { return exec::parse_machine(d, "tiny.json"); };
  CHECK(exec::simulate(trace, s, machine(doc), no_warmup()).per_op[0].end == ns(113));
  // relu.F calibrated: 1 us fixed before the work, efficiency 0.5 -> 200 FLOP at 1 FLOP/ns
  // = 200 ns: 1000 + 13 + 200.
  doc["compute"]["op_costs"] = {{"relu.F", {{"fixed_ns", 1000}, {"efficiency", 0.5}}}};
  const auto m = machine(doc);
  CHECK(compute::op_family(trace, s, s.ops[0]) == "relu.F");
  CHECK(exec::simulate(trace, s, m, no_warmup()).per_op[0].end == ns(1213));
  // A profile's compute time replaces the computed one, and its fixed cost too (the
  // measurement holds the op's dispatch): tiny_cpu's dispatch model is free, 13 + 300.
  auto o = no_warmup();
  o.op_compute = {ns(300)};
  CHECK(exec::simulate(trace, s, m, o).per_op[0].end == ns(313));
  // A delay (a profile's in-context correction) adds to the op's time one for one.
  o.op_delay = {ns(50)};
  CHECK(exec::simulate(trace, s, m, o).per_op[0].end == ns(363));
  // A family the machine lacks keeps the class-efficiency path.
  doc["compute"]["op_costs"] = {{"linear.F", {{"fixed_ns", 1000}, {"efficiency", 0.5}}}};
  CHECK(exec::simulate(trace, s, machine(doc), no_warmup()).per_op[0].end == ns(113));
}

TEST_CASE("validate --host-speed run: every compute cost scaled, memory as it was, by hand") {
  const auto trace = mlp();
  const auto s = one_relu(200);
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  doc["compute"]["op_costs"] = {{"relu.F", {{"fixed_ns", 1000}, {"efficiency", 0.5}}}};
  auto m = exec::parse_machine(doc, "tiny.json");
  // As above: 1000 ns fixed + 13 ns to the data + 200 FLOP at 1 FLOP/ns = 1213 ns.
  CHECK(exec::simulate(trace, s, m, no_warmup()).per_op[0].end == ns(1213));
  // A host 1.5x slower: 1500 fixed + 13 (memory unchanged) + 300 compute = 1813 ns.
  m.compute = compute::with_compute_time_scaled(m.compute, 1.5);
  CHECK(m.compute.op_costs.find("relu.F")->fixed_ns == Approx(1500));
  CHECK(exec::simulate(trace, s, m, no_warmup()).per_op[0].end == ns(1813));
  // Without a family the class path: tiny_cpu's 2 FLOP/ns at 0.8x the speed (ratio 1.25):
  // 200 FLOP in 125 ns after the data at 13 ns.
  auto plain = exec::parse_machine(test::defaults::tiny_cpu().json(), "tiny.json");
  plain.compute = compute::with_compute_time_scaled(plain.compute, 1.25);
  CHECK(exec::simulate(trace, s, plain, no_warmup()).per_op[0].end == ns(138));
}

TEST_CASE("a family the machine lacks takes its kind's default per-op cost") {
  const auto trace = mlp();
  const auto s = one_relu(200);
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  // default.F: 500 ns before the work; the compute stays the class path's (113 ns, as in the
  // case above): 613 ns. default.Bx does not apply to a forward op.
  doc["compute"]["op_costs"] = {{"linear.F", {{"fixed_ns", 1000}, {"efficiency", 0.5}}},
                                {"default.F", {{"fixed_ns", 500}, {"efficiency", 1}}},
                                {"default.Bx", {{"fixed_ns", 9000}, {"efficiency", 1}}}};
  const auto m = exec::parse_machine(doc, "tiny.json");
  CHECK(compute::default_family(s.ops[0]) == "default.F");
  CHECK(exec::simulate(trace, s, m, no_warmup()).per_op[0].end == ns(613));
}

TEST_CASE("a view costs its kind's calibrated call, and nothing without one") {
  // fc1 -> reshape -> flatten -> fc2 -> loss: the reshape and the flatten are views.
  const auto trace = workload::parse_trace(nlohmann::json::parse(R"(
 {"format":"fusim-trace","version":1,"model":"v","batch":2,"dtype":"float32","source":"test",
  "inputs":[{"name":"input","shape":[2,4]},{"name":"target","shape":[2],"dtype":"int64"}],
  "layers":[
   {"id":0,"name":"fc1","op":"linear","inputs":["input"],"output":[2,8],
    "params":[{"name":"fc1.weight","shape":[8,4]}]},
   {"id":1,"name":"r","op":"reshape","inputs":[0],"output":[2,2,4]},
   {"id":2,"name":"fl","op":"flatten","inputs":[1],"output":[2,8]},
   {"id":3,"name":"fc2","op":"linear","inputs":[2],"output":[2,3],
    "params":[{"name":"fc2.weight","shape":[3,8]}]},
   {"id":4,"name":"loss","op":"cross_entropy","inputs":[3,"target"],"output":[]}]})"),
                                           "v.json");
  schedule::ScheduleOptions so;
  so.optimizer = "sgd";
  so.steps = 1;
  const auto s = schedule::build_schedule(trace, so);
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  auto view_times = [&](const nlohmann::json& d) {
    const auto r = exec::simulate(trace, s, exec::parse_machine(d, "tiny.json"), no_warmup());
    std::vector<std::pair<std::string, Tick>> out;
    for (const auto& op : s.ops)
      if (op.layer == 1 || op.layer == 2) {
        CHECK(op.kernels == 0);
        const auto& t = r.per_op[std::size_t(op.id)];
        out.emplace_back(compute::op_family(trace, s, op), t.end - t.start);
      }
    return out;
  };
  // Two views, each with an F and a Bx op.
  const auto none = view_times(doc);
  REQUIRE(none.size() == 4);
  for (const auto& [family, t] : none) {
    CHECK((family == "view.F" || family == "view.Bx"));
    CHECK(t == 0);
  }
  doc["compute"]["op_costs"] = {{"view.F", {{"fixed_ns", 700}, {"efficiency", 1}}},
                                {"view.Bx", {{"fixed_ns", 900}, {"efficiency", 1}}}};
  for (const auto& [family, t] : view_times(doc)) CHECK(t == ns(family == "view.F" ? 700 : 900));
}

TEST_CASE("an op without arithmetic is costed by the elements it moves") {
  schedule::Op copy;
  copy.kind = schedule::OpKind::Forward;
  copy.passes.push_back({{}, 0});
  compute::OpShape shape;
  shape.elements = 4096;
  CHECK(compute::cost_work(copy, shape) == 4096);
  copy.passes[0].flops = 10;
  CHECK(compute::cost_work(copy, shape) == 10);
  // An update without FLOPs (none of the optimizers) stays at 0: its kernels carry it.
  schedule::Op update;
  update.kind = schedule::OpKind::Update;
  CHECK(compute::cost_work(update, shape) == 0);
  // 4096 elements at 1e12 /s x 0.5 = 8.192 ns of compute, 100 ns fixed before it; two
  // channels at 3 ns more compute.
  compute::FamilyCost f;
  f.fixed_ns = 100;
  f.per_channel_ns = 3;
  f.efficiency = 0.5;
  shape.channels = 2;
  const auto c = compute::family_cost(f, 1e12, 4096, 1, shape);
  CHECK(c.serial == ns(100));
  CHECK(c.compute == 8192 + 6000);
}

TEST_CASE("an op measured in isolation and simulated in isolation gives its time back") {
  const auto trace = mlp();
  const auto s = adam_two_steps(trace);
  // 8 GB/s of DRAM: memory matters but does not dominate these tiny ops.
  const auto m = test::defaults::tiny_cpu().memory(50, 8).build();
  const auto o = no_warmup();
  int checked = 0;
  for (const auto& op : s.ops) {
    if (op.kernels == 0 || op.step != 0) continue;
    const auto iso = exec::isolated_schedule(s, op.id, exec::kIsolationRepeats);
    const Tick model = exec::simulate_isolated(trace, iso, m, o, -1);
    const Tick memory_only = exec::simulate_isolated(trace, iso, m, o, 0);
    for (double factor : {1.0, 1.7, 5.0}) {
      const Tick measured = memory_only + Tick(double(model) * factor);
      const auto c = exec::solve_compute_time(trace, s, op.id, m, o, measured);
      INFO(compute::op_signature(trace, s, op).description << " x" << factor);
      CHECK(c.exact);
      CHECK_FALSE(c.hidden);
      const Tick back = exec::simulate_isolated(trace, iso, m, o, c.compute);
      CHECK(std::abs(back - measured) <= std::max<Tick>(ns(1), measured / 10000));
      CHECK(c.simulated == back);
    }
    // Faster than the simulated memory alone: compute 0, flagged as not exact.
    if (memory_only > ns(2)) {
      const auto c = exec::solve_compute_time(trace, s, op.id, m, o, memory_only / 2);
      CHECK(c.compute == 0);
      CHECK_FALSE(c.exact);
      CHECK(c.hidden);
    }
    // The memory alone within the tolerance of the time: exact, but the compute hidden.
    if (memory_only > ns(200)) {
      const auto c = exec::solve_compute_time(trace, s, op.id, m, o, memory_only + ns(1), 1e-2);
      CHECK(c.exact);
      CHECK(c.hidden);
    }
    ++checked;
  }
  CHECK(checked >= 8);
}

TEST_CASE("ops solved together in their step give each its measured time back") {
  // What calibrate does with a probe's F, Bx and Bw: step 1's ops with work, each given a
  // compute c*, simulated in the step; their durations are the "measured" times. Solved
  // together, every op's c reproduces its time within the tolerance in one simulation of
  // all the solved c (the ops move each other only through the memory system), at fewer
  // simulations than solving them one at a time.
  const auto trace = mlp();
  const auto s = adam_two_steps(trace);
  const auto m = test::defaults::tiny_cpu().memory(50, 2).build();
  auto o = no_warmup();
  o.chunk_bytes = 64;  // several chunks: compute and memory overlap, sim(c) bends
  std::vector<int> ids;
  auto truth = o;
  truth.op_compute.assign(s.ops.size(), -1);
  for (const auto& op : s.ops)
    if (op.kernels > 0 && op.step == 1 && op.kind != schedule::OpKind::Update) {
      ids.push_back(op.id);
      truth.op_compute[std::size_t(op.id)] = ns(40) * Tick(ids.size());
    }
  REQUIRE(ids.size() >= 4);
  const auto reference = exec::simulate(trace, s, m, truth);
  std::vector<Tick> measured;
  for (int id : ids)
    measured.push_back(reference.per_op[std::size_t(id)].end -
                       reference.per_op[std::size_t(id)].start);
  const double tolerance = 1e-3;
  const auto joint = exec::solve_computes_in_schedule(trace, s, ids, m, o, measured, tolerance);
  REQUIRE(joint.size() == ids.size());
  auto back = o;
  back.op_compute.assign(s.ops.size(), -1);
  int one_at_a_time = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    INFO("op " << ids[i]);
    CHECK(joint[i].exact);
    CHECK_FALSE(joint[i].hidden);
    // The compute that produced the time, up to the tolerance's worth of it.
    const Tick truth_c = truth.op_compute[std::size_t(ids[i])];
    CHECK(std::abs(joint[i].compute - truth_c) <= std::max<Tick>(ns(2), measured[i] / 500));
    back.op_compute[std::size_t(ids[i])] = joint[i].compute;
    one_at_a_time +=
        exec::solve_compute_in_schedule(trace, s, ids[i], m, o, measured[i], tolerance).simulations;
  }
  const auto again = exec::simulate(trace, s, m, back);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto& t = again.per_op[std::size_t(ids[i])];
    CHECK(joint[i].simulated == t.end - t.start);
    CHECK(std::abs(joint[i].simulated - measured[i]) <=
          std::max<Tick>(ns(1), Tick(double(measured[i]) * tolerance)));
  }
  CHECK(joint[0].simulations * 2 < one_at_a_time);
  // An op whose time its memory alone exceeds: compute 0, hidden, not exact; the others
  // are solved as before.
  std::vector<Tick> short_first = measured;
  short_first[0] = 1;
  const auto with_short =
      exec::solve_computes_in_schedule(trace, s, ids, m, o, short_first, tolerance);
  CHECK(with_short[0].compute == 0);
  CHECK(with_short[0].hidden);
  CHECK_FALSE(with_short[0].exact);
  for (std::size_t i = 1; i < ids.size(); ++i) CHECK(with_short[i].exact);
  CHECK(exec::solve_computes_in_schedule(trace, s, {}, m, o, {}, tolerance).empty());
}

TEST_CASE("serial memory: an op's memory time adds to its compute, chunk by chunk") {
  // compute.memory_overlap "serial" (compute_config.h): with a fixed-latency memory, an
  // op's time is its memory-only time plus its compute, exactly; double-buffered hides part
  // of one under the other wherever an op has two chunks or more.
  const auto trace = mlp();
  const auto s = adam_two_steps(trace);
  const auto overlapped = test::defaults::tiny_cpu().memory(50, 8).build();
  auto serial = overlapped;
  serial.compute.memory_overlap.fill(compute::MemoryOverlap::Serial);
  auto o = no_warmup();
  o.chunk_bytes = 64;  // several chunks even for these tiny tensors
  const Tick compute = ns(10);
  int checked = 0, hidden = 0;
  for (const auto& op : s.ops) {
    if (op.kernels == 0 || op.step != 0) continue;
    const auto iso = exec::isolated_schedule(s, op.id, exec::kIsolationRepeats);
    const Tick memory_only = exec::simulate_isolated(trace, iso, serial, o, 0);
    const Tick added = exec::simulate_isolated(trace, iso, serial, o, compute);
    const Tick both = exec::simulate_isolated(trace, iso, overlapped, o, compute);
    INFO(compute::op_signature(trace, s, op).description);
    CHECK(added == memory_only + compute);
    CHECK(both <= added);
    if (both < added) ++hidden;
    ++checked;
  }
  CHECK(checked >= 8);
  CHECK(hidden >= 4);  // the ops with two chunks or more hide memory when double-buffered
}

TEST_CASE("serial reads: an op's stores are posted, its loads still add to its compute") {
  // compute.memory_overlap "serial-reads" (compute_config.h): a chunk's compute waits for its
  // reads alone, so with a bandwidth-bound memory every op that writes is faster than with
  // "serial", and no faster than its reads and compute in series allow; a class left
  // "serial" in the per-class table keeps its serial time exactly.
  const auto trace = mlp();
  const auto s = adam_two_steps(trace);
  auto serial = test::defaults::tiny_cpu().memory(50, 2).build();
  serial.compute.memory_overlap.fill(compute::MemoryOverlap::Serial);
  auto reads = serial;
  reads.compute.memory_overlap.fill(compute::MemoryOverlap::SerialReads);
  auto gemm_only = serial;
  gemm_only.compute.memory_overlap[static_cast<std::size_t>(compute::OpClass::Gemm)] =
      compute::MemoryOverlap::SerialReads;
  auto o = no_warmup();
  o.chunk_bytes = 64;
  const Tick compute = ns(400);  // per op, over its chunks: more than a chunk's stores
  int faster = 0, gemm = 0, other = 0;
  for (const auto& op : s.ops) {
    if (op.kernels == 0 || op.step != 0) continue;
    const auto iso = exec::isolated_schedule(s, op.id, exec::kIsolationRepeats);
    const Tick t_serial = exec::simulate_isolated(trace, iso, serial, o, compute);
    const Tick t_reads = exec::simulate_isolated(trace, iso, reads, o, compute);
    const Tick t_gemm = exec::simulate_isolated(trace, iso, gemm_only, o, compute);
    INFO(compute::op_signature(trace, s, op).description);
    CHECK(t_reads <= t_serial);
    CHECK(t_reads >= compute);
    if (t_reads < t_serial) ++faster;
    const auto op_class = compute::build_access_program(trace, s, op, serial.compute).op_class;
    if (op_class == compute::OpClass::Gemm) {
      CHECK(t_gemm == t_reads);
      ++gemm;
    } else {
      CHECK(t_gemm == t_serial);
      ++other;
    }
  }
  CHECK(gemm >= 3);
  CHECK(other >= 3);
  CHECK(faster >= gemm + other - 2);  // every op writes; a few write what they just read
}

TEST_CASE("a profile drives every op of a schedule, and a missing op is named") {
  const auto trace = mlp();
  const auto s = sgd_foreach(trace);
  const auto m = test::defaults::tiny_cpu().memory(50, 8).build();
  exec::OpProfile profile = stepped_profile(trace, s, m.compute.threads_per_op);
  const auto distinct = exec::distinct_ops(trace, s);
  exec::ProfiledCompute pc(profile, m, no_warmup());
  const auto compute = pc.op_times(trace, s).compute;
  CHECK(pc.solved() == int(distinct.size()));
  CHECK(pc.inexact().empty());
  // Each op alone with its solved compute takes its measured time.
  for (const auto& op : s.ops) {
    if (op.kernels == 0) continue;
    const auto sig = compute::op_signature(trace, s, op).key;
    const Tick measured = profile.find(sig)->median;
    const auto iso = exec::isolated_schedule(s, op.id, exec::kIsolationRepeats);
    const Tick back = exec::simulate_isolated(trace, iso, m, no_warmup(), compute[op.id]);
    CHECK(std::abs(back - measured) <= std::max<Tick>(ns(1), measured / 10000));
  }
  // Measured on other threads than the machine's ops run on: refused, naming the fix.
  {
    exec::OpProfile other = profile;
    other.threads = m.compute.threads_per_op + 1;
    CHECK_THROWS_WITH(exec::ProfiledCompute(other, m, no_warmup()),
                      Catch::Contains("p.json: threads: expected 1 (compute.threads_per_op") &&
                          Catch::Contains("fusim profile --threads 1") && Catch::Contains("got 2"));
  }
  // A profile of another optimizer, or one that lacks an op, is refused by name.
  profile.optimizer = "adam";
  exec::ProfiledCompute wrong(profile, m, no_warmup());
  CHECK_THROWS_WITH(wrong.op_times(trace, s),
                    Catch::Contains("p.json: optimizer: expected \"sgd\""));
  profile.optimizer = "sgd";
  profile.ops.pop_back();
  exec::ProfiledCompute partial(profile, m, no_warmup());
  CHECK_THROWS_WITH(partial.op_times(trace, s),
                    Catch::Contains("p.json: ops: expected a measurement of every op"));
}

TEST_CASE("profile files: round trip and strict reading") {
  exec::OpProfile p;
  p.trace = "t.json";
  p.threads = 2;
  p.optimizer = "adam";
  p.impl = "loop";
  exec::ProfiledOp op;
  op.signature = "00112233aabbccdd";
  op.kind = "F";
  op.op = "conv2d";
  op.median = ns(812345);
  op.p25 = ns(800000);
  op.p75 = ns(830000);
  op.repeats = 9;
  p.ops.push_back(op);
  const auto back = exec::parse_op_profile(exec::op_profile_json(p), "p.json");
  REQUIRE(back.ops.size() == 1);
  CHECK(back.ops[0].median == ns(812345));
  CHECK(back.ops[0].p75 == ns(830000));
  CHECK(back.impl == "loop");
  auto doc = exec::op_profile_json(p);
  doc["ops"].push_back(doc["ops"][0]);
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    Catch::Contains("p.json: ops[1].signature"));
  doc = exec::op_profile_json(p);
  doc["format"] = "fusim-trace";
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    Catch::Contains("p.json: format: expected \"fusim-profile\""));
  doc = exec::op_profile_json(p);
  doc["ops"][0]["median_ns"] = -1;
  CHECK_THROWS_AS(exec::parse_op_profile(doc, "p.json"), InputError);
}

TEST_CASE("a profile's cold times scale each op's simulated penalty to the measured one") {
  const auto trace = mlp();
  const auto s = sgd_foreach(trace);
  const auto m = test::defaults::tiny_cpu().memory(50, 8).build();
  const exec::OpProfile warm = stepped_profile(trace, s, m.compute.threads_per_op);
  // The model's cold penalty of each op at its solved compute, S_cold - S_warm.
  exec::ProfiledCompute solver(warm, m, no_warmup());
  const auto c = solver.op_times(trace, s).compute;
  const auto penalty = [&](int id) {
    const Tick cold = exec::simulate_isolated(trace, exec::isolated_schedule(s, id, 1), m,
                                              no_warmup(), c[std::size_t(id)]);
    const Tick hot =
        exec::simulate_isolated(trace, exec::isolated_schedule(s, id, exec::kIsolationRepeats), m,
                                no_warmup(), c[std::size_t(id)]);
    return cold - hot;
  };
  std::vector<int> first_of;  // an op id per profiled signature, in profile order
  for (const auto& d : exec::distinct_ops(trace, s)) first_of.push_back(d.op);
  for (double k : {3.0, 0.5}) {
    INFO("measured penalty = " << k << " x simulated");
    exec::OpProfile profile = warm;
    profile.evict_bytes = std::int64_t(1) << 30;
    int scaled = 0;
    for (std::size_t i = 0; i < profile.ops.size(); ++i) {
      auto& p = profile.ops[i];
      p.cold_median = p.median + Tick(k * double(penalty(first_of[i])) + 0.5);
      p.cold_repeats = 3;
    }
    exec::ProfiledCompute pc(profile, m, no_warmup());
    pc.op_times(trace, s);
    for (double scale : pc.penalty_scales()) CHECK(scale == Approx(k).epsilon(1e-3));
    for (std::size_t i = 0; i < profile.ops.size(); ++i) {
      const int id = first_of[i];
      const Tick sim_penalty = penalty(id);
      if (sim_penalty <= std::max<Tick>(ns(1), profile.ops[i].median / 100)) continue;
      ++scaled;
      const Tick t_warm = profile.ops[i].median, t_cold = profile.ops[i].cold_median;
      const Tick tol = std::max<Tick>(ns(2), t_cold / 1000);
      // Run alone on empty caches the op takes its measured cold time (k >= 1: exactly, by
      // a delay; k < 1: compute taken off, so no slower than the model and no faster than
      // measured) ...
      const auto cold_iso = exec::isolated_schedule(s, id, 1);
      const auto cold = exec::simulate_profiled(trace, cold_iso, m, no_warmup(), &pc);
      const Tick t = cold.result.per_op.back().end - cold.result.per_op.back().start;
      if (k >= 1) {
        CHECK(std::abs(t - t_cold) <= tol);
      } else {
        CHECK(t >= t_cold - tol);
        CHECK(t <= t_cold + sim_penalty / 2 + tol);
      }
      // ... and repeated, its warm run its measured warm time.
      const auto warm_iso = exec::isolated_schedule(s, id, exec::kIsolationRepeats);
      const auto hot = exec::simulate_profiled(trace, warm_iso, m, no_warmup(), &pc);
      const Tick h = hot.result.per_op.back().end - hot.result.per_op.back().start;
      CHECK(std::abs(h - t_warm) <= tol);
    }
    CHECK(scaled >= 3);
    CHECK(int(pc.penalty_scales().size()) == scaled);
  }
  // Strict reading: cold times need the eviction size, and then every op has one.
  exec::OpProfile p = warm;
  p.evict_bytes = 512 << 20;
  for (auto& op : p.ops) {
    op.cold_median = op.median * 2;
    op.cold_repeats = 3;
  }
  const auto back = exec::parse_op_profile(exec::op_profile_json(p), "p.json");
  CHECK(back.evict_bytes == 512 << 20);
  CHECK(back.ops[1].cold_median == p.ops[1].cold_median);
  auto doc = exec::op_profile_json(p);
  doc.erase("evict_bytes");
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    "p.json: ops[0].cold_median_ns: expected no cold time in a profile without "
                    "a positive top-level \"evict_bytes\"");
  doc = exec::op_profile_json(p);
  doc["ops"][1].erase("cold_median_ns");
  CHECK_THROWS_WITH(exec::parse_op_profile(doc, "p.json"),
                    Catch::StartsWith("p.json: ops[1]: expected a \"cold_median_ns\""));
}

TEST_CASE("profiles measured before and after the steps: their mean, and the drift between them") {
  exec::OpProfile before, after;
  for (auto* p : {&before, &after}) {
    p->evict_bytes = 1 << 20;
    for (int i = 0; i < 2; ++i) {
      exec::ProfiledOp o;
      o.signature = "s" + std::to_string(i);
      o.per_step = i + 1;
      o.repeats = 5;
      o.cold_repeats = 3;
      p->ops.push_back(o);
    }
  }
  // Before: 10 and 20 us (per step 10 + 2 x 20 = 50); after: 12 and 22 (12 + 44 = 56).
  before.ops[0].median = us(10), before.ops[1].median = us(20);
  after.ops[0].median = us(12), after.ops[1].median = us(22);
  before.ops[0].p25 = us(9), after.ops[0].p25 = us(11);
  before.ops[0].p75 = us(11), after.ops[0].p75 = us(14);
  before.ops[0].cold_median = us(30), after.ops[0].cold_median = us(40);
  before.ops[1].cold_median = us(50), after.ops[1].cold_median = us(50);
  CHECK(exec::profile_drift(before, after) == Approx(56.0 / 50.0 - 1.0));
  const exec::OpProfile mean = exec::bracket_profiles(before, after);
  CHECK(mean.ops[0].median == us(11));
  CHECK(mean.ops[1].median == us(21));
  CHECK(mean.ops[0].p25 == us(9));
  CHECK(mean.ops[0].p75 == us(14));
  CHECK(mean.ops[0].repeats == 10);
  CHECK(mean.ops[0].cold_median == us(35));
  CHECK(mean.ops[0].cold_repeats == 6);
}

TEST_CASE("switch costs: an update after a non-update op and the op after an update, by hand") {
  // The MLP above, 2 steps. Eager: ... Bw fc1, U fc1, U fc2 | F fc1 ...: one update after a
  // backward op per step and the next step's first forward after an update. Backward-fused:
  // ... Bw fc2, U fc2, Bx act, Bw fc1, U fc1 | F fc1 ...: two of each per step.
  const auto trace = mlp();
  auto schedule_of = [&](schedule::Ordering ordering) {
    schedule::ScheduleOptions so;
    so.optimizer = "sgd";
    so.impl = schedule::OptimizerImpl::Foreach;
    so.ordering = ordering;
    so.steps = 2;
    return schedule::build_schedule(trace, so);
  };
  const auto eager = schedule_of(schedule::Ordering::Eager);
  const auto fused = schedule_of(schedule::Ordering::BackwardFused);
  compute::OpCostModel m;
  m.families["switch.U"].fixed_ns = 1000;
  m.families["switch.after_U"].fixed_ns = 500;
  auto total = [&](const schedule::Schedule& s, const compute::OpCostModel& model) {
    Tick t = 0;
    for (const auto& op : s.ops) t += compute::switch_cost(model, s, op);
    return t;
  };
  // Eager: U fc1 at both steps (2 x 1000), F fc1 of step 1 (500).
  CHECK(total(eager, m) == ns(2500));
  // Backward-fused: U fc2, U fc1 per step (4 x 1000); Bx act per step and F fc1 of step 1
  // (3 x 500).
  CHECK(total(fused, m) == ns(5500));
  CHECK(total(fused, compute::OpCostModel{}) == 0);
  // The schedule's optimizer's own families win over the general ones: SGD's update 2000.
  compute::OpCostModel per_optimizer = m;
  per_optimizer.families["switch.U.sgd"].fixed_ns = 2000;
  per_optimizer.families["switch.U.adam"].fixed_ns = 7000;
  CHECK(total(eager, per_optimizer) == ns(2 * 2000 + 500));
  // In a simulation on a CPU, each switch adds to its op's time before its work: with only
  // the switch families (every op otherwise on the class-efficiency path), the step of
  // backward-fused grows by 2 x 1000 + 2 x 500 ns and eager's by 1000 + 500.
  nlohmann::json doc = test::defaults::tiny_cpu().json();
  const auto plain = exec::parse_machine(doc, "tiny.json");
  doc["compute"]["op_costs"] = {{"switch.U", {{"fixed_ns", 1000}, {"efficiency", 1}}},
                                {"switch.after_U", {{"fixed_ns", 500}, {"efficiency", 1}}}};
  const auto with = exec::parse_machine(doc, "tiny.json");
  exec::SimOptions o;
  o.warmup_steps = 1;
  auto step = [&](const schedule::Schedule& s, const exec::Machine& machine) {
    return exec::simulate(trace, s, machine, o).step_times.at(0);
  };
  CHECK(step(eager, with) - step(eager, plain) == ns(1500));
  CHECK(step(fused, with) - step(fused, plain) == ns(3000));
}

TEST_CASE("switch costs grow with the MiB the update touches") {
  // F, U, F on one stream; the update reads and writes two 1 MiB tensors (each counted once).
  schedule::Schedule s;
  for (int t = 0; t < 2; ++t) {
    schedule::Tensor x;
    x.id = t;
    x.bytes = 1 << 20;
    x.address = std::uint64_t(t) << 20;
    s.tensors.push_back(x);
  }
  for (int i = 0; i < 3; ++i) {
    schedule::Op op;
    op.id = i;
    op.kind = i == 1 ? schedule::OpKind::Update : schedule::OpKind::Forward;
    op.layer = 0;
    if (i == 1)
      op.passes.push_back({{{0, AccessMode::Read},
                            {1, AccessMode::Read},
                            {0, AccessMode::Write},
                            {1, AccessMode::Write}},
                           0});
    s.ops.push_back(op);
  }
  CHECK(compute::touched_bytes(s, s.ops[1]) == 2 << 20);
  compute::OpCostModel m;
  m.families["switch.U"].fixed_ns = 1000;
  m.families["switch.U"].per_mib_ns = 300;
  m.families["switch.after_U"].fixed_ns = 500;
  m.families["switch.after_U"].per_mib_ns = 100;
  CHECK(compute::switch_cost(m, s, s.ops[0]) == 0);               // nothing before it
  CHECK(compute::switch_cost(m, s, s.ops[1]) == ns(1000 + 600));  // 2 MiB x 300
  CHECK(compute::switch_cost(m, s, s.ops[2]) == ns(500 + 200));   // the update's 2 MiB x 100
  // An update after another layer's op (forward-fused: the forward before it) pays the
  // fixed part alone: the per-MiB part was measured after the update's own backward.
  s.ops[0].layer = 1;
  CHECK(compute::switch_cost(m, s, s.ops[1]) == ns(1000));
  CHECK(compute::switch_cost(m, s, s.ops[2]) == ns(500 + 200));  // the op after it: unchanged
}

TEST_CASE("switch costs: the most specific family first, by optimizer and layer op") {
  // F, U, F on one stream; the update (of a conv2d layer) reads and writes a 1 MiB tensor.
  schedule::Schedule s;
  s.optimizer = "sgd";
  schedule::Tensor x;
  x.bytes = 1 << 20;
  s.tensors.push_back(x);
  for (int i = 0; i < 3; ++i) {
    schedule::Op op;
    op.id = i;
    op.kind = i == 1 ? schedule::OpKind::Update : schedule::OpKind::Forward;
    op.layer = 0;
    op.layer_op = workload::OpKind::Conv2d;
    if (i == 1) op.passes.push_back({{{0, AccessMode::Read}, {0, AccessMode::Write}}, 0});
    s.ops.push_back(op);
  }
  compute::OpCostModel m;
  m.families["switch.U"].fixed_ns = 1000;
  m.families["switch.U"].per_mib_ns = 100;
  m.families["switch.after_U"].fixed_ns = 500;
  CHECK(compute::switch_cost(m, s, s.ops[1]) == ns(1100));
  // The layer op's (calibrate's CNN probe) wins over the general one...
  m.families["switch.U.conv2d"].fixed_ns = 6000;
  m.families["switch.U.conv2d"].per_mib_ns = 100;
  CHECK(compute::switch_cost(m, s, s.ops[1]) == ns(6100));
  // ... the optimizer's own over the layer op's general one...
  m.families["switch.U.sgd"].fixed_ns = 2000;
  CHECK(compute::switch_cost(m, s, s.ops[1]) == ns(2000));
  // ... and the optimizer's for that layer op over everything.
  m.families["switch.U.sgd.conv2d"].fixed_ns = 300;
  CHECK(compute::switch_cost(m, s, s.ops[1]) == ns(300));
  // Another layer op takes the optimizer's; the op after an update has no per-layer-op family.
  s.ops[1].layer_op = workload::OpKind::Linear;
  CHECK(compute::switch_cost(m, s, s.ops[1]) == ns(2000));
  m.families["switch.after_U.conv2d"].fixed_ns = 9999;
  CHECK(compute::switch_cost(m, s, s.ops[2]) == ns(500));
}
