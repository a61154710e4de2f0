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

// The host's CPU accounting at one moment: /proc/stat's "cpu" line (all cores: user, nice,
// system, irq and softirq jiffies are busy time, guests' included in user; steal apart) and
// this process's own CPU time (getrusage RUSAGE_SELF, every thread). Two readings tell how
// many cores other processes kept busy in between, which the 1-minute load average cannot:
// it trails by a minute (a run right after another reads ~2 on 2 cores with nothing else
// running) and on this project's VMs it also counts tasks the guest does not run (2.75 on 2
// cores while /proc/stat showed both idle, 2026-12-07).
struct CpuReading {
  double busy_s = -1;  // host CPU-seconds busy since boot; -1: /proc/stat not readable
  double steal_s = 0;  // CPU-seconds the hypervisor ran other guests on this VM's cores
  double self_s = 0;   // this process's CPU-seconds
  double wall_s = 0;   // steady clock, seconds
};
CpuReading read_cpu();
// Mean cores over the interval: busy with other processes (host busy less this process),
// and stolen by the hypervisor; both -1 where /proc/stat was not readable or no time passed.
struct OtherCpu {
  double cores = -1, steal_cores = -1;
};
OtherCpu other_cpu_between(const CpuReading& from, const CpuReading& to);
int online_cpus();
// Cores this process may run on (sched_getaffinity); at least 1.
int allowed_cpus();
// Their ids in increasing order (empty where sched_getaffinity fails): pin_threads puts
// thread t on the t-th.
std::vector<int> affinity_cpus();

}  // namespace fusim::backend
