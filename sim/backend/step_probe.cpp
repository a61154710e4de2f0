#include "backend/step_probe.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

namespace fusim::backend {
namespace {
Tick thread_cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec) * kTicksPerNs;
}
std::int64_t minor_faults_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}
pid_t own_tid() {
  return static_cast<pid_t>(syscall(SYS_gettid));
}

std::vector<int> cpus_in(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}
}  // namespace

PinnedThreads pin_threads(int threads) {
  PinnedThreads out;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    out.note = "threads not pinned: sched_getaffinity failed";
    return out;
  }
  std::vector<int> cpus = cpus_in(allowed);
  if (threads > int(cpus.size())) {
    out.note = fmt::format("threads not pinned: {} threads on the {} cores this process may use",
                           threads, cpus.size());
    return out;
  }
  cpus.resize(std::size_t(threads));
  std::vector<pid_t> tids(std::size_t(threads), 0);
  std::vector<int> failed(std::size_t(threads), 0);
  // One index per thread: at::parallel_for with grain 1 gives OpenMP thread t the chunk
  // [t, t+1) (ATen/ParallelOpenMP.h: begin_tid = begin + tid * chunk_size).
  auto pin = [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t t = lo; t < hi; ++t) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[std::size_t(t)], &one);
      failed[std::size_t(t)] = sched_setaffinity(0, sizeof one, &one) != 0;
      tids[std::size_t(t)] = own_tid();
    }
  };
  if (threads == 1)
    pin(0, 1);
  else
    at::parallel_for(0, threads, 1, pin);
  // Every chunk must have run on its own thread: if one thread ran several (a serial
  // at::parallel_for), pinning it in turn to each core leaves it, and every pool thread it
  // creates later, on the last one (all intra-op threads on one core, steps ~20x slower).
  std::vector<pid_t> distinct = tids;
  std::sort(distinct.begin(), distinct.end());
  const bool all_distinct = std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end();
  for (int t = 0; t < threads; ++t)
    if (failed[std::size_t(t)] || tids[std::size_t(t)] == 0 || !all_distinct) {
      sched_setaffinity(0, sizeof allowed, &allowed);  // undo this thread's pins
      out.note = all_distinct ? "threads not pinned: sched_setaffinity failed"
                              : fmt::format(
                                    "threads not pinned: libtorch ran the {} pinning chunks on "
                                    "fewer threads",
                                    threads);
      return out;
    }
  if (tids[0] != own_tid()) {  // the caller did not run chunk 0: not the layout assumed
    out.note = "threads pinned, but the calling thread is not thread 0 of the pool";
  }
  out.cpus = cpus;
  out.tids = tids;
  return out;
}

StepProbe::StepProbe(std::vector<pid_t> tids) : tids_(std::move(tids)) {}

Tick StepProbe::waited_now() const {
  if (tids_.empty()) return -1;
  Tick sum = 0;
  for (pid_t tid : tids_) {
    // "<ns on cpu> <ns waiting on a runqueue> <timeslices>" (Documentation/scheduler/
    // sched-stats.rst).
    std::ifstream in(fmt::format("/proc/self/task/{}/schedstat", tid));
    long long on_cpu = 0, wait = 0;
    if (!(in >> on_cpu >> wait)) return -1;
    sum += Tick(wait) * kTicksPerNs;
  }
  return sum;
}

void StepProbe::begin() {
  faults0_ = minor_faults_now();
  waited0_ = waited_now();
  cpu0_ = thread_cpu_now();
}

StepSample StepProbe::end(Tick wall) const {
  StepSample s;
  s.cpu = thread_cpu_now() - cpu0_;
  const Tick w = waited_now();
  s.waited = w >= 0 && waited0_ >= 0 ? w - waited0_ : -1;
  s.minor_faults = minor_faults_now() - faults0_;
  s.wall = wall;
  return s;
}

double load_average() {
  double load[1] = {-1};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

CpuReading read_cpu() {
  CpuReading r;
  r.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  r.self_s = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  std::ifstream in("/proc/stat");
  std::string cpu;
  long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      cpu != "cpu")
    return r;
  const double hz = double(sysconf(_SC_CLK_TCK));
  if (!(hz > 0)) return r;
  r.busy_s = double(user + nice + system + irq + softirq) / hz;
  r.steal_s = double(steal) / hz;
  return r;
}

OtherCpu other_cpu_between(const CpuReading& from, const CpuReading& to) {
  OtherCpu o;
  const double wall = to.wall_s - from.wall_s;
  if (from.busy_s < 0 || to.busy_s < 0 || !(wall > 0)) return o;
  // Jiffies tick at 100 Hz and this process's time at 1 us: a short interval can come out
  // slightly negative.
  o.cores = std::max(0.0, ((to.busy_s - from.busy_s) - (to.self_s - from.self_s)) / wall);
  o.steal_cores = std::max(0.0, (to.steal_s - from.steal_s) / wall);
  return o;
}

int online_cpus() {
  return int(sysconf(_SC_NPROCESSORS_ONLN));
}

int allowed_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::max(1, online_cpus());
  return std::max(1, CPU_COUNT(&allowed));
}

std::vector<int> affinity_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  return cpus_in(allowed);
}

}  // namespace fusim::backend
