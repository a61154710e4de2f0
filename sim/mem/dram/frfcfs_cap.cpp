// FR-FCFS with a row-hit cap: a bank serves at most `row_cap` hits (default 4) after its
// activate while an older request waits for another row; then the hits lose their
// priority and the older request gets the bank. Bounds the unfairness of FR-FCFS towards
// low-locality requesters (Mutlu & Moscibroda, "Stall-Time Fair Memory Access
// Scheduling", MICRO 2007, cap on column-over-row reordering; Ramulator's FRFCFS_Cap).
#include "mem/dram/scheduler.h"

namespace fusim::dram {
namespace {

class FrFcfsCap final : public Scheduler {
 public:
  explicit FrFcfsCap(int cap) : cap_(cap) {}
  std::size_t pick(const Candidate* c, std::size_t n) override {
    return pick_first_ready(c, n, /*prefer_hits=*/true);
  }
  Order order() const override { return Order::FirstReady; }
  int row_hit_cap() const override { return cap_; }

 private:
  int cap_;
};

}  // namespace

std::unique_ptr<Scheduler> make_frfcfs_cap_scheduler(const ControllerConfig& cfg) {
  return std::make_unique<FrFcfsCap>(cfg.row_cap > 0 ? cfg.row_cap : 4);
}

}  // namespace fusim::dram
