// Differential test of the controller's first-ready fast path: two controllers, fed the
// same requests, one deciding from the per-bank summaries (FCFS / FR-FCFS / FR-FCFS-cap as
// registered), the other from the full age-ordered candidate list (the same scheduler
// wrapped so that it declares Order::Generic). Every issued command must be identical,
// on every preset, row policy and refresh mode, with many row hits and conflicts.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "dram_test_util.h"
#include "mem/dram/controller.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

namespace {

// Delegates every choice to `inner` but hides its order, forcing the full candidate list.
class AsGeneric final : public Scheduler {
 public:
  explicit AsGeneric(std::unique_ptr<Scheduler> inner) : inner_(std::move(inner)) {}
  std::size_t pick(const Candidate* c, std::size_t n) override { return inner_->pick(c, n); }
  int row_hit_cap() const override { return inner_->row_hit_cap(); }
  void on_column(int r, bool hit, Cycle arrival, Cycle now) override {
    inner_->on_column(r, hit, arrival, now);
  }

 private:
  std::unique_ptr<Scheduler> inner_;
};

bool same(const IssuedCommand& a, const IssuedCommand& b) {
  return a.cycle == b.cycle && a.command == b.command && a.rank == b.rank &&
         a.bankgroup == b.bankgroup && a.bank == b.bank && a.row == b.row;
}

// Returns the number of commands both issued; fails on the first difference.
// `banks_used`: requests go to the first that many flat banks (0: every bank).
std::size_t compare(const DramSpec& spec, std::uint64_t seed, const std::string& label,
                    int banks_used = 6) {
  DramStats stats_fast, stats_full;
  const int banks = spec.org.banks_per_channel();
  stats_fast.bank_open_cycles.assign(banks, 0);
  stats_full.bank_open_cycles.assign(banks, 0);
  ChannelController fast(spec, 0, make_scheduler(spec.ctrl, "test"), stats_fast);
  ChannelController full(spec, 0, std::make_unique<AsGeneric>(make_scheduler(spec.ctrl, "test")),
                         stats_full);
  std::vector<IssuedCommand> log_fast, log_full;
  const CommandObserver obs_fast = [&](const IssuedCommand& c) { log_fast.push_back(c); };
  const CommandObserver obs_full = [&](const IssuedCommand& c) { log_full.push_back(c); };
  fast.set_observer(&obs_fast);
  full.set_observer(&obs_full);
  std::uint64_t state = seed;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // Knuth's MMIX LCG
    return state >> 33;
  };
  Cycle now = 0;
  auto issue_one = [&] {
    REQUIRE(fast.next_cycle() == full.next_cycle());
    now = fast.next_cycle();
    const ColumnServed a = fast.issue(), b = full.issue();
    REQUIRE(a.valid == b.valid);
    REQUIRE(a.token == b.token);
    REQUIRE(a.done == b.done);
  };
  for (std::uint32_t token = 0; token < 4000; ++token) {
    now += static_cast<Cycle>(next() % 6);  // bursts and gaps
    QueueEntry e;
    // Few banks by default: deep per-bank queues.
    const int spread = banks_used > 0 ? banks_used : spec.org.banks_per_channel();
    e.flat_bank = static_cast<std::uint16_t>(next() % static_cast<std::uint64_t>(spread));
    e.rank = static_cast<std::uint8_t>(e.flat_bank / spec.org.banks_per_rank());
    e.bankgroup = static_cast<std::uint8_t>((e.flat_bank % spec.org.banks_per_rank()) /
                                            spec.org.banks_per_group);
    e.bank = static_cast<std::uint8_t>(e.flat_bank % spec.org.banks_per_group);
    e.row = static_cast<std::int64_t>(next() % 3);  // many hits, many conflicts
    e.is_write = next() % 3 == 0;
    e.requester = static_cast<int>(next() % 2);
    e.token = token;
    // Commands due before the arrival issue first; a full queue waits for a column command.
    while (!fast.idle() && fast.next_cycle() < now) issue_one();
    while (!fast.has_room(e.is_write)) issue_one();
    e.arrival = now;
    REQUIRE(full.has_room(e.is_write));
    fast.enqueue(e);
    full.enqueue(e);
  }
  while (!fast.idle()) issue_one();
  INFO(label);
  REQUIRE(full.idle());
  REQUIRE(log_fast.size() == log_full.size());
  for (std::size_t i = 0; i < log_fast.size(); ++i) {
    INFO("command " << i);
    REQUIRE(same(log_fast[i], log_full[i]));
  }
  CHECK(stats_fast.row_hits == stats_full.row_hits);
  CHECK(stats_fast.row_conflicts == stats_full.row_conflicts);
  return log_fast.size();
}

}  // namespace

TEST_CASE("first-ready fast path issues exactly what the full candidate scan issues") {
  for (const char* name : kPresets) {
    for (const char* scheduler : {"fcfs", "frfcfs", "frfcfs-cap"}) {
      for (RowPolicy policy :
           {RowPolicy::Open, RowPolicy::Closed, RowPolicy::OpenTimeout, RowPolicy::OpenCap}) {
        DramSpec spec = preset(name);
        spec.ctrl.scheduler = scheduler;
        spec.ctrl.row_policy = policy;
        spec.ctrl.row_timeout = 30;
        spec.ctrl.row_cap = 3;
        const std::string label = fmt::format("{}/{}/{}", name, scheduler, to_string(policy));
        // 4000 requests need at least one column command each.
        CHECK(compare(spec, 99, label) >= 4000);
      }
    }
  }
}

// Ranks of four banks: the vector form of the first-ready pass takes the banks eight at a
// time, so every block spans two ranks (its rank levels come from two ranks); no preset has
// such an organisation, and every bank is busy here.
TEST_CASE("first-ready fast path on 4 ranks of 4 banks, every bank busy") {
  for (const char* scheduler : {"fcfs", "frfcfs", "frfcfs-cap"}) {
    DramSpec spec = preset("ddr4-3200");
    spec.org.ranks = 4;
    spec.org.bankgroups = 2;
    spec.org.banks_per_group = 2;
    spec.ctrl.scheduler = scheduler;
    REQUIRE(spec.org.banks_per_channel() == 16);
    CHECK(compare(spec, 7, fmt::format("4 ranks x 4 banks/{}", scheduler), 0) >= 4000);
  }
}
