#include "sweep/unit_pool.h"

#include "core/error.h"

namespace fusim::sweep {

UnitPool::UnitPool(std::vector<std::size_t> units, int threads, Work work)
    : units_(std::move(units)), work_(std::move(work)) {
  FUSIM_ASSERT(threads >= 1, "a unit pool needs at least one thread");
  std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(threads), units_.size());
  for (std::size_t i = 0; i < n; ++i) workers_.emplace_back([this] { work_loop(); });
}

UnitPool::~UnitPool() {
  stop_ = true;
  for (std::thread& t : workers_) t.join();
}

void UnitPool::work_loop() {
  while (!stop_) {
    std::size_t i = next_unit_++;
    if (i >= units_.size()) return;
    FinishedUnit done{units_[i], {}};
    try {
      done.rows = work_(done.unit);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      stop_ = true;
      ready_.notify_all();
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    finished_.push_back(std::move(done));
    ready_.notify_all();
  }
}

std::optional<FinishedUnit> UnitPool::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait_for(lock, timeout, [this] { return !finished_.empty() || error_; });
  if (error_) {
    std::exception_ptr error = error_;
    error_ = nullptr;
    std::rethrow_exception(error);
  }
  if (finished_.empty()) return std::nullopt;
  FinishedUnit done = std::move(finished_.front());
  finished_.pop_front();
  ++delivered_;
  return done;
}

std::vector<FinishedUnit> InOrder::add(FinishedUnit unit) {
  FUSIM_ASSERT(unit.unit >= next_ && unit.unit < end_ && !pending_.count(unit.unit),
               "a sweep unit arrived twice or out of range");
  pending_.emplace(unit.unit, std::move(unit.rows));
  std::vector<FinishedUnit> ready;
  for (auto it = pending_.begin(); it != pending_.end() && it->first == next_;
       it = pending_.erase(it), ++next_)
    ready.push_back({it->first, std::move(it->second)});
  return ready;
}

}  // namespace fusim::sweep
