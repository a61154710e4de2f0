// `fusim calibrate`'s grid (backend/family_probe.h): every probe is a valid trace whose
// schedule has the ops it measures, and together they cover the families the issue asks
// for (linear and conv2d incl. depthwise, each F/Bx/Bw; norms, pooling, elementwise,
// softmax, attention, the loss; every optimizer's update per implementation).
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "backend/family_probe.h"
#include "backend/optimizer_config.h"

using namespace fusim;

TEST_CASE("the calibration grid: valid probes covering every family") {
  const auto grid = backend::family_probes();
  std::map<std::string, int> points;
  for (const auto& p : grid) {
    INFO(p.what);
    REQUIRE(p.schedules.size() == 1);
    CHECK_FALSE(p.families.empty());
    // A layer probe measures F, Bx and Bw (the layer norm before it makes its input need a
    // gradient; linear and conv2d have weights); an update or loss probe one op.
    if (p.update || p.loss) CHECK(p.families.size() == 1);
    for (const auto& f : p.families) ++points[f];
  }
  for (const char* layer : {"linear", "conv2d", "conv2d_grouped"})
    for (const char* kind : {"F", "Bx", "Bw"}) {
      INFO(layer << "." << kind);
      CHECK(points[std::string(layer) + "." + kind] >= 4);
    }
  CHECK(points["linear.F"] == 12);
  CHECK(points["conv2d.F"] == 10);  // 7x7 stem, 3x3 at every stage, strided, 1x1
  for (const char* f : {"batch_norm.F", "batch_norm.Bx", "layer_norm.F", "max_pool2d.F",
                        "max_pool2d.Bx", "avg_pool2d.F", "adaptive_avg_pool2d.F", "relu.F",
                        "relu.Bx", "gelu.F", "add.F", "dropout.F", "softmax.F",
                        "scaled_dot_product_attention.F", "scaled_dot_product_attention.Bx"}) {
    INFO(f);
    CHECK(points[f] >= 3);
  }
  CHECK(points["cross_entropy.L"] == 4);
  for (const auto& opt : backend::optimizer_names())
    for (const char* impl : {"loop", "foreach", "fused"}) {
      INFO(opt << " " << impl);
      CHECK(points["update." + opt + "." + impl] == 4);  // 4 sizes
    }
}
