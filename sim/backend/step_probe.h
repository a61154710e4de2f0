#pragma once
// Measurements that can decide: pinned threads and, per measured step, what tells a quiet
// machine from a busy one. No torch types in this header.
//  - pin_threads: libtorch's OpenMP threads one per core, thread t on the t-th core of the
//    process's affinity mask (sched_setaffinity from inside a parallel region: libgomp
//    keeps its threads, so later regions run where they were pinned).
//  - StepProbe: around each step, the main thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
//    the time the pinned threads waited for a core (run_delay of /proc/self/task/<tid>/
//    schedstat, where the kernel has schedstats) and the process's minor page faults
//    (getrusage: fresh memory from the kernel).
//  - load_average: the 1-minute load of /proc/loadavg.
#include <sys/types.h>
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace fusim::backend {

struct PinnedThreads {
  std::vector<int> cpus;    // thread t runs on cpus[t]; empty: not pinned
  std::vector<pid_t> tids;  // kernel thread ids of the pool (tids[0]: the calling thread)
  std::string note;         // why not pinned, when not
};
// Pins `threads` threads (the caller first). More threads than allowed cores: not pinned,
// with a note.
PinnedThreads pin_threads(int threads);

struct StepSample {
  Tick wall = 0;     // the step's wall time
  Tick cpu = 0;      // CPU time of the main thread in it
  Tick waited = -1;  // summed run-queue wait of the pool's threads (-1: not known)
  std::int64_t minor_faults = 0;
  // Share of the step the main thread ran (1: never preempted nor asleep).
  double cpu_ratio() const { return wall > 0 ? double(cpu) / double(wall) : 1.0; }
};

class StepProbe {
 public:
  explicit StepProbe(std::vector<pid_t> tids);
  void begin();                     // right before the step
  StepSample end(Tick wall) const;  // right after it, with the step's wall time

 private:
  Tick waited_now() const;  // -1 where schedstat is not readable
  std::vector<pid_t> tids_;
  Tick cpu0_ = 0, waited0_ = -1;
  std::int64_t faults0_ = 0;
};

double load_average();  // 1-minute load, -1 where unknown
int online_cpus();
// Cores this process may run on (sched_getaffinity); at least 1.
int allowed_cpus();

}  // namespace fusim::backend
