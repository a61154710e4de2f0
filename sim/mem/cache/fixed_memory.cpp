#include "mem/cache/fixed_memory.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace fusim::mem {

FixedLatencyMemory::FixedLatencyMemory(EventQueue& queue, Tick latency, double bytes_per_second,
                                       std::uint32_t max_in_flight)
    : queue_(queue),
      latency_(latency),
      bytes_per_second_(bytes_per_second),
      max_in_flight_(max_in_flight) {
  FUSIM_ASSERT(latency >= 0 && bytes_per_second >= 0, "negative memory latency or bandwidth");
}

Tick FixedLatencyMemory::transfer_time(std::uint32_t bytes) const {
  if (bytes_per_second_ <= 0) return 0;
  return static_cast<Tick>(std::ceil(static_cast<double>(bytes) * 1e12 / bytes_per_second_ - 1e-6));
}

bool FixedLatencyMemory::will_accept(const MemRequest&) const {
  return max_in_flight_ == 0 || in_flight_ < max_in_flight_;
}

void FixedLatencyMemory::send(const MemRequest& request) {
  FUSIM_ASSERT(will_accept(request), "send() without will_accept()");
  Tick start = std::max(queue_.now(), channel_free_);
  channel_free_ = start + transfer_time(request.bytes);
  Tick done = channel_free_ + latency_;
  ++in_flight_;
  if (request.is_write)
    ++stats_.writes;
  else
    ++stats_.reads;
  stats_.bytes += request.bytes;
  queue_.schedule(done, Priority::Response, [this, request, done] {
    --in_flight_;
    if (completion_) completion_(request, done);
    if (retry_wanted_ && retry_) {
      retry_wanted_ = false;
      retry_();
    }
  });
}

}  // namespace fusim::mem
