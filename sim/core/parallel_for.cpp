#include "core/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace fusim {

void parallel_for(const std::vector<std::size_t>& order, int threads,
                  const std::function<void(std::size_t)>& job,
                  const std::function<void(std::size_t)>& done) {
  const std::size_t n = order.size();
  const std::size_t workers = std::min<std::size_t>(n, std::size_t(std::max(1, threads)));
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;
  auto work = [&] {
    for (std::size_t k = next++; k < n; k = next++) {
      const std::size_t i = order[k];
      try {
        job(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        next = n;  // the others stop after their current job
        return;
      }
      if (done) {
        const std::lock_guard<std::mutex> lock(mutex);
        done(i);
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();  // the calling thread is one of them
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace fusim
