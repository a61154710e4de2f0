// Single-request latencies worked out by hand from the DDR4-3200 preset (tCK 625 ps):
// tRCD = tRP = CL = 22, BL/2 = 4, CWL = 16.
#include <catch2/catch.hpp>

#include "dram_test_util.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

TEST_CASE("DDR4-3200 preset loads with the JEDEC cycle counts") {
  const DramSpec s = preset("ddr4-3200");
  CHECK(s.tCK == 625);
  CHECK(s.t.tCL == 22);
  CHECK(s.t.tRCD == 22);
  CHECK(s.t.tRAS == 52);  // 32 ns
  CHECK(s.t.tRC == 74);   // 45.75 ns
  CHECK(s.t.tFAW == 34);  // 21 ns
  CHECK(s.t.tRRD_L == 8);
  CHECK(s.t.tWR == 24);
  CHECK(s.t.tREFI == 12480);
  CHECK(s.t.tRFC == 560);
  CHECK(s.t.tBL == 4);
  CHECK(s.org.atom_bytes() == 64);
  CHECK(s.peak_bandwidth_bytes_per_s() == Approx(25.6e9));
}

TEST_CASE("read latency: closed bank, open-row hit, row conflict") {
  Rig rig(preset("ddr4-3200"));
  const AddressMapping& m = rig.dram->mapping();
  DramAddress a;
  a.bank = 1, a.bankgroup = 2, a.row = 77, a.column = 3;
  const mem::Addr first = m.encode(a);
  // Closed bank: ACT, then RD after tRCD, data done CL + BL/2 later: 22 + 22 + 4 = 48 cycles.
  CHECK(rig.one(first, false, 0) == 48 * 625);
  // Same row later (1 us, a clock edge): RD at once, CL + BL/2 = 26 cycles.
  a.column = 9;
  CHECK(rig.one(m.encode(a), false, 1'000'000) == 26 * 625);
  // Another row of the same bank at 2 us: PRE, ACT after tRP, RD after tRCD, data after
  // CL + BL/2: 22 + 22 + 22 + 4 = 70 cycles.
  a.row = 78;
  CHECK(rig.one(m.encode(a), false, 2'000'000) == 70 * 625);
  // An arrival between clock edges waits for the next edge (1 us + 100 ps -> +525 ps).
  CHECK(rig.one(m.encode(a), false, 3'000'100) == 26 * 625 + 525);
  CHECK(rig.checker.violation_count() == 0);
  const DramStats s = rig.dram->stats();
  CHECK(s.reads == 4);
  CHECK(s.row_hits == 2);
  CHECK(s.row_misses == 1);
  CHECK(s.row_conflicts == 1);
  CHECK(s.activates == 2);
  CHECK(s.precharges == 1);
  // Latency counts from the clock edge the request is seen at: 48, 26, 70, 26 cycles.
  CHECK(s.read_latency.percentile(0.5) == 26);
  CHECK(s.read_latency.percentile(0.99) == 70);
  CHECK(s.read_latency.mean() == Approx((48 + 26 + 70 + 26) / 4.0));
}

TEST_CASE("write latency is CWL + BL/2 after the column command") {
  Rig rig(preset("ddr4-3200"));
  // Closed bank: ACT, WR after tRCD, data in after CWL + BL/2: 22 + 16 + 4 = 42 cycles.
  CHECK(rig.one(0x4000, true, 0) == 42 * 625);
  CHECK(rig.dram->stats().writes == 1);
}

TEST_CASE("closed row policy precharges after the access") {
  DramSpec spec = preset("ddr4-3200");
  spec.ctrl.row_policy = RowPolicy::Closed;
  Rig rig(spec);
  const AddressMapping& m = rig.dram->mapping();
  DramAddress a;
  CHECK(rig.one(m.encode(a), false, 0) == 48 * 625);  // ACT at 0, RD at 22
  rig.queue.run();
  // An idle channel schedules no events; it settles its row closes when work arrives.
  CHECK(rig.commands[static_cast<int>(Command::PRE)] == 0);
  // The same row again at 1 us: the policy closed it (PRE at tRAS = 52 > RD + tRTP = 34),
  // so this is a miss (ACT + RD = 48 cycles), not a hit.
  a.column = 1;
  CHECK(rig.one(m.encode(a), false, 1'000'000) == 48 * 625);
  REQUIRE(rig.log.size() == 5);
  CHECK(rig.log[2].command == Command::PRE);
  CHECK(rig.log[2].cycle == 52);
  CHECK(rig.log[3].command == Command::ACT);
  CHECK(rig.log[3].cycle == 1600);
  CHECK(rig.checker.violation_count() == 0);
}

TEST_CASE("open-timeout closes an idle row after the timeout") {
  DramSpec spec = preset("ddr4-3200");
  spec.ctrl.row_policy = RowPolicy::OpenTimeout;
  spec.ctrl.row_timeout = 100;
  Rig rig(spec);
  const AddressMapping& m = rig.dram->mapping();
  DramAddress a;
  a.row = 9;
  rig.one(m.encode(a), false, 0);  // ACT at 0, RD at cycle 22
  a.column = 1;
  // Cycle 48: still open -> hit (CL + BL/2 = 26 cycles).
  CHECK(rig.one(m.encode(a), false, 30'000) == 26 * 625);
  CHECK(rig.dram->stats().row_hits == 1);
  // At cycle 1600 the row has been idle > 100 cycles since the RD at 48: the policy closed
  // it (the idle channel catches up on arrival), so this is a miss (48 cycles).
  a.column = 2;
  CHECK(rig.one(m.encode(a), false, 1'000'000) == 48 * 625);
  CHECK(rig.dram->stats().row_misses == 2);
  CHECK(rig.checker.violation_count() == 0);
}
