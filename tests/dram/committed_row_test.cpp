// A row activated for a request is not precharged for a request of the other queue before
// that request is served (BankRow::commit_*): when the controller turns between reads and
// writes, the committed request's column command issues in the other mode. Two hand-worked
// cases on one DDR4-3200 bank, with the watermarks set so that one request turns the
// mode; every cycle below follows from the JEDEC constraints named next to it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <utility>
#include <vector>

#include "dram_test_util.h"
#include "mem/dram/controller.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

namespace {

struct OneBank {
  explicit OneBank(const DramSpec& s)
      : spec(s), checker(s), ctrl(spec, 0, make_scheduler(spec.ctrl, "test"), stats) {
    stats.bank_open_cycles.assign(spec.org.banks_per_channel(), 0);
    observer = [this](const IssuedCommand& c) {
      checker.observe(c);
      log.push_back(c);
    };
    ctrl.set_observer(&observer);
  }
  void enqueue(bool is_write, std::int64_t row, Cycle arrival, std::uint32_t token) {
    QueueEntry e;
    e.row = row;
    e.token = token;
    e.arrival = arrival;
    e.is_write = is_write;  // bank 0 of bank group 0, rank 0
    ctrl.enqueue(e);
  }
  // Issues every command due before `until`.
  void run_until(Cycle until) {
    while (!ctrl.idle() && ctrl.next_cycle() < until) ctrl.issue();
  }

  DramSpec spec;
  DramStats stats;
  ProtocolChecker checker;
  ChannelController ctrl;
  CommandObserver observer;
  std::vector<IssuedCommand> log;
};

void check_commands(const std::vector<IssuedCommand>& got,
                    const std::vector<std::pair<Command, Cycle>>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("command " << i << ": " << to_string(got[i].command) << " at " << got[i].cycle);
    CHECK(got[i].command == want[i].first);
    CHECK(got[i].cycle == want[i].second);
  }
}

}  // namespace

TEST_CASE("a row activated for a read is served before a write drain closes it") {
  DramSpec spec = preset("ddr4-3200");
  spec.ctrl.write_high_watermark = 1;  // one queued write turns the controller to writes
  spec.ctrl.write_low_watermark = 0;
  const Timing& t = spec.t;
  OneBank b(spec);
  b.enqueue(false, 1, 0, 0);  // read, row 1: ACT at 0
  b.run_until(1);
  b.enqueue(true, 2, 1, 1);  // write, row 2 of the same bank: the controller turns to writes
  b.run_until(kNoCycle);
  // The read's RD at tRCD after its ACT, in write mode; the write's PRE after tRAS (ACT to
  // PRE) and tRTP (RD to PRE), its ACT after tRP and tRC, its WR after tRCD. Before the
  // rule the write's PRE closed row 1 first (3 activates instead of 2).
  const Cycle rd = t.tRCD;
  const Cycle pre = std::max(t.tRAS, rd + t.tRTP);
  const Cycle act = std::max(pre + t.tRP, t.tRC);
  check_commands(b.log, {{Command::ACT, 0},
                         {Command::RD, rd},
                         {Command::PRE, pre},
                         {Command::ACT, act},
                         {Command::WR, act + t.tRCD}});
  CHECK(b.log[0].row == 1);
  CHECK(b.log[3].row == 2);
  CHECK(b.stats.activates == 2);
  CHECK(b.checker.violations().empty());
}

TEST_CASE("a row activated for a write is served before the turn back to reads closes it") {
  DramSpec spec = preset("ddr4-3200");
  spec.ctrl.write_high_watermark = 2;
  spec.ctrl.write_low_watermark = 1;  // one write left and a read waiting: back to reads
  const Timing& t = spec.t;
  OneBank b(spec);
  b.enqueue(true, 1, 0, 0);  // write, row 1, nothing else queued: write mode, ACT at 0
  b.run_until(1);
  b.enqueue(false, 2, 1, 1);  // read, row 2: the controller turns to reads
  b.run_until(kNoCycle);
  // The write's WR at tRCD, in read mode; the read's PRE after tRAS and the write recovery
  // (WL + BL/2 + tWR after the WR), ACT after tRP and tRC, RD after tRCD.
  const Cycle wr = t.tRCD;
  const Cycle pre = std::max(t.tRAS, wr + t.tCWL + t.tBL + t.tWR);
  const Cycle act = std::max(pre + t.tRP, t.tRC);
  check_commands(b.log, {{Command::ACT, 0},
                         {Command::WR, wr},
                         {Command::PRE, pre},
                         {Command::ACT, act},
                         {Command::RD, act + t.tRCD}});
  CHECK(b.stats.activates == 2);
  CHECK(b.checker.violations().empty());
}
