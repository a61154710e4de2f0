// The protocol checker over random and adversarial request streams on every preset, every
// scheduler and every row policy: zero violations, and every request completes.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "dram_test_util.h"
#include "mem/dram/trace_replay.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

namespace {

// Runs `trace` with a checker attached; returns the checker's verdict.
void run_checked(const DramSpec& spec, const std::vector<TraceRequest>& trace,
                 const std::string& label) {
  Rig rig(spec);
  const ReplayResult r = replay_trace(*rig.dram, rig.queue, trace);
  INFO(label << ": " << (rig.checker.violations().empty() ? "" : rig.checker.violations()[0]));
  CHECK(rig.checker.violation_count() == 0);
  CHECK(r.stats.requests() == trace.size());
  CHECK(rig.completed == trace.size());
  CHECK(rig.dram->in_flight() == 0);
  CHECK(rig.checker.commands() > trace.size());
}

// Adversarial streams built from DRAM coordinates.
std::vector<TraceRequest> adversarial(const DramSpec& spec, int kind, std::size_t n) {
  const AddressMapping m(spec);
  std::vector<TraceRequest> out;
  for (std::size_t i = 0; i < n; ++i) {
    DramAddress a;
    switch (kind) {
      case 0:  // one bank, a new row every access: back-to-back row conflicts
        a.row = static_cast<std::int64_t>(i % spec.org.rows);
        break;
      case 1:  // every bank of rank 0 in turn, new rows: tRRD and tFAW bound the activates
        a.bankgroup = static_cast<int>(i % spec.org.bankgroups);
        a.bank = static_cast<int>((i / spec.org.bankgroups) % spec.org.banks_per_group);
        a.row = static_cast<std::int64_t>((i * 7) % spec.org.rows);
        break;
      case 2:  // reads and writes alternating in one bank group: write-to-read turnarounds
        a.bank = static_cast<int>(i % spec.org.banks_per_group);
        a.column = static_cast<std::int64_t>(i % 8);
        break;
      case 3:  // ranks alternating: rank-to-rank switches on the data bus
        a.rank = static_cast<int>(i % spec.org.ranks);
        a.bankgroup = static_cast<int>((i / 2) % spec.org.bankgroups);
        a.column = static_cast<std::int64_t>(i % 4);
        break;
    }
    TraceRequest r;
    r.addr = m.encode(a);
    r.is_write = kind == 2 ? (i % 2 == 1) : (i % 5 == 4);
    r.arrival = static_cast<Cycle>(i / 4);
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("random traces: zero protocol violations on every preset and scheduler") {
  for (const char* name : kPresets) {
    for (const char* scheduler : {"fcfs", "frfcfs", "frfcfs-cap", "stream-aware", "cads"}) {
      DramSpec spec = preset(name);
      spec.ctrl.scheduler = scheduler;
      TraceGenOptions o;
      o.pattern = TracePattern::Random;
      o.reads = 2;
      o.writes = 1;
      o.count = 6000;
      o.interval = 2;
      o.seed = 7;
      o.footprint = std::uint64_t{1} << 28;
      run_checked(spec, generate_trace(o), std::string(name) + "/" + scheduler);
    }
  }
}

TEST_CASE("adversarial traces: zero protocol violations on every preset and row policy") {
  for (const char* name : kPresets) {
    for (RowPolicy policy :
         {RowPolicy::Open, RowPolicy::Closed, RowPolicy::OpenTimeout, RowPolicy::OpenCap}) {
      for (RefreshMode refresh : {RefreshMode::AllBank, RefreshMode::PerBank}) {
        DramSpec spec = preset(name);
        if (spec.org.ranks == 1) spec.org.ranks = 2;  // exercise rank switching everywhere
        spec.ctrl.row_policy = policy;
        spec.ctrl.row_timeout = 50;
        spec.ctrl.row_cap = 4;
        spec.ctrl.refresh = refresh;
        if (refresh == RefreshMode::PerBank && spec.t.tRFCpb == 0) continue;  // DDR4 has none
        for (int kind = 0; kind < 4; ++kind) {
          run_checked(
              spec, adversarial(spec, kind, 3000),
              fmt::format("{}/{}/{}/kind {}", name, to_string(policy), to_string(refresh), kind));
        }
      }
    }
  }
}

TEST_CASE("long idle gaps are caught up with refreshes, legally") {
  DramSpec spec = preset("ddr4-3200");
  Rig rig(spec);
  std::vector<TraceRequest> trace;
  for (int i = 0; i < 50; ++i)
    trace.push_back({static_cast<mem::Addr>(i) * 4096, i % 3 == 0, i * 40000});
  replay_trace(*rig.dram, rig.queue, trace);
  CHECK(rig.checker.violation_count() == 0);
  // 49 x 40000 cycles = 1.96M cycles / tREFI 12480 = 157 refreshes due by the last request.
  CHECK(rig.dram->stats().refreshes == 157);
}
