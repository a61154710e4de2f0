#pragma once
// Records the ATen operator calls (and fusim's own fused kernels, which announce
// themselves with RECORD_FUNCTION) that code on this thread makes, through a
// RecordFunction callback: the mechanism torch.profiler uses, so what it sees is what the
// dispatcher ran. For tests and probes that compare what the backend executes with what the
// schedule models (schedule/optimizer.h); never active during timed runs.
#include <cstdint>
#include <string>
#include <vector>

namespace fusim::backend {

struct OpCall {
  std::string name;            // "aten::addcmul_", "fusim::fused_adam"
  int depth = 0;               // 0: called by the recorded code itself; 1: by a depth-0 op
  std::int64_t numel = 0;      // elements of the first tensor argument (0: none)
  std::int64_t out_numel = 0;  // elements of the first tensor result (0: none)
  bool in_place = false;       // the name ends in '_' (writes its first argument)
};

// Counting starts at construction and stops at destruction, on the constructing thread.
// One counter at a time per thread (RecordFunction callbacks are plain functions; the
// active counter is found through a thread_local pointer).
class OpCounter {
 public:
  OpCounter();
  ~OpCounter();
  OpCounter(const OpCounter&) = delete;
  OpCounter& operator=(const OpCounter&) = delete;
  const std::vector<OpCall>& calls() const { return calls_; }

  // Used by the callbacks.
  void enter(OpCall call);
  void leave(std::int64_t out_numel);

 private:
  std::vector<OpCall> calls_;
  std::vector<std::size_t> open_;  // calls entered and not yet left
  std::uint64_t handle_ = 0;
  OpCounter* previous_ = nullptr;
};

// An optimizer update as the schedule counts it (schedule/optimizer.h):
//   kernels    ATen calls that run a kernel: every depth-0 call except the _foreach_ ops
//              themselves, whose per-tensor calls (depth 1) are the kernels on a CPU
//              (ATen's slow path), plus fusim's fused kernels;
//   passes     kernels over a tensor of at least `min_numel` elements (the 0-dim step
//              counter ops are kernels but no pass);
//   temporaries  kernels that make a new tensor of at least `min_numel` elements (sqrt,
//              div, add, ... out of place; a norm's 0-dim result is none), and depth-0
//              allocations of that size (at::empty_like: no kernel).
struct UpdateCount {
  int kernels = 0, passes = 0, temporaries = 0, foreach_calls = 0;
};
UpdateCount count_update(const std::vector<OpCall>& calls, std::int64_t min_numel);

}  // namespace fusim::backend
