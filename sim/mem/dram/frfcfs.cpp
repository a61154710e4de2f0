// FR-FCFS (Rixner et al., ISCA 2000): among the requests whose next command is ready
// first, row hits before others, then the oldest.
#include "mem/dram/scheduler.h"

namespace fusim::dram {
namespace {

class FrFcfs final : public Scheduler {
 public:
  std::size_t pick(const Candidate* c, std::size_t n) override {
    return pick_first_ready(c, n, /*prefer_hits=*/true);
  }
  Order order() const override { return Order::FirstReady; }
};

}  // namespace

std::unique_ptr<Scheduler> make_frfcfs_scheduler(const ControllerConfig&) {
  return std::make_unique<FrFcfs>();
}

}  // namespace fusim::dram
