#pragma once
// Times ops and iterations on the executing device, and on CUDA runs each op on its
// schedule stream (0: main, 1: the side stream for updates). CPU: the host's steady clock
// around each op (CPU ops are synchronous). CUDA: an event pair per op on its stream, a
// device synchronisation at the end of each iteration, cross-stream dependencies as event
// waits. The CUDA part compiles only against a CUDA libtorch (FUSIM_TORCH_CUDA).
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "core/time.h"
#include "schedule/schedule.h"

namespace fusim::backend {

struct IterationTimes {
  Tick iteration = 0;                      // wall time of the whole iteration
  std::vector<std::pair<Tick, Tick>> ops;  // start, end of each op since the timer began
};

class DeviceTimer {
 public:
  explicit DeviceTimer(bool cuda);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  void begin_iteration();
  void begin_op(const schedule::Op& op);
  void end_op(const schedule::Op& op);
  IterationTimes end_iteration();  // synchronises the device first
  // A host steady-clock instant on the timer's scale (CPU: the scale of the op spans).
  Tick ticks_at(std::chrono::steady_clock::time_point t) const;

 private:
  struct Cuda;  // events and streams; null on CPU
  std::unique_ptr<Cuda> cuda_;
  std::chrono::steady_clock::time_point origin_, iteration_start_;
  IterationTimes current_;
};

}  // namespace fusim::backend
