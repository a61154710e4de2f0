// Bandwidth-latency curves measured on the DRAM controller: each point obeys Little's law
// for the closed loop that produced it, bandwidth never passes the datasheet peak and
// streaming reads come close to it, and interpolation between write shares is linear.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <filesystem>

#include <unistd.h>

#include "mem/dram/dram_spec.h"
#include "mem/residency/dram_curve.h"

using namespace fusim;
using namespace fusim::residency;

namespace {
DramCurveParams params(int cores, int mshrs, Tick path) {
  DramCurveParams p;
  p.request_bytes = 64;
  p.cores = cores;
  p.mshrs = mshrs;
  p.path_latency = path;
  return p;
}
}  // namespace

TEST_CASE("every point of a read curve obeys Little's law") {
  // a cores x m reads in flight, each cycling through the path latency and its read
  // latency, move a x m x 64 B per (path + latency) on average.
  const auto spec = dram::load_dram_preset("ddr4-3200");
  const DramCurve c = measure_dram_curve(spec, params(8, 6, 30'000), DramPattern::Stream, 2, 0.0);
  REQUIRE(c.points.size() >= 3);
  for (const CurvePoint& p : c.points) {
    INFO(p.cores << " cores: " << p.bandwidth / 1e9 << " GB/s at " << p.read_latency << " ps");
    const double little = p.cores * 6 * 64.0 / (to_seconds(30'000 + p.read_latency));
    CHECK(p.bandwidth == Approx(little).epsilon(0.03));
  }
}

TEST_CASE("tensors at the same offset from 2 MiB boundaries share banks: reads wait for rows") {
  // ddr4-3200's RoBaRaCoCh repeats its banks every channels x columns x banks bytes, a
  // divisor of 2 MiB: two regions at such boundaries are in the same bank, other rows, at
  // every step, and a core switching between them (a run of 64 lines each) opens a row
  // per run, where one region keeps its rows open.
  const auto spec = dram::load_dram_preset("ddr4-3200");
  const auto p = params(1, 12, 30'000);
  const auto first = [&](int regions) {
    return measure_dram_curve(spec, p, DramPattern::AlignedStream, regions, 0.0).points.front();
  };
  const CurvePoint one = first(1), two = first(2);
  INFO("one region " << one.read_latency << " ps, two " << two.read_latency << " ps");
  CHECK(two.read_latency > one.read_latency + 1000);
  CHECK(two.bandwidth < one.bandwidth);
  CHECK(std::string(to_string(DramPattern::AlignedStream)) == "aligned-stream");
}

TEST_CASE("max_bandwidth bounds a curve's reads, not its reads and writes together") {
  // It is what the last cache level's ports can send: reads. With half the bytes writes,
  // a load moving 1.33 x max_bandwidth in all reads only 0.67 x of it, so the next load is
  // measured too (stopped at the first point past it in total, the A100's half-write
  // curves ended at one core).
  const auto spec = dram::load_dram_preset("ddr4-3200");
  DramCurveParams p = params(8, 4, 30'000);
  const double one =
      measure_dram_curve(spec, p, DramPattern::Stream, 1, 0.5).points.front().bandwidth;
  p.max_bandwidth = 0.75 * one;
  const DramCurve c = measure_dram_curve(spec, p, DramPattern::Stream, 1, 0.5);
  REQUIRE(c.points.size() >= 2);
  CHECK(c.points.front().bandwidth == one);  // the same probe: deterministic
  for (std::size_t i = 0; i + 1 < c.points.size(); ++i)
    CHECK(0.5 * c.points[i].bandwidth < p.max_bandwidth);
  // The write-only curve has no reads to bound: its bound is on the writes.
  const double writes = measure_dram_curve(spec, params(8, 4, 30'000), DramPattern::Stream, 1, 1.0)
                            .points.front()
                            .bandwidth;
  p.max_bandwidth = 0.75 * writes;
  CHECK(measure_dram_curve(spec, p, DramPattern::Stream, 1, 1.0).points.size() == 1);
}

TEST_CASE("a curve's key differs when anything that decides the curve differs") {
  // The key names the curve files on disk: two configurations with one key share curves.
  // Its format once had a placeholder fewer than its arguments, so the last one
  // (max_bandwidth) was dropped: the A100's curves measured with one L2 port (stopped at
  // 220 GB/s) were read back for 30 ports.
  const auto spec = dram::load_dram_preset("hbm2e");
  const DramCurveParams p = params(8, 4, 30'000);
  DramCurveParams wider = p;
  wider.max_bandwidth = 5e12;
  CHECK(dram_curve_key(spec, p) != dram_curve_key(spec, wider));
  DramCurveParams window = p;
  window.window = p.window + 1;
  CHECK(dram_curve_key(spec, p) != dram_curve_key(spec, window));
  auto refreshed = spec;
  refreshed.t.tRREFD += 1;
  CHECK(dram_curve_key(spec, p) != dram_curve_key(refreshed, p));
  CHECK(dram_curve_key(spec, p) == dram_curve_key(dram::load_dram_preset("hbm2e"), p));
}

TEST_CASE("a write-heavy load on a full controller is measured, not stalled") {
  // 3 writes per read from 32 cores x 64 misses fill the write queues: the probe's head
  // request is refused, and it must wait for the controller's retry. Without that, the
  // point measured 0 B/s (no read came back to send another) and ended the curve there.
  const auto spec = dram::load_dram_preset("hbm2e");
  const DramCurve c =
      measure_dram_curve(spec, params(32, 64, 100'000), DramPattern::Stream, 1, 0.75);
  REQUIRE(!c.points.empty());
  for (const CurvePoint& p : c.points) {
    INFO(p.cores << " cores: " << p.bandwidth / 1e9 << " GB/s");
    CHECK(p.bandwidth > 0);
    CHECK(p.read_latency > 0);
  }
  // More load, longer waits: the read latency never falls as cores are added. (Bandwidth
  // need not rise at every step: this controller moves 129 GB/s at 2 cores, 117 at 4 as
  // the writes' turnarounds grow, and 237 at 32 once the streams spread over every
  // channel; with one queue in front of all channels the curve ended at 4 cores.)
  for (std::size_t i = 1; i < c.points.size(); ++i)
    CHECK(c.points[i].read_latency >= c.points[i - 1].read_latency);
  CHECK(c.peak_bandwidth() >= c.points.front().bandwidth);
}

TEST_CASE("streaming reads approach the datasheet peak and never pass it") {
  // One DDR4-3200 channel: 8 B x 3200 MT/s = 25.6 GB/s. Refresh alone takes tRFC/tREFI =
  // 350 / 7800 = 4.5% (JESD79-4); sequential lines are row hits. 16 cores x 16 reads in
  // flight keep the 32-entry queue full.
  const auto spec = dram::load_dram_preset("ddr4-3200");
  const DramCurve c = measure_dram_curve(spec, params(16, 16, 0), DramPattern::Stream, 1, 0.0);
  CHECK(c.peak_bandwidth() <= 25.6e9);
  CHECK(c.peak_bandwidth() >= 0.85 * 25.6e9);
  // Random lines conflict in rows: less than streams.
  const DramCurve r = measure_dram_curve(spec, params(16, 16, 0), DramPattern::Random, 1, 0.0);
  CHECK(r.peak_bandwidth() < c.peak_bandwidth());
}

TEST_CASE("one read alone waits a column access, at most a row switch more") {
  // Idle latency of a lone stream's read: at least CL + BL/2 (a row hit: 22 + 4 cycles of
  // 625 ps), at most tRP + tRCD + CL + BL/2 (a conflict) plus a few cycles of controller.
  const auto spec = dram::load_dram_preset("ddr4-3200");
  const DramCurve c = measure_dram_curve(spec, params(1, 1, 0), DramPattern::Stream, 1, 0.0);
  const Tick lat = c.points.front().read_latency;
  CHECK(lat >= (22 + 4) * 625);
  CHECK(lat <= (22 + 22 + 22 + 4 + 8) * 625);
}

TEST_CASE("curves are measured once, the same for the same configuration") {
  const auto spec = dram::load_dram_preset("ddr4-3200");
  DramCurveStore store;
  auto a = store.get(spec, params(4, 4, 10'000));
  auto b = store.get(spec, params(4, 4, 10'000));
  CHECK(a == b);
  auto c = store.get(spec, params(4, 8, 10'000));
  CHECK(a != c);
  const double peak = a->peak_bandwidth(DramPattern::Stream, 2, 0.0);
  CHECK(a->measured() == 1);
  CHECK(a->peak_bandwidth(DramPattern::Stream, 2, 0.0) == peak);
  CHECK(a->measured() == 1);
  const DramCurve again =
      measure_dram_curve(spec, params(4, 4, 10'000), DramPattern::Stream, 2, 0.0);
  CHECK(again.peak_bandwidth() == peak);  // deterministic
  // Between measured shares, linear: a third of the way from 0.25 to 0.5.
  const double p25 = a->curve(DramPattern::Stream, 2, 1).peak_bandwidth();
  const double p50 = a->curve(DramPattern::Stream, 2, 2).peak_bandwidth();
  CHECK(a->peak_bandwidth(DramPattern::Stream, 2, 0.25 + 0.25 / 3) ==
        Approx(p25 + (p50 - p25) / 3).epsilon(1e-12));
}

TEST_CASE("curves are measured at the nearest power-of-two region count") {
  CHECK(region_bucket(1) == 1);
  CHECK(region_bucket(2) == 2);
  CHECK(region_bucket(3) == 4);  // 3 >= 1.5 x 2
  CHECK(region_bucket(5) == 4);  // 5 < 1.5 x 4
  CHECK(region_bucket(6) == 8);
  CHECK(region_bucket(9) == 8);
  CHECK(region_bucket(40) == 16);  // at most 16
}

TEST_CASE("a curve read back from the cache folder is the curve measured") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("fusim-curve-test-{}", ::getpid());
  fs::remove_all(dir);
  const auto spec = dram::load_dram_preset("ddr4-3200");
  double measured_peak = 0;
  Tick measured_latency = 0;
  {
    DramCurves first(spec, params(4, 4, 10'000), dir.string());
    measured_peak = first.peak_bandwidth(DramPattern::Stream, 2, 0.0);
    measured_latency = first.read_latency_at(DramPattern::Stream, 2, 0.0, measured_peak / 2);
    CHECK(first.measured() == 1);
    CHECK(first.loaded() == 0);
  }
  {
    DramCurves second(spec, params(4, 4, 10'000), dir.string());
    CHECK(second.peak_bandwidth(DramPattern::Stream, 2, 0.0) == measured_peak);
    CHECK(second.read_latency_at(DramPattern::Stream, 2, 0.0, measured_peak / 2) ==
          measured_latency);
    CHECK(second.measured() == 0);
    CHECK(second.loaded() == 1);
  }
  {
    // Other parameters: another key, not the file above.
    DramCurves other(spec, params(4, 8, 10'000), dir.string());
    other.peak_bandwidth(DramPattern::Stream, 2, 0.0);
    CHECK(other.measured() == 1);
    CHECK(other.loaded() == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("a load of a cores is an op on a cores: its point does not depend on the machine's") {
  // The executor cuts each chunk slice among the op's cores, so a probe of 1, 2 or 4 cores
  // reads pieces of 1/1, 1/2 or 1/4 of a slice whatever `cores` is. (Cut for all 64 cores
  // with 4 of them issuing, each core read 1/64 of every slice and ran ahead into the next.)
  const auto spec = dram::load_dram_preset("ddr4-3200");
  const DramCurve four =
      measure_dram_curve(spec, params(4, 8, 30'000), DramPattern::Stream, 1, 0.0);
  const DramCurve many =
      measure_dram_curve(spec, params(64, 8, 30'000), DramPattern::Stream, 1, 0.0);
  const std::size_t n = std::min(four.points.size(), many.points.size());
  REQUIRE(n >= 2);
  for (std::size_t i = 0; i < n; ++i) {
    INFO(four.points[i].cores << " cores");
    CHECK(many.points[i].cores == four.points[i].cores);
    CHECK(many.points[i].bandwidth == four.points[i].bandwidth);
    CHECK(many.points[i].read_latency == four.points[i].read_latency);
  }
}

TEST_CASE("an HBM3 stream reaches most of the data bus, as an op on many SMs issues it") {
  // The h100-sxm5 preset's HBM3 (its mapping: channel, then column bits): 64 channels x 2
  // pseudo-channels x 32 bit x 5200 MT/s = 2662.4 GB/s. 128 B lines from up to 132 SMs with 256
  // misses each (its L1 MSHRs), 160 ns from issue to memory (the H100's path). Each core streams
  // its own piece of a slice: row hits, a column command every tCCD_S once other bank groups
  // interleave. (With every core reading 1/132 of each slice and running ahead into the next ones,
  // the peak was 1.57 TB/s, 59% of the bus, at every load; now 2.48 TB/s.)
  auto spec = dram::load_dram_preset("hbm3");
  spec.org.channels = 64;
  spec.ctrl.mapping = "RoBaRaCoCh";
  DramCurveParams p = params(132, 256, 160'000);
  p.request_bytes = 128;
  const DramCurve c = measure_dram_curve(spec, p, DramPattern::Stream, 1, 0.0);
  INFO("peak " << c.peak_bandwidth() / 1e9 << " GB/s");
  CHECK(c.peak_bandwidth() <= 2662.4e9);
  CHECK(c.peak_bandwidth() >= 0.85 * 2662.4e9);
}

TEST_CASE("a plateau with room left in the controller does not end a curve") {
  // The 40-core Xeon 8380's curves (tensor_side.cpp: 12 L1 misses a core, 38.7 ns of cache
  // path; 8 channels of DDR4-3200, mapped row:bank:rank:column:channel): the 1-region
  // write-only curve. Its bus moves 8 x 25.6 = 204.8 GB/s; refresh takes tRFC / tREFI =
  // 560 / 12480 = 4.5% of it (JESD79-4), so streaming writes move at most 195.6 GB/s. Each core's
  // victims are a sequential stream (row hits), and writes never turn the bus around: enough
  // streams over the bank groups come within a few percent of that (at least 90% asked here). A
  // load in between may gain little, its few streams' addresses sharing bank groups (tCCD_L), with
  // the controller's 8 x 32 write slots far from full. Stopping at the first doubling that gained
  // under 2% ended this curve at 4 cores and 97 GB/s, half the bus (8 cores: 193).
  auto spec = dram::load_dram_preset("ddr4-3200");
  spec.org.channels = 8;
  spec.ctrl.mapping = "RoBaRaCoCh";  // as the machine file sets it
  DramCurveParams p = params(40, 12, 38'715);
  const DramCurve c = measure_dram_curve(spec, p, DramPattern::Stream, 1, 1.0);
  std::string points;
  for (const CurvePoint& point : c.points)
    points += fmt::format("{} cores: {:.1f} GB/s; ", point.cores, point.bandwidth / 1e9);
  INFO(points);
  REQUIRE(!c.points.empty());
  CHECK(c.points.back().cores >= 8);
  CHECK(c.peak_bandwidth() <= 204.8e9);
  CHECK(c.peak_bandwidth() >= 0.9 * 195.6e9);
}
