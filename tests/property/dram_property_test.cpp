// DRAM over random small configurations (preset x organisation x scheduler x row policy x
// refresh x queues x mapping) and random request streams: every command passes the
// independent JEDEC protocol checker, every request completes once, the data moved never
// exceeds the bus peak (channels x pseudo-channels x bus bytes x data rate), and every column
// access is one of row hit, miss or conflict. A failing case is shrunk to the fewest requests
// that still fail and printed as a reproducer (seed, section, trace lines).
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "core/event_queue.h"
#include "core/json_view.h"
#include "mem/dram/dram_system.h"
#include "mem/dram/protocol_checker.h"
#include "mem/dram/trace_replay.h"
#include "random_configs.h"

using namespace fusim;
using namespace fusim::dram;
using fusim::property::Rng;

namespace {

std::vector<TraceRequest> random_requests(Rng& rng) {
  TraceGenOptions o;
  o.pattern = rng.pick(
      std::vector<TracePattern>{TracePattern::Stream, TracePattern::Random, TracePattern::Strided});
  o.reads = static_cast<std::uint64_t>(rng.in(0, 4));
  o.writes = static_cast<std::uint64_t>(rng.in(o.reads == 0 ? 1 : 0, 4));
  o.count = static_cast<std::uint64_t>(rng.in(1, 300));
  o.seed = rng.next();
  o.footprint = std::uint64_t{1} << rng.in(12, 26);
  o.stride = std::uint64_t{64} << rng.in(0, 10);
  o.interval = rng.in(0, 40);
  std::vector<TraceRequest> trace = generate_trace(o);
  // Now and then a long idle gap (refreshes fall due while nothing arrives).
  if (rng.chance(10) && trace.size() > 1) {
    const std::size_t at =
        static_cast<std::size_t>(rng.in(1, static_cast<std::int64_t>(trace.size()) - 1));
    const Cycle gap = rng.in(10000, 100000);
    for (std::size_t i = at; i < trace.size(); ++i) trace[i].arrival += gap;
  }
  return trace;
}

// The first property that fails on this spec and trace ("" when all hold).
std::string check_replay(const DramSpec& spec, const std::vector<TraceRequest>& trace) {
  EventQueue queue;
  DramSystem dram(spec, queue);
  ProtocolChecker checker(spec);
  std::uint64_t completed = 0;
  dram.set_command_observer([&](const IssuedCommand& c) { checker.observe(c); });
  dram.set_completion([&](const mem::MemRequest&, Tick) { ++completed; });
  const ReplayResult r = replay_trace(dram, queue, trace);
  if (checker.violation_count() > 0)
    return fmt::format("{} protocol violations, the first: {}", checker.violation_count(),
                       checker.violations().front());
  if (completed != trace.size() || r.stats.requests() != trace.size())
    return fmt::format("{} requests, {} completions, {} counted", trace.size(), completed,
                       r.stats.requests());
  const std::uint64_t bytes = r.stats.read_bytes + r.stats.write_bytes;
  if (bytes != 64 * trace.size())
    return fmt::format("{} bytes moved for {} requests of 64 B", bytes, trace.size());
  // bytes / elapsed <= peak, kept in integers: bytes * 1e12 <= peak * elapsed_ps.
  const double peak = spec.peak_bandwidth_bytes_per_s();
  if (static_cast<double>(bytes) * 1e12 > peak * static_cast<double>(r.stats.elapsed))
    return fmt::format("{} B in {} ps = {:.4g} B/s, above the bus peak {:.4g} B/s", bytes,
                       r.stats.elapsed, static_cast<double>(bytes) * 1e12 / r.stats.elapsed, peak);
  const DramStats& s = r.stats;
  if (s.row_hits + s.row_misses + s.row_conflicts != s.column_reads + s.column_writes)
    return fmt::format("row hits {} + misses {} + conflicts {} != column accesses {} + {}",
                       s.row_hits, s.row_misses, s.row_conflicts, s.column_reads, s.column_writes);
  return "";
}

std::string trace_text(const std::vector<TraceRequest>& trace) {
  std::string out;
  for (const auto& r : trace)
    out += fmt::format("0x{:X} {} {}\n", r.addr, r.is_write ? "WRITE" : "READ", r.arrival);
  return out;
}

}  // namespace

TEST_CASE("random DRAM configurations and streams: protocol, completion, bus peak") {
  const int n = property::cases(5000);
  int checked = 0;
  for (int seed = 1; seed <= n; ++seed) {
    Rng rng(static_cast<std::uint64_t>(seed));
    const nlohmann::json section = property::random_dram(rng);
    const DramSpec spec = load_dram_spec(JsonView(section, "random-dram.json"));
    const std::vector<TraceRequest> trace = random_requests(rng);
    const std::string failure = check_replay(spec, trace);
    if (!failure.empty()) {
      const auto minimal = property::shrink(trace, [&](const std::vector<TraceRequest>& t) {
        return !check_replay(spec, t).empty();
      });
      FAIL("seed " << seed << ": " << failure << "\nsection: " << section.dump()
                   << "\nminimal trace (" << minimal.size() << " of " << trace.size()
                   << " requests): " << check_replay(spec, minimal) << "\n"
                   << trace_text(minimal));
    }
    ++checked;
  }
  CHECK(checked == n);
}

TEST_CASE("the shrinker finds the one request that makes a property fail") {
  // A stand-in property that fails whenever a write to 0x40 is in the trace: from 200
  // requests only that write is left.
  std::vector<TraceRequest> trace;
  for (int i = 0; i < 200; ++i)
    trace.push_back({static_cast<mem::Addr>(i) * 64, i == 137 || i % 3 == 0, i});
  auto fails = [](const std::vector<TraceRequest>& t) {
    for (const auto& r : t)
      if (r.addr == 137 * 64 && r.is_write) return true;
    return false;
  };
  const auto minimal = property::shrink(trace, fails);
  REQUIRE(minimal.size() == 1);
  CHECK(minimal[0].addr == 137 * 64);
  CHECK(minimal[0].arrival == 137);
}
