#pragma once
// Deadlock watchdog: components register how to tell whether they still have work and how
// to describe their state. run_checked() runs the queue and, if it empties while some
// component still has work outstanding (a lost completion, a request never retried), throws
// SimulationStall whose message dumps every registered component, not only the stuck one.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/event_queue.h"

namespace fusim {

// A bug in a model (never bad input): the simulation cannot make progress.
class SimulationStall : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Watchdog {
 public:
  struct Component {
    std::string name;
    std::function<bool()> busy;         // work outstanding?
    std::function<std::string()> dump;  // state, one or more lines
  };

  void watch(std::string name, std::function<bool()> busy, std::function<std::string()> dump);
  std::size_t size() const { return components_.size(); }

  // Names of the components with work outstanding.
  std::vector<std::string> busy_components() const;
  // "watchdog: event queue empty at 1234 ps with work outstanding in: dram\n== core0 (idle)..."
  std::string report(Tick now) const;
  // Throws SimulationStall (with report()) when the queue is empty and someone is busy.
  void check(const EventQueue& queue) const;
  // Runs the queue until `limit` (or until empty), then check()s if it emptied.
  void run_checked(EventQueue& queue, Tick limit = kNever) const;

 private:
  std::vector<Component> components_;
};

}  // namespace fusim
