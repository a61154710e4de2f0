// find_cache_levels: cache levels from a pointer-chase latency curve, hints only as snaps.
#include <catch2/catch.hpp>
#include <cmath>

#include "backend/calibration.h"

using fusim::backend::add_streaming_level;
using fusim::backend::BandwidthPoint;
using fusim::backend::best_of_sweeps;
using fusim::backend::extend_shared_level;
using fusim::backend::find_cache_levels;
using fusim::backend::latency_plateaus;
using fusim::backend::LatencyPoint;
using fusim::backend::MeasuredLevel;
using fusim::backend::stream_port_widths;
using fusim::backend::streaming_level;

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
// A triad curve as calibrate sweeps it: GB/s at 1 MiB .. 1 GiB, two points per octave,
// whole 4 KiB pages.
std::vector<BandwidthPoint> triad_curve(const std::vector<double>& gbs) {
  std::vector<BandwidthPoint> c;
  for (std::size_t i = 0; i < gbs.size(); ++i)
    c.push_back({std::int64_t(std::pow(2.0, 20 + i / 2.0)) / 4096 * 4096, gbs[i]});
  return c;
}

// The 2-core EPYC VM's 2-thread triad at 2026-12-07 12:11 (each point the best of 3 sweeps),
// when the chase crossed at 8.1 MiB.
std::vector<BandwidthPoint> triad_at_1211() {
  return triad_curve({180.9, 178.2, 176.3, 173.1, 177.7, 165.0, 162.9, 158.4, 152.7, 118.1, 92.0,
                      64.3,  48.6,  45.6,  42.4,  39.8,  39.0,  39.6,  39.2,  40.5,  40.0});
}
}  // namespace

namespace {
// This 2-core VM's pointer-chase curve (fusim calibrate, 2026-12-01), at footprints().
std::vector<LatencyPoint> this_host_latency_curve() {
  const std::vector<double> ns{
      1.75,  1.74,   1.85,   1.78,   1.76,   1.79,   1.79,   1.95,   5.57,   5.62,   5.72,
      5.44,  5.56,   5.67,   6.82,   7.26,   8.01,   22.21,  35.56,  39.52,  40.55,  47.98,
      79.15, 136.33, 146.98, 147.15, 163.36, 162.23, 170.72, 164.06, 174.97, 173.39, 168.54};
  const auto fp = footprints();
  std::vector<LatencyPoint> curve;
  for (std::size_t i = 0; i < fp.size() && i < ns.size(); ++i) curve.push_back({fp[i], ns[i]});
  return curve;
}
}  // namespace

TEST_CASE("a measured curve whose L3 is far smaller than the system lists keeps its L3") {
  // This 2-core VM's curve (fusim calibrate, 2026-12-01; sysfs lists L1d 48 KiB, L2 2 MiB,
  // L3 260 MiB): L1 ~1.8 ns, L2 ~5.6 ns (TLB misses lift its far end), an L3 plateau at
  // ~40 ns up to ~8 MiB (the VM's share), DRAM ~165 ns. The old reader trusted the 260 MiB
  // hint, found no plateau below 32 MiB and dropped the L3: everything past 2 MiB went to DRAM.
  const auto curve = this_host_latency_curve();
  REQUIRE(curve.size() == footprints().size());

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

TEST_CASE("a shared level takes the system's size only within one step of the curve") {
  // The 2-core EPYC VM's pointer chase (fusim calibrate, 2026-12-07 10:24; sysfs lists L1d
  // 48 KiB, L2 1 MiB, L3 32 MiB), at footprints().
  const std::vector<double> ns{0.94,   0.96,   0.95,   0.95,   0.95,   0.96,  0.95,  0.96,   3.32,
                               3.32,   3.33,   3.32,   3.32,   3.32,   3.73,  4.86,  6.64,   9.82,
                               10.40,  11.43,  12.31,  12.83,  13.28,  13.90, 16.30, 114.63, 120.84,
                               128.41, 141.99, 147.14, 151.95, 155.41, 158.50};
  const auto fp = footprints();
  REQUIRE(fp.size() == ns.size());
  std::vector<LatencyPoint> curve;
  for (std::size_t i = 0; i < fp.size(); ++i) curve.push_back({fp[i], ns[i]});
  // Plateaus 0.95, 3.32, 11.43 (9.82 .. 16.30: 13.90's plateau is within 1.6x and joins
  // it), 141.99 and DRAM's 158.50: three levels.
  const auto levels = find_cache_levels(curve, {48 * KiB, 1 * MiB, 32 * MiB}, {12, 16, 16});
  REQUIRE(levels.size() == 3);
  // L1 crosses sqrt(0.95 x 3.32) = 1.78 ns at 52 KiB, L2 sqrt(3.32 x 11.43) = 6.16 ns at
  // 0.91 MiB: private levels, their hints within 2x.
  CHECK(levels[0].size == 48 * KiB);
  CHECK(levels[1].size == 1 * MiB);
  // The LLC crosses sqrt(11.43 x 141.99) = 40.29 ns between 16 MiB (16.30) and 22.6 MiB
  // (114.63) at 0.244 of the step: 17.4 MiB, 1.84x under the 32 MiB listed: the measured
  // share, rounded to a power of two.
  CHECK(levels[2].name == "LLC");
  CHECK(levels[2].shared);
  CHECK(levels[2].size == 16 * MiB);
  CHECK(levels[2].latency_ns == 11.43);
  CHECK(levels[2].how.find("the system lists 32MiB") != std::string::npos);

  SECTION("a hint within sqrt 2 of the crossing is taken") {
    const auto l = find_cache_levels(curve, {48 * KiB, 1 * MiB, 20 * MiB}, {12, 16, 20});
    REQUIRE(l.size() == 3);
    CHECK(l[2].size == 20 * MiB);  // 20 / 17.4 = 1.15
    CHECK(l[2].assoc == 20);
  }
  SECTION("one just past sqrt 2 is not") {
    const auto l = find_cache_levels(curve, {48 * KiB, 1 * MiB, 25 * MiB}, {12, 16, 20});
    REQUIRE(l.size() == 3);
    CHECK(l[2].size == 16 * MiB);  // 25 / 17.4 = 1.44
  }
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

TEST_CASE("the streaming level: a large cache whose latency is close to DRAM's") {
  // This VM's all-thread triad (2 threads, 2026-12-01, GB/s per total footprint in MiB):
  // ~50 GB/s up to 96 MiB, ~26 GB/s beyond, while its pointer chase reads ~150-170 ns from
  // 12 MiB on: the latency curve ends its caches at 8 MiB, streaming sees ~118 MiB.
  const std::vector<std::pair<int, double>> mib_gbs{
      {1, 59.3},   {2, 108.7},  {4, 75.5},   {6, 54.7},   {8, 52.5},  {12, 50.7},
      {16, 50.3},  {24, 52.6},  {32, 50.6},  {48, 52.9},  {64, 48.2}, {96, 47.3},
      {128, 31.7}, {192, 27.1}, {256, 25.7}, {384, 27.5}, {512, 24.9}};
  std::vector<BandwidthPoint> bw;
  for (auto [m, g] : mib_gbs) bw.push_back({m * MiB, g});
  const auto s = streaming_level(bw, 8 * MiB);
  REQUIRE(s);
  CHECK(s->dram_gbs == 25.7);    // median of the last three
  CHECK(s->cached_gbs == 50.6);  // median of 12..96 MiB, within 1.2x of 12 MiB's 50.7
  // sqrt(50.6 x 25.7) = 36.06 GB/s is crossed between 96 MiB (47.3) and 128 MiB (31.7), at
  // 0.7205 of that octave's log: 96 x (4/3)^0.7205 = 118.1 MiB.
  CHECK(s->size == 118 * MiB);

  auto levels =
      find_cache_levels(this_host_latency_curve(), {48 * KiB, 2 * MiB, 260 * MiB}, {12, 16, 20});
  REQUIRE(levels.size() == 3);
  add_streaming_level(levels, *s, this_host_latency_curve());
  REQUIRE(levels.size() == 4);
  CHECK(levels[2].name == "L3");
  CHECK(levels[2].shared);
  CHECK(levels[3].name == "LLC");
  CHECK(levels[3].size == 118 * MiB);
  // Median of the chase over [2 x 8 MiB, 118/2 MiB]: 146.98, 147.15, 162.23, 163.36.
  CHECK(levels[3].latency_ns == 162.23);

  SECTION("no streaming level where bandwidth falls with the latency curve's last level") {
    std::vector<BandwidthPoint> flat;
    for (auto [m, g] : mib_gbs) flat.push_back({m * MiB, m <= 8 ? g : 25.0});
    CHECK_FALSE(streaming_level(flat, 8 * MiB));
  }
}

TEST_CASE(
    "the triad curve is each footprint's best sweep, so one disturbed sweep does not size the "
    "LLC") {
  // The footprints calibrate sweeps: 1 MiB .. 1 GiB, two per octave, whole 4 KiB pages.
  std::vector<std::int64_t> bytes;
  for (int i = 0; i < 21; ++i)
    bytes.push_back(std::int64_t(std::pow(2.0, 20 + i / 2.0)) / 4096 * 4096);
  REQUIRE(bytes[9] == 23724032);
  // A quiet one-thread sweep shaped as the 2-core VM's of 2026-12-06 18:30 (~76 GB/s to
  // 8 MiB, falling through 12-32 MiB to DRAM's ~25).
  const std::vector<double> quiet_gbs{76, 76, 76, 76, 76, 76, 76, 64, 55, 42, 35,
                                      25, 25, 25, 25, 25, 25, 25, 25, 25, 25};
  auto sweep = [&](auto gbs_of) {
    std::vector<BandwidthPoint> s;
    for (std::size_t i = 0; i < bytes.size(); ++i) s.push_back({bytes[i], gbs_of(i)});
    return s;
  };
  const auto quiet = sweep([&](std::size_t i) { return quiet_gbs[i]; });
  const auto slower = sweep([&](std::size_t i) { return 0.95 * quiet_gbs[i]; });
  // Disturbed from 1 to 16 MiB, as the 17:32 sweep was (30.7 GB/s at 1 MiB, 31.7 at 16).
  const auto noisy = sweep([&](std::size_t i) { return i <= 8 ? 30.0 : quiet_gbs[i]; });

  // Alone, the disturbed sweep's first point at >= 1.5x DRAM (37.5 GB/s) is 22.6 MiB (42);
  // its plateau is 42 and 35 (within 1.2x of 42), under an octave: it would see no level.
  CHECK_FALSE(streaming_level(noisy, 512 * KiB));

  int disturbed = -1;
  const auto best = best_of_sweeps({noisy, slower, quiet}, &disturbed);
  REQUIRE(best.size() == bytes.size());
  for (std::size_t i = 0; i < best.size(); ++i) {
    CHECK(best[i].bytes == bytes[i]);
    CHECK(best[i].gbs == quiet_gbs[i]);
  }
  // The nine disturbed points are under 1/1.25 of the best; 0.95x is within the spread.
  CHECK(disturbed == 9);
  // The best curve's plateau is 1 .. 11.3 MiB (76 x 7, then 64; 55 is under 76 / 1.2),
  // median 76 GB/s, the threshold sqrt(76 x 25) = 43.6, crossed between 16 MiB (55) and
  // 22.6 MiB (42) at 0.877 of the step: 16 x 1.414^0.877 = 21.7 MiB.
  const auto s = streaming_level(best, 512 * KiB);
  REQUIRE(s);
  CHECK(s->cached_gbs == 76);
  CHECK(s->size == 22 * MiB);

  SECTION("sweeps of other footprints are refused") {
    auto shorter = quiet;
    shorter.pop_back();
    CHECK_THROWS_AS(best_of_sweeps({quiet, shorter}), std::invalid_argument);
  }
  SECTION("no sweeps, no curve") {
    CHECK(best_of_sweeps({}).empty());
  }
}

TEST_CASE("a slowly falling one-thread curve sizes no level from its slope") {
  // Two calibrate --threads 1 runs on the 2-core EPYC VM, 10 minutes apart (2026-12-06
  // 20:05 and 20:15, each the best of three sweeps), beyond the latency curve's 8 MiB L3.
  // Their points up to the last at >= 1.5x DRAM had medians of 47.2 and 42.4 GB/s and gave
  // 28 and 61 MiB (whether 46 MiB passed 1.5x DRAM decided it); their plateaus (the points
  // within 1.2x of the first) are under an octave: the L3's tail, no level in either.
  const std::vector<double> a{73.1, 73.8, 73.5, 71.8, 74.0, 73.6, 71.2, 68.3, 63.0, 47.2, 36.0,
                              34.2, 31.7, 28.0, 26.7, 22.5, 24.6, 25.6, 25.4, 25.9, 25.1};
  const std::vector<double> b{64.1, 70.6, 72.7, 73.2, 75.1, 71.8, 70.0, 65.4, 53.8, 42.4, 37.4,
                              34.3, 30.6, 26.4, 26.8, 21.7, 24.3, 24.1, 21.4, 22.8, 24.8};
  // a: DRAM 25.4 (median of 25.4, 25.9, 25.1); from 11.3 MiB: 68.3, 63.0, then 47.2, under
  // 68.3 / 1.2. b: DRAM 22.8; 65.4, then 53.8, under 65.4 / 1.2.
  CHECK_FALSE(streaming_level(triad_curve(a), 8 * MiB));
  CHECK_FALSE(streaming_level(triad_curve(b), 8 * MiB));
  // With a third point on the plateau (a's 22.6 MiB at 60 instead of 47.2), a level: median
  // 63.0, threshold sqrt(63 x 25.4) = 40.0, crossed between 22.6 MiB (60) and 32 MiB (36.0)
  // at (60 - 40.0) / (60 - 36.0) = 0.833 of the step: 22.63 x 1.4142^0.833 = 30.2 MiB.
  auto a3 = a;
  a3[9] = 60.0;
  const auto s = streaming_level(triad_curve(a3), 8 * MiB);
  REQUIRE(s);
  CHECK(s->cached_gbs == 63.0);
  CHECK(s->size == 30 * MiB);
}

TEST_CASE("a triad curve that falls steadily past the last level adds no streaming level") {
  // calibrate on the 2-core EPYC VM, 2026-12-07 (2 threads, each point the best of 3 sweeps,
  // GB/s per total footprint, 1 MiB .. 1 GiB).
  // 12:04, beyond the chase's 16 MiB: DRAM 45.6 (median of 46.0, 45.4, 45.6); the points at
  // >= 68.4 GB/s are 22.6 MiB (135.4), 32 MiB (102.3) and 45.3 MiB (70.7); within 1.2x of
  // 135.4 only the first.
  const auto at_1204 =
      triad_curve({239.6, 251.2, 273.4, 219.8, 205.9, 194.8, 192.0, 179.6, 176.7, 135.4, 102.3,
                   70.7,  60.1,  53.3,  50.5,  47.6,  45.7,  45.6,  45.6,  46.0,  45.4});
  CHECK_FALSE(streaming_level(at_1204, 16 * MiB));
  // 12:11, beyond the chase's 8 MiB: 158.4 at 11.3 MiB, 152.7, 118.1, 92.0: within 1.35x
  // (the latency plateaus' rise) three footprints, within 1.2x two.
  const auto at_1211 = triad_at_1211();
  CHECK_FALSE(streaming_level(at_1211, 8 * MiB));

  SECTION("three footprints within 1.2x are a plateau") {
    auto flat = at_1204;
    flat[10].gbs = 125.0;  // 135.4 / 125 = 1.08
    flat[11].gbs = 120.0;  // 135.4 / 120 = 1.13
    const auto s = streaming_level(flat, 16 * MiB);
    REQUIRE(s);
    // Median of 135.4, 125 and 120: 125; sqrt(125 x 45.6) = 75.50, between 45.3 MiB's 120
    // and 64 MiB's 60.1, at (120 - 75.50) / (120 - 60.1) = 0.743 of the step:
    // 45.25 x 1.4142^0.743 = 58.5 MiB.
    CHECK(s->cached_gbs == 125.0);
    CHECK(s->size == 59 * MiB);
  }
}

TEST_CASE("a shared level the chase sizes below the listed one grows to where streams hold") {
  auto levels_with = [](std::int64_t llc, bool listed) {
    std::vector<MeasuredLevel> l(3);
    l[0].name = "L1", l[0].size = 48 * KiB, l[0].assoc = 12;
    l[1].name = "L2", l[1].size = 1 * MiB, l[1].assoc = 16;
    l[2].name = "LLC", l[2].size = llc, l[2].assoc = 16, l[2].shared = true;
    l[2].listed = listed;
    return l;
  };
  // The 2-core EPYC VM, 2026-12-07 12:24: the chase crossed at 4.4 MiB (sysfs: 32 MiB); the
  // 2-thread triad, 1 MiB .. 1 GiB:
  const auto at_1224 =
      triad_curve({226.3, 226.8, 255.3, 213.5, 210.7, 199.7, 199.2, 185.9, 183.6, 150.8, 112.8,
                   84.5,  65.9,  55.1,  48.3,  47.8,  45.7,  45.4,  45.4,  46.3,  46.3});
  auto l = levels_with(4 * MiB, false);
  extend_shared_level(l, at_1224, 2);
  // Past 1.5 x 2 threads' 1 MiB L2s and up to 4 MiB: 210.7 alone, the reference; then
  // 199.7, 199.2, 185.9 and 183.6 (16 MiB) are within 1.2x of it (>= 175.6), 150.8 is not.
  CHECK(l[2].size == 16 * MiB);
  CHECK(l[1].size == 1 * MiB);
  CHECK(l[2].how.find("up to 16MiB") != std::string::npos);

  SECTION("12:11: the chase at 8 MiB") {
    const auto at_1211 = triad_at_1211();
    auto m = levels_with(8 * MiB, false);
    extend_shared_level(m, at_1211, 2);
    // Own points 177.7, 165.0, 162.9: median 165.0; 158.4 and 152.7 hold (>= 137.5),
    // 118.1 does not.
    CHECK(m[2].size == 16 * MiB);
  }
  SECTION("one thread's private L2 alone is past the 1.5 MiB mark") {
    auto m = levels_with(4 * MiB, false);
    extend_shared_level(m, at_1224, 1);
    // Own points now 2 .. 4 MiB: 255.3, 213.5, 210.7, median 213.5 (>= 177.9): 16 MiB again.
    CHECK(m[2].size == 16 * MiB);
    CHECK(m[2].how.find("213.5 GB/s") != std::string::npos);
  }
  SECTION("the listed size, or a chase past the streams' reach, stays") {
    auto listed = levels_with(4 * MiB, true);
    extend_shared_level(listed, at_1224, 2);
    CHECK(listed[2].size == 4 * MiB);
    auto larger = levels_with(32 * MiB, false);
    extend_shared_level(larger, at_1224, 2);
    CHECK(larger[2].size == 32 * MiB);  // 45.3 MiB's 84.5 is far under its 185.9
  }
}

TEST_CASE("each cache level's port is as wide as the triad streams from it") {
  // calibrate --threads 1 on the 2-core EPYC VM, 2026-12-06 20:05: the best of three sweeps.
  const std::vector<std::pair<std::int64_t, double>> kib_gbs{
      {1024, 73.1},   {1448, 73.8},   {2048, 73.5},   {2896, 71.8},   {4096, 74.0},
      {5792, 73.6},   {8192, 71.2},   {11584, 68.3},  {16384, 63.0},  {23168, 47.2},
      {32768, 36.0},  {46340, 34.2},  {65536, 31.7},  {92680, 28.0},  {131072, 26.7},
      {185360, 22.5}, {262144, 24.6}, {370724, 25.6}, {524288, 25.4}, {741452, 25.9},
      {1048576, 25.1}};
  std::vector<BandwidthPoint> curve;
  for (auto [k, g] : kib_gbs) curve.push_back({k * KiB, g});
  auto level = [](const char* name, std::int64_t size, bool shared) {
    MeasuredLevel l;
    l.name = name;
    l.size = size;
    l.shared = shared;
    return l;
  };
  const std::vector<MeasuredLevel> levels{level("L1", 32 * KiB, false),
                                          level("L2", 512 * KiB, false), level("L3", 8 * MiB, true),
                                          level("LLC", 28 * MiB, true)};
  const auto w = stream_port_widths(levels, curve, 1, 3196);
  REQUIRE(w.size() == 4);
  // No footprint fits L1 or L2 (the curve starts at 1 MiB): they keep the default.
  CHECK(w[0].bytes_per_cycle == 0);
  CHECK(w[1].bytes_per_cycle == 0);
  // L3: beyond 1.5 x 512 KiB, within 8 MiB / 1.4 = 5.71 MiB: 1 .. 5.66 MiB, six points,
  // median (73.5 + 73.6) / 2 = 73.55 GB/s = 23.01 B a cycle at 3196 MHz.
  CHECK(w[2].points == 6);
  CHECK(w[2].gbs == Approx(73.55));
  CHECK(w[2].bytes_per_cycle == 23);
  // LLC: beyond 12 MiB, within 20 MiB: 16 MiB alone, 63.0 GB/s = 19.71 B a cycle.
  CHECK(w[3].points == 1);
  CHECK(w[3].bytes_per_cycle == 20);

  SECTION("a level with no footprint of its own streams no faster than the one above") {
    // 20:19's LLC of 21 MiB holds (12, 15] MiB: no point of the curve.
    auto narrow = levels;
    narrow[3].size = 21 * MiB;
    const auto n = stream_port_widths(narrow, curve, 1, 3196);
    CHECK(n[2].bytes_per_cycle == 23);
    CHECK(n[3].points == 0);
    CHECK(n[3].bytes_per_cycle == 23);
  }
  SECTION("a private level's port carries one thread's share of a footprint sized for all") {
    // Two threads, each with a private 4 MiB L2: 100 GB/s over 4 MiB in all (2 MiB a
    // thread) is 50 GB/s through each port, 20 B a cycle at 2500 MHz; 8 MiB does not fit
    // 8 MiB / 1.4 and is left out.
    const std::vector<BandwidthPoint> two{{4 * MiB, 100.0}, {8 * MiB, 40.0}};
    const auto p = stream_port_widths({level("L2", 4 * MiB, false)}, two, 2, 2500);
    REQUIRE(p.size() == 1);
    CHECK(p[0].points == 1);
    CHECK(p[0].bytes_per_cycle == 20);
  }
}

TEST_CASE("a level whose far end drifts by less than 1.6x stays one level") {
  // L2 read 5.5 ns up to 128 KiB, then 7.6 ns (a noisy neighbour, TLB reach) up to
  // 2 MiB: a 1.38x step, more than kPlateauRise but not a level; then DRAM at 90 ns.
  std::vector<LatencyPoint> curve;
  for (auto b : footprints()) {
    const double ns = b <= 32 * KiB ? 1.7 : b <= 128 * KiB ? 5.5 : b <= 2 * MiB ? 7.6 : 90.0;
    curve.push_back({b, ns});
  }
  const auto plateaus = latency_plateaus(curve);
  REQUIRE(plateaus.size() == 3);  // L1, L2 (5.5 and 7.6 ns together), DRAM
  CHECK(plateaus[1].ns == 5.5);   // the first plateau's median is kept
  const auto levels = find_cache_levels(curve, {32 * KiB, 2 * MiB}, {8, 16});
  REQUIRE(levels.size() == 2);
  CHECK(levels[1].size == 2 * MiB);
}

// calibrate --threads 1 on a 2-core host: the op probes ran on one core, so the machine
// says threads_per_op 1 and each op class's efficiency is its rate over one core's peak
// (the peak the simulator divides an op's work by: compute/op_cost_terms.h cost_peak).
TEST_CASE("machine_json: threads_per_op and the op classes' efficiency follow --threads") {
  fusim::backend::Calibration c;
  c.cores = 2;
  c.clock_mhz = 1000;
  c.vector_flops_per_cycle = 32;  // 32 GFLOP/s per core
  c.curve = step_curve({{32 * KiB, 1.0}, {1 * MiB, 4.0}}, 90);
  c.levels = find_cache_levels(c.curve, {}, {});
  c.dram_latency_ns = 90;
  c.bw_one = {10, 10, 10};
  c.bw_all = {20, 20, 20};
  c.ops.gemm = 16e9;
  c.ops.dispatch_ns = 500;
  for (const int threads : {1, 2}) {
    c.threads = threads;
    const auto doc = fusim::backend::machine_json(c, "box");
    INFO(threads << " thread(s)");
    CHECK(doc["compute"]["cores"] == 2);
    CHECK(doc["compute"]["threads_per_op"] == threads);
    // 16 GFLOP/s over 32 (one core) or 64 (two).
    CHECK(doc["compute"]["efficiency"]["gemm"].get<double>() == Approx(threads == 1 ? 0.5 : 0.25));
  }
}
