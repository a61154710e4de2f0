#pragma once
// Runs a sweep's units on N threads and hands finished units back to the calling thread in
// completion order; InOrder turns that back into unit order for the output.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "sweep/study.h"

namespace fusim::sweep {

struct FinishedUnit {
  std::size_t unit = 0;
  UnitRows rows;
};

class UnitPool {
 public:
  using Work = std::function<UnitRows(std::size_t unit)>;
  // Starts `threads` workers (>= 1) that take `units` in list order.
  UnitPool(std::vector<std::size_t> units, int threads, Work work);
  ~UnitPool();  // stops handing out units and joins the workers
  UnitPool(const UnitPool&) = delete;
  UnitPool& operator=(const UnitPool&) = delete;

  // The next finished unit, waiting at most `timeout`; nullopt on timeout or once every
  // unit was delivered. Rethrows (once) the first exception a unit threw.
  std::optional<FinishedUnit> next(std::chrono::milliseconds timeout);
  bool all_delivered() const { return delivered_ == units_.size(); }

 private:
  void work_loop();

  const std::vector<std::size_t> units_;
  const Work work_;
  std::atomic<std::size_t> next_unit_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<FinishedUnit> finished_;
  std::exception_ptr error_;
  std::size_t delivered_ = 0;
  std::vector<std::thread> workers_;
};

// Collects units finished in any order and releases them in unit order.
class InOrder {
 public:
  InOrder(std::size_t first_unit, std::size_t end_unit) : next_(first_unit), end_(end_unit) {}
  // Stores a finished unit; returns the run of units that can now be written, in order.
  std::vector<FinishedUnit> add(FinishedUnit unit);
  bool complete() const { return next_ == end_; }
  std::size_t waiting() const { return pending_.size(); }

 private:
  std::size_t next_, end_;
  std::map<std::size_t, UnitRows> pending_;
};

}  // namespace fusim::sweep
