// Every JEDEC constraint at t-1 (refused) and at t (issues), Ramulator-style: the
// controller's timing state (BankTiming) must give exactly t as the earliest cycle, and the
// independent protocol checker must flag the command at t-1 and accept it at t.
// DDR4-3200 with two ranks: tRCD = tRP = CL = 22, CWL 16, BL/2 4, tRAS 52, tRC 74,
// tCCD_S 4, tCCD_L 8, tRRD_S 4, tRRD_L 8, tFAW 34, tWR 24, tWTR_S 4, tWTR_L 12, tRTP 12,
// tRTRS 2, tRFC 560. HBM2E (per-bank refresh): tRP 23, tRFCpb 256, tRREFD 13.
#include <catch2/catch.hpp>
#include <vector>

#include "dram_test_util.h"
#include "mem/dram/bank_timing.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

namespace {

struct Where {
  int rank, group, bank;
};
constexpr Where A{0, 0, 0}, B{0, 0, 1}, G{0, 1, 0}, R{1, 0, 0};

IssuedCommand cmd(Command c, Where w, Cycle at, std::int64_t row = 5) {
  IssuedCommand i;
  i.cycle = at;
  i.command = c;
  i.rank = w.rank;
  i.bankgroup = w.group;
  i.bank = w.bank;
  i.row = c == Command::ACT || c == Command::RD || c == Command::WR ? row : -1;
  return i;
}

struct Case {
  const char* name;
  std::vector<IssuedCommand> before;  // commands already issued
  Command next;
  Where at;
  Cycle expected;  // hand-computed earliest cycle
};

void check_case(const DramSpec& spec, const Case& k) {
  INFO(k.name);
  const int banks_per_group = spec.org.banks_per_group;
  auto flat = [&](Where w) {
    return (w.rank * spec.org.bankgroups + w.group) * banks_per_group + w.bank;
  };
  BankTiming timing(spec.org, spec.t);
  for (const auto& c : k.before)
    timing.issue(c.command, c.rank, c.bankgroup, flat({c.rank, c.bankgroup, c.bank}), c.cycle);
  CHECK(timing.earliest(k.next, k.at.rank, k.at.group, flat(k.at)) == k.expected);

  for (Cycle t : {k.expected - 1, k.expected}) {
    ProtocolChecker checker(spec);
    for (const auto& c : k.before) checker.observe(c);
    REQUIRE(checker.violation_count() == 0);  // the set-up itself is legal
    checker.observe(cmd(k.next, k.at, t));
    if (t < k.expected) {
      CHECK(checker.violation_count() >= 1);
    } else {
      INFO((checker.violations().empty() ? std::string() : checker.violations()[0]));
      CHECK(checker.violation_count() == 0);
    }
  }
}

}  // namespace

TEST_CASE("DDR4 timing constraints at t-1 and t") {
  DramSpec spec = preset("ddr4-3200");
  spec.org.ranks = 2;
  using C = Command;
  const Where G2{0, 2, 0}, G3{0, 3, 0};
  const std::vector<Case> cases = {
      {"tRCD (read)", {cmd(C::ACT, A, 1000)}, C::RD, A, 1022},
      {"tRCD (write)", {cmd(C::ACT, A, 1000)}, C::WR, A, 1022},
      {"tRAS", {cmd(C::ACT, A, 1000)}, C::PRE, A, 1052},
      {"tRP", {cmd(C::ACT, A, 0), cmd(C::PRE, A, 1000)}, C::ACT, A, 1022},
      {"tRC", {cmd(C::ACT, A, 1000), cmd(C::PRE, A, 1052)}, C::ACT, A, 1074},
      {"tRRD_L", {cmd(C::ACT, A, 1000)}, C::ACT, B, 1008},
      {"tRRD_S", {cmd(C::ACT, A, 1000)}, C::ACT, G, 1004},
      {"tFAW",
       {cmd(C::ACT, A, 1000), cmd(C::ACT, G, 1004), cmd(C::ACT, G2, 1008), cmd(C::ACT, G3, 1012)},
       C::ACT,
       B,
       1034},
      {"tCCD_L", {cmd(C::ACT, A, 0), cmd(C::ACT, B, 100), cmd(C::RD, A, 1000)}, C::RD, B, 1008},
      {"tCCD_S", {cmd(C::ACT, A, 0), cmd(C::ACT, G, 100), cmd(C::RD, A, 1000)}, C::RD, G, 1004},
      {"tCCD_L (write)",
       {cmd(C::ACT, A, 0), cmd(C::ACT, B, 100), cmd(C::WR, A, 1000)},
       C::WR,
       B,
       1008},
      {"tWTR_L: CWL + BL/2 + tWTR_L",
       {cmd(C::ACT, A, 0), cmd(C::ACT, B, 100), cmd(C::WR, A, 1000)},
       C::RD,
       B,
       1032},
      {"tWTR_S: CWL + BL/2 + tWTR_S",
       {cmd(C::ACT, A, 0), cmd(C::ACT, G, 100), cmd(C::WR, A, 1000)},
       C::RD,
       G,
       1024},
      {"read to write: CL + BL/2 + 2 - CWL",
       {cmd(C::ACT, A, 0), cmd(C::ACT, G, 100), cmd(C::RD, A, 1000)},
       C::WR,
       G,
       1012},
      {"tRTP", {cmd(C::ACT, A, 0), cmd(C::RD, A, 1000)}, C::PRE, A, 1012},
      {"tWR: CWL + BL/2 + tWR", {cmd(C::ACT, A, 0), cmd(C::WR, A, 1000)}, C::PRE, A, 1044},
      {"rank switch RD-RD: BL/2 + tRTRS",
       {cmd(C::ACT, A, 0), cmd(C::ACT, R, 100), cmd(C::RD, A, 1000)},
       C::RD,
       R,
       1006},
      {"rank switch WR-WR: BL/2 + tRTRS",
       {cmd(C::ACT, A, 0), cmd(C::ACT, R, 100), cmd(C::WR, A, 1000)},
       C::WR,
       R,
       1006},
      {"rank switch RD-WR: CL + BL/2 + tRTRS - CWL",
       {cmd(C::ACT, A, 0), cmd(C::ACT, R, 100), cmd(C::RD, A, 1000)},
       C::WR,
       R,
       1012},
      {"tRFC", {cmd(C::REFab, A, 1000)}, C::ACT, A, 1560},
      {"tRFC (REF to REF)", {cmd(C::REFab, A, 1000)}, C::REFab, A, 1560},
      {"tRP before REF", {cmd(C::ACT, A, 0), cmd(C::PRE, A, 1000)}, C::REFab, A, 1022},
      {"tRC before REF", {cmd(C::ACT, A, 1000), cmd(C::PRE, A, 1052)}, C::REFab, A, 1074},
  };
  for (const auto& k : cases) check_case(spec, k);
}

TEST_CASE("HBM2E per-bank refresh constraints at t-1 and t") {
  const DramSpec spec = preset("hbm2e");
  REQUIRE(spec.t.tRFCpb == 256);  // 160 ns at 0.625 ns
  REQUIRE(spec.t.tRREFD == 13);   // 8 ns
  REQUIRE(spec.t.tRP == 23);      // 14 ns
  using C = Command;
  const std::vector<Case> cases = {
      {"tRFCpb", {cmd(C::REFpb, A, 1000)}, C::ACT, A, 1256},
      {"tRREFD (to ACT of another bank)", {cmd(C::REFpb, A, 1000)}, C::ACT, B, 1013},
      {"tRREFD (REFpb to REFpb)", {cmd(C::REFpb, A, 1000)}, C::REFpb, B, 1013},
      {"tRP before REFpb", {cmd(C::ACT, A, 0), cmd(C::PRE, A, 1000)}, C::REFpb, A, 1023},
  };
  for (const auto& k : cases) check_case(spec, k);
}

TEST_CASE("protocol checker flags state errors") {
  const DramSpec spec = preset("ddr4-3200");
  using C = Command;
  ProtocolChecker checker(spec);
  checker.observe(cmd(C::RD, A, 10));  // closed bank
  CHECK(checker.violation_count() == 1);
  checker.observe(cmd(C::ACT, A, 100, 7));
  checker.observe(cmd(C::RD, A, 200, 8));  // another row
  CHECK(checker.violation_count() == 2);
  checker.observe(cmd(C::ACT, A, 300, 9));  // bank already open
  CHECK(checker.violation_count() == 3);
  checker.observe(cmd(C::REFab, A, 400));  // rows open
  CHECK(checker.violation_count() == 4);
  checker.observe(cmd(C::PRE, A, 400));  // same cycle as the previous command
  CHECK(checker.violation_count() == 5);
  CHECK_THAT(checker.violations()[4], Catch::Contains("command bus"));
}
