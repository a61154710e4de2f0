#pragma once
// A MemoryPort in front of main memory that counts what the cache hierarchy sends: bytes
// per requester (core/SM: per-op DRAM bytes) and, with a bucket > 0, per time bucket (the
// DRAM bandwidth track of timelines). It forwards everything unchanged.
// (count_only adds bytes that never reach the controller.)
#include <cstdint>
#include <vector>

#include "core/event_queue.h"
#include "mem/memory_port.h"

namespace fusim::exec {

class MemoryTap final : public mem::MemoryPort {
 public:
  // bucket 0: no per-bucket series.
  MemoryTap(EventQueue& queue, mem::MemoryPort& memory, int requesters, Tick bucket);

  bool will_accept(const mem::MemRequest& r) const override { return memory_.will_accept(r); }
  void send(const mem::MemRequest& r) override;
  void set_completion(Completion c) override { memory_.set_completion(std::move(c)); }
  void set_retry(std::function<void()> retry) override { memory_.set_retry(std::move(retry)); }
  void request_retry() override { memory_.request_retry(); }
  int destinations() const override { return memory_.destinations(); }
  int destination(const mem::MemRequest& r) const override { return memory_.destination(r); }
  int refused_by(const mem::MemRequest& r) const override { return memory_.refused_by(r); }
  std::uint64_t room_freed(int queue) const override { return memory_.room_freed(queue); }

  // Bytes served by main memory outside the controller (GEMM re-reads timed by a bandwidth
  // model, see simulator.cpp): counted like sent bytes, nothing is forwarded.
  void count_only(int requester, std::int64_t bytes);

  std::int64_t total_bytes() const { return total_; }
  std::int64_t bytes_of(int requester) const;
  Tick bucket() const { return bucket_; }
  const std::vector<std::int64_t>& per_bucket() const { return per_bucket_; }

 private:
  EventQueue& queue_;
  mem::MemoryPort& memory_;
  std::vector<std::int64_t> per_requester_;
  std::vector<std::int64_t> per_bucket_;
  Tick bucket_;
  std::int64_t total_ = 0;
};

}  // namespace fusim::exec
