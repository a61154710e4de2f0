#pragma once
// A memory with a fixed latency and a bandwidth limit, implementing mem::MemoryPort: the
// stand-in for the DRAM controller in unit tests and `fusim cache`. A request occupies the
// channel for bytes / bandwidth (back to back, in arrival order) and completes `latency`
// after its transfer ends. Bandwidth 0 means unlimited (pure latency).
#include <cstdint>

#include "core/event_queue.h"
#include "mem/memory_port.h"

namespace fusim::mem {

struct FixedMemoryStats {
  std::uint64_t reads = 0, writes = 0, bytes = 0;
  FixedMemoryStats operator-(const FixedMemoryStats& o) const {
    return {reads - o.reads, writes - o.writes, bytes - o.bytes};
  }
};

class FixedLatencyMemory final : public MemoryPort {
 public:
  // bytes_per_second 0: unlimited; max_in_flight 0: unlimited (will_accept always true).
  FixedLatencyMemory(EventQueue& queue, Tick latency, double bytes_per_second,
                     std::uint32_t max_in_flight = 0);

  bool will_accept(const MemRequest& request) const override;
  void send(const MemRequest& request) override;
  void set_completion(Completion completion) override { completion_ = std::move(completion); }
  void set_retry(std::function<void()> retry) override { retry_ = std::move(retry); }
  void request_retry() override { retry_wanted_ = true; }

  const FixedMemoryStats& stats() const { return stats_; }
  std::uint32_t in_flight() const { return in_flight_; }
  // Channel time of a request of `bytes` (ps, rounded up).
  Tick transfer_time(std::uint32_t bytes) const;

 private:
  EventQueue& queue_;
  Tick latency_;
  double bytes_per_second_;
  std::uint32_t max_in_flight_;
  std::uint32_t in_flight_ = 0;
  Tick channel_free_ = 0;
  Completion completion_;
  std::function<void()> retry_;
  bool retry_wanted_ = false;
  FixedMemoryStats stats_;
};

}  // namespace fusim::mem
