// find_cache_levels: cache levels from a pointer-chase latency curve, hints only as snaps.
#include <catch2/catch.hpp>
#include <cmath>

#include "backend/calibration.h"

using fusim::backend::find_cache_levels;
using fusim::backend::latency_plateaus;
using fusim::backend::LatencyPoint;

namespace {
constexpr std::int64_t KiB = 1024, MiB = 1024 * KiB;

// Footprints 4 KiB .. 256 MiB, 2 points per octave, as calibrate_host measures them.
std::vector<std::int64_t> footprints() {
  std::vector<std::int64_t> v;
  for (double b = 4096; b <= double(256 * MiB) * 1.01; b *= std::sqrt(2.0))
    v.push_back(std::int64_t(b) / 64 * 64);
  return v;
}

// A step curve: latency of the first level whose size holds the footprint.
std::vector<LatencyPoint> step_curve(const std::vector<std::pair<std::int64_t, double>>& levels,
                                     double dram_ns) {
  std::vector<LatencyPoint> c;
  for (auto b : footprints()) {
    double ns = dram_ns;
    for (auto [size, lat] : levels)
      if (b <= size) {
        ns = lat;
        break;
      }
    c.push_back({b, ns});
  }
  return c;
}
}  // namespace

TEST_CASE("a measured curve whose L3 is far smaller than the system lists keeps its L3") {
  // This 2-core VM's curve (fusim calibrate, 2026-12-01; sysfs lists L1d 48 KiB, L2 2 MiB,
  // L3 260 MiB): L1 ~1.8 ns, L2 ~5.6 ns (TLB misses lift its far end), an L3 plateau at
  // ~40 ns up to ~8 MiB (the VM's share), DRAM ~165 ns. The old reader trusted the 260 MiB
  // hint, found no plateau below 32 MiB and dropped the L3: everything past 2 MiB went to DRAM.
  const std::vector<double> ns{1.75,  1.74,  1.85,   1.78,   1.76,   1.79,   1.79,   1.95,
                               5.57,  5.62,  5.72,   5.44,   5.56,   5.67,   6.82,   7.26,
                               8.01,  22.21, 35.56,  39.52,  40.55,  47.98,  79.15,  136.33,
                               146.98, 147.15, 163.36, 162.23, 170.72, 164.06, 174.97, 173.39,
                               168.54};
  const auto fp = footprints();
  REQUIRE(fp.size() == ns.size());
  std::vector<LatencyPoint> curve;
  for (std::size_t i = 0; i < fp.size(); ++i) curve.push_back({fp[i], ns[i]});

  const auto plateaus = latency_plateaus(curve);
  REQUIRE(plateaus.size() == 4);  // L1, L2, L3, DRAM; 8.01 and 22.21 and 79.15 are transitions
  CHECK(plateaus[0].end == 8);

  const auto levels = find_cache_levels(curve, {48 * KiB, 2 * MiB, 260 * MiB}, {12, 16, 20});
  REQUIRE(levels.size() == 3);
  CHECK(levels[0].name == "L1");
  CHECK(levels[0].size == 48 * KiB);  // crossing at ~53 KiB: the hint, within 2x
  CHECK(levels[0].assoc == 12);
  CHECK(levels[0].latency_ns == Approx(1.79));  // the upper median of the 8 plateau points
  CHECK(levels[1].name == "L2");
  CHECK(levels[1].size == 2 * MiB);  // crossing near 1.25 MiB (sqrt(5.67 x 40.55) = 15.2 ns)
  CHECK_FALSE(levels[1].shared);
  CHECK(levels[2].name == "LLC");
  // sqrt(40.55 x 164.06) = 81.6 ns is crossed just past 8 MiB (79.15): 8 MiB, not the 260 MiB
  // hint.
  CHECK(levels[2].size == 8 * MiB);
  CHECK(levels[2].shared);
  CHECK(levels[2].latency_ns == Approx(40.55));  // the upper median of its 4 points
}

TEST_CASE("hints are snapped to by size, not by index") {
  // A clean 3-level machine: L1 32 KiB 1 ns, L2 1 MiB 4 ns, L3 32 MiB 20 ns, DRAM 100 ns.
  const auto curve = step_curve({{32 * KiB, 1.0}, {1 * MiB, 4.0}, {32 * MiB, 20.0}}, 100.0);
  SECTION("right hints are taken exactly") {
    const auto levels = find_cache_levels(curve, {32 * KiB, 1 * MiB, 32 * MiB}, {8, 16, 11});
    REQUIRE(levels.size() == 3);
    CHECK(levels[0].size == 32 * KiB);
    CHECK(levels[1].size == 1 * MiB);
    CHECK(levels[2].size == 32 * MiB);
    CHECK(levels[2].assoc == 11);
    CHECK(levels[1].latency_ns == 4.0);
  }
  SECTION("a missing L2 hint does not shift the L3 hint onto the L2") {
    const auto levels = find_cache_levels(curve, {32 * KiB, 32 * MiB}, {8, 11});
    REQUIRE(levels.size() == 3);
    // The L2 crossing lies between 1 MiB and 1.41 MiB: rounded to 1 MiB.
    CHECK(levels[1].size == 1 * MiB);
    CHECK(levels[2].size == 32 * MiB);
  }
  SECTION("without hints the sizes are the rounded crossings") {
    const auto levels = find_cache_levels(curve, {}, {});
    REQUIRE(levels.size() == 3);
    CHECK(levels[0].size == 32 * KiB);
    CHECK(levels[2].size == 32 * MiB);
  }
}

TEST_CASE("a two-level machine has two levels whatever the hints list") {
  const auto curve = step_curve({{64 * KiB, 1.5}, {4 * MiB, 10.0}}, 90.0);
  const auto levels = find_cache_levels(curve, {64 * KiB, 4 * MiB, 64 * MiB}, {8, 16, 16});
  REQUIRE(levels.size() == 2);
  CHECK(levels[1].name == "LLC");
  CHECK(levels[1].size == 4 * MiB);
}
