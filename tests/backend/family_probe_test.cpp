// `fusim calibrate`'s grid (backend/family_probe.h): every probe is a valid trace whose
// schedule has the ops it measures, and together they cover the families the issue asks
// for (linear and conv2d incl. depthwise, each F/Bx/Bw; norms, pooling, elementwise,
// softmax, attention, the loss; every optimizer's update per implementation).
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "backend/family_probe.h"
#include "backend/optimizer_config.h"
#include "workload/cost.h"
#include "workload/trace.h"

using namespace fusim;

TEST_CASE("the calibration grid: valid probes covering every family") {
  const auto grid = backend::family_probes();
  std::map<std::string, int> points;
  for (const auto& p : grid) {
    INFO(p.what);
    REQUIRE(p.schedules.size() == 1);
    CHECK_FALSE(p.families.empty());
    // A layer probe measures F, Bx and Bw where it has weights (the layer norm before it
    // makes its input need a gradient); an update or loss probe one op.
    if (p.update || p.loss) CHECK(p.families.size() == 1);
    for (const auto& f : p.families) ++points[f];
  }
  for (const char* layer : {"linear", "conv2d", "conv2d_grouped"})
    for (const char* kind : {"F", "Bx", "Bw"}) {
      INFO(layer << "." << kind);
      CHECK(points[std::string(layer) + "." + kind] >= 4);
    }
  CHECK(points["linear.F"] == 12);
  CHECK(points["conv2d.F"] == 14);  // 7x7 stem, 3x3 at every stage, strided 3x3 and 1x1, 1x1
  // Grouped and depthwise: 16 shapes, whose Bw ops split by oneDNN's JIT depthwise kernel's
  // limits: 5x5 (four shapes), 7x7 (two) and 3x3 on 2x2 maps (two) take the reference path.
  CHECK(points["conv2d_grouped.F"] == 16);
  CHECK(points["conv2d_grouped.Bw"] == 8);
  CHECK(points["conv2d_dw_ref.Bw"] == 8);
  // bmm: six shapes, F and Bx (no weights); the probed layer reads the layer norm's output
  // and its transpose (a permute view before it), in either order.
  CHECK(points["bmm.F"] == 6);
  CHECK(points["bmm.Bx"] == 6);
  CHECK_FALSE(points.count("bmm.Bw"));
  int transposed_second = 0, transposed_first = 0;
  for (const auto& p : grid) {
    if (p.families.empty() || p.families.front() != "bmm.F") continue;
    INFO(p.what);
    REQUIRE(p.probed_layer == 2);
    const auto& bmm = p.trace.layers.at(2);
    REQUIRE(bmm.op == workload::OpKind::Bmm);
    REQUIRE(p.trace.layers.at(1).op == workload::OpKind::Permute);
    REQUIRE(bmm.inputs.size() == 2);
    const auto& a = workload::input_shape(p.trace, bmm.inputs[0]);
    const auto& b = workload::input_shape(p.trace, bmm.inputs[1]);
    // [B, L, d] x [B, d, L] -> [B, L, L], or [B, d, L] x [B, L, d] -> [B, d, d].
    CHECK(a[2] == b[1]);
    CHECK(bmm.output == workload::Shape{a[0], a[1], b[2]});
    ++(a[1] < a[2] ? transposed_first : transposed_second);
  }
  CHECK(transposed_second == 4);
  CHECK(transposed_first == 2);
  for (const char* f : {"batch_norm.F",
                        "batch_norm.Bx",
                        "layer_norm.F",
                        "max_pool2d.F",
                        "max_pool2d.Bx",
                        "avg_pool2d.F",
                        "adaptive_avg_pool2d.F",
                        "relu.F",
                        "relu.Bx",
                        "gelu.F",
                        "add.F",
                        "dropout.F",
                        "softmax.F",
                        "scaled_dot_product_attention.F",
                        "scaled_dot_product_attention.Bx",
                        "silu.F",
                        "silu.Bx",
                        "sigmoid.F",
                        "relu6.Bx",
                        "tanh.F",
                        "mul.F",
                        "mul.Bx",
                        "concat.F",
                        "concat.Bx",
                        "generic_elementwise.F",
                        "generic_data_movement.Bx"}) {
    INFO(f);
    CHECK(points[f] >= 3);
  }
  // Batch norm spans channels at equal elements (its per-channel term) and planes that are
  // and are not whole vectors (its per-ragged-plane term: two of 2x2, 3x3, 7x7 and 14x14 of its
  // 13 shapes); views are measured for their call alone (reshape and permute, two sizes
  // each).
  CHECK(points["batch_norm.Bx"] == 13);
  // Softmax over rows of 49 to 131072, layer norm over 64 to 8192 rows, adaptive pooling
  // over 128 to 7680 planes: each family's per-row (per-plane) term is seen.
  CHECK(points["softmax.F"] == 7);
  CHECK(points["layer_norm.F"] == 5);
  CHECK(points["adaptive_avg_pool2d.F"] == 5);
  CHECK(points["view.F"] == 4);
  CHECK(points["view.Bx"] == 4);
  CHECK(points["cross_entropy.L"] == 6);
  for (const auto& opt : backend::optimizer_names())
    for (const char* impl : {"loop", "foreach", "fused"}) {
      INFO(opt << " " << impl);
      CHECK(points["update." + opt + "." + impl] == 4);  // 4 sizes
    }
}

TEST_CASE("default.<kind>: the median fixed cost of the elementwise-like families of a kind") {
  compute::OpCostModel model;
  auto fixed = [](double ns) {
    compute::FamilyCost f;
    f.fixed_ns = ns;
    return f;
  };
  model.families = {{"relu.F", fixed(1000)},
                    {"gelu.F", fixed(3000)},
                    {"add.F", fixed(2000)},
                    {"relu.Bx", fixed(4000)},
                    {"batch_norm.Bx", fixed(6000)},
                    // Not elementwise-like: GEMMs, updates, views, the loss.
                    {"linear.F", fixed(50000)},
                    {"conv2d_grouped.Bx", fixed(90000)},
                    {"conv2d_dw_ref.Bw", fixed(80000)},
                    {"update.adam.foreach", fixed(20000)},
                    {"view.F", fixed(10)},
                    {"cross_entropy.L", fixed(7000)}};
  backend::add_default_families(model);
  REQUIRE(model.find("default.F"));
  CHECK(model.find("default.F")->fixed_ns == 2000);  // median of 1000, 2000, 3000
  CHECK(model.find("default.F")->points == 3);
  CHECK(model.find("default.Bx")->fixed_ns == 5000);  // mean of the middle two
  CHECK(model.find("default.Bw") == nullptr);
  CHECK(model.find("default.L") == nullptr);
}

TEST_CASE("a point whose compute could not be solved is left out of its family's fit") {
  auto point = [](double ns) {
    compute::CostPoint p;
    p.time_ns = ns;
    return p;
  };
  const std::vector<compute::CostPoint> pts{point(1000), point(2000), point(12), point(3000)};
  // The third: the model's memory alone exceeded the measurement (compute 0, not exact).
  const auto kept = backend::informative_points(pts, {true, true, false, true});
  REQUIRE(kept.size() == 3);
  CHECK(kept[2].time_ns == 3000);
  // Fewer than two exact points: all are kept (a fit needs something).
  CHECK(backend::informative_points(pts, {false, true, false, false}).size() == 4);
}

TEST_CASE("calibrate: each probe's times normalized to the host's median speed around it") {
  // Samples before probes 0..3 and after the last: 700, 700, 1000, 1000, 720. Median 720:
  // probe 0 ran at (700 + 700) / 2 / 720, probe 1 between 700 and 1000 (850 / 720), probes 2
  // at 1000 / 720 (the host 39% slower: its times are divided by 1.39), probe 3 at 860 / 720.
  const auto f = backend::speed_factors({700, 700, 1000, 1000, 720}, 4);
  REQUIRE(f.size() == 4);
  CHECK(f[0] == Approx(700.0 / 720));
  CHECK(f[1] == Approx(850.0 / 720));
  CHECK(f[2] == Approx(1000.0 / 720));
  CHECK(f[3] == Approx(860.0 / 720));
  // An even count: the median is the mean of the middle two (700 and 800 -> 750).
  const auto g = backend::speed_factors({600, 700, 800, 900}, 3);
  CHECK(g[0] == Approx(650.0 / 750));
  // Not sampled (or a count that does not match the probes): every factor 1.
  CHECK(backend::speed_factors({}, 3) == std::vector<double>{1, 1, 1});
  CHECK(backend::speed_factors({700, 800}, 3) == std::vector<double>{1, 1, 1});
}
