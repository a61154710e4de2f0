#pragma once
// Bytes of tensor storage the executing device holds, now and at most since a reset: the
// measured side of RunResult::peak_memory_bytes.
//  - CPU: libtorch's CPU allocator is replaced (once per process, c10::SetCPUAllocator) by
//    a counting one that allocates like c10's default (posix_memalign, 64 B aligned:
//    c10/core/impl/alloc_cpu.cpp) and keeps the live and peak byte counts, so that nothing
//    else in a run changes. It must be process-wide: libtorch keeps one CPU allocator per
//    process and calls its deleter as a plain function.
//  - CUDA: the caching allocator's own counters (allocated_bytes, as
//    torch.cuda.memory_allocated / max_memory_allocated report them), device 0.
// Both count the bytes tensors hold, not the allocator's cached or reserved segments: the
// quantity the schedule's allocator model calls the peak allocated (schedule::MemoryPeak).
#include <cstdint>

namespace fusim::backend {

class MemoryCounter {
 public:
  explicit MemoryCounter(bool cuda);
  std::int64_t allocated() const;  // bytes held now
  void reset_peak();               // the peak restarts at allocated()
  std::int64_t peak() const;       // most bytes held at once since reset_peak()

 private:
  bool cuda_;
};

}  // namespace fusim::backend
