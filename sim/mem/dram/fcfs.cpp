// FCFS: strictly the oldest request; the controller waits until its command can issue.
// The baseline of Rixner et al., "Memory Access Scheduling", ISCA 2000.
#include "mem/dram/scheduler.h"

namespace fusim::dram {
namespace {

class Fcfs final : public Scheduler {
 public:
  std::size_t pick(const Candidate*, std::size_t) override { return 0; }
  Order order() const override { return Order::Oldest; }
};

}  // namespace

std::unique_ptr<Scheduler> make_fcfs_scheduler(const ControllerConfig&) {
  return std::make_unique<Fcfs>();
}

}  // namespace fusim::dram
