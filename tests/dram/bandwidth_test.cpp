// Peak streaming bandwidth and refresh overhead, worked out from the datasheet figures:
// a pure read stream moves one burst per BL/2 clocks on every (pseudo-)channel, so
// bandwidth = channels x bus bytes x data rate; refresh takes tRFC of every tREFI.
#include <catch2/catch.hpp>

#include "dram_test_util.h"
#include "mem/dram/trace_replay.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

namespace {

ReplayResult stream(const DramSpec& spec, std::uint64_t requests, ProtocolChecker* checker) {
  EventQueue queue;
  DramSystem dram(spec, queue);
  if (checker)
    dram.set_command_observer([checker](const IssuedCommand& c) { checker->observe(c); });
  TraceGenOptions o;
  o.pattern = TracePattern::Stream;
  o.count = requests;
  o.interval = 0;  // everything arrives at once: the controller is never starved
  o.footprint = std::uint64_t{1} << 34;
  return replay_trace(dram, queue, generate_trace(o));
}

}  // namespace

TEST_CASE("a pure read stream reaches channels x bus width x data rate within 3%") {
  for (const char* name : kPresets) {
    DramSpec spec = preset(name);
    // Measure between refreshes: the stream lasts about 80% of one tREFI (all-bank
    // refresh is due at tREFI; the next test measures the refresh share on its own).
    spec.ctrl.refresh = RefreshMode::AllBank;
    const std::uint64_t bursts =
        static_cast<std::uint64_t>(0.8 * spec.t.tREFI / spec.t.tBL) * spec.org.logical_channels();
    const std::uint64_t requests = bursts * spec.org.atom_bytes() / 64;
    ProtocolChecker checker(spec);
    const ReplayResult r = stream(spec, requests, &checker);
    const double peak = spec.peak_bandwidth_bytes_per_s();
    INFO(name << ": " << r.stats.bandwidth_bytes_per_s() / 1e9 << " GB/s of " << peak / 1e9);
    CHECK(r.stats.reads == requests);
    CHECK(r.stats.refreshes == 0);
    CHECK(r.stats.bandwidth_bytes_per_s() == Approx(peak).epsilon(0.03));
    CHECK(checker.violation_count() == 0);
  }
}

TEST_CASE("refresh costs close to tRFC / tREFI of a stream's bandwidth") {
  // DDR4-3200: tRFC / tREFI = 560 / 12480 = 4.49%. Over 40 tREFI the stream loses that,
  // plus a precharge and an activate per refresh (tRP + tRCD = 44 cycles, 0.35%).
  const DramSpec spec = preset("ddr4-3200");
  const std::uint64_t requests = 40 * spec.t.tREFI / spec.t.tBL;
  ProtocolChecker checker(spec);
  const ReplayResult r = stream(spec, requests, &checker);
  const double loss = 1.0 - r.stats.bandwidth_bytes_per_s() / spec.peak_bandwidth_bytes_per_s();
  INFO("bandwidth lost: " << loss * 100 << "%, refreshes " << r.stats.refreshes);
  CHECK(r.stats.refreshes >= 37);
  CHECK(r.stats.refreshes <= 42);
  CHECK(loss > 560.0 / 12480);
  CHECK(loss < 560.0 / 12480 + 0.01);
  CHECK(checker.violation_count() == 0);
}
