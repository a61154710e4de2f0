#pragma once
// The real executor: runs the op lists of several schedules (orderings) of one trace on
// libtorch, interleaved in blocks (A B C, B C A, C A B, C B A, ...: round_order) so that drift of a
// noisy machine hits every ordering alike, and reports each as a RunResult like the simulator's.
// This header has no torch types: the CLI includes it without compiling libtorch headers.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/optimizer_config.h"
#include "backend/step_probe.h"
#include "backend/step_stats.h"
#include "exec/run_result.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

struct RunOptions {
  std::string device = "cpu";  // "cpu" | "cuda"
  int threads = 0;             // intra-op threads; 0 keeps libtorch's default
  int warmup = 3;              // unmeasured steps per ordering before the first block
  int steps = 10;              // measured steps per ordering (the first round)
  // Measured steps of one ordering before switching. 2, not 5: on a shared host the speed
  // moves between blocks, so more, shorter blocks pair the orderings more closely (2-core
  // EPYC VM, mobilenet_v2 SGD, 30 s each, two rounds of A/B/C: 95% CI half widths of
  // 2.6-3.0 points with blocks of 2, 4.8-7.3 with blocks of 5, 3.3-3.9 with blocks of 1,
  // whose re-warm step is every other step).
  int block = 2;
  std::uint64_t seed = 1;  // weights, inputs and dropout masks
  bool progress = false;   // core/progress.h on stderr: the planned steps, then sampling
  // Extension: after the first round, more rounds of one block per schedule until every
  // speedup's 95% CI is within +-ci_points points of its speedup or the run has lasted
  // max_time_s seconds (0: no extension). Extra steps repeat the schedule's last steady
  // step (every steady step runs the same ops).
  double max_time_s = 0;
  double ci_points = 1.0;
  // A measured step whose main thread ran less than this share of its wall time, or whose
  // pinned threads waited for a core longer than 1 - this share, was disturbed by other
  // processes and is dropped (0: keep every step).
  double min_cpu_ratio = 0.9;
  bool pin = true;  // CPU: pin the intra-op threads one per core
  // CPU: before each round of blocks, time the DRAM bandwidth probe (memory_probe.h,
  // dram_probe_gbs, ~20-40 ms outside the measured steps; the re-warm step after it refills
  // the caches) with the run's threads: RunConditions::dram_triad_gbs.
  bool dram_probe = true;
  // CPU: likewise the op speed probe (speed_probe.h, op_speed_probe_us, ~15-25 ms):
  // RunConditions::op_probe_us.
  bool speed_probe = true;
  // build_run_schedules: the orderings built for each of these executions, in this order
  // (each schedule names its own; run_schedules runs what the schedules name).
  std::vector<schedule::Execution> executions{schedule::Execution::Layers};
};

// Steps each schedule must contain: warmup, then per block one re-warm step (caches were
// filled by the other orderings) plus the block's measured steps, plus one last unmeasured
// step (forward-fused ends with a flush of the last updates).
int schedule_steps_for(const RunOptions& options);

// The order the `count` schedules run in within sampling round `round` (each round is a probe
// of the host, then one block of every schedule): the rows of a Williams design, one per round,
// in turn (Williams, "Experimental designs balanced for the estimation of residual effects of
// treatments", Aust. J. Sci. Res. A 2, 1949): over `count` rounds (2 x `count` when it is odd)
// every schedule takes every place equally often and follows every other schedule equally
// often. Row 0 is 0, 1, count-1, 2, count-2, ...; row i adds i (mod count); an odd count
// adds the rows reversed. Two schedules alternate A B, B A; three run A B C, B C A, C A B,
// C B A, A C B, B A C.
// Why: in a fixed order the first schedule after the probes always ran in the state they left
// (2-core EPYC VM, squeezenet1_1 SGD, eager against forward-fused: with eager first in every
// round forward-fused measured 1.010x, with forward-fused first 0.999x; rotated, the rounds
// with eager first gave 1.0195 and the others 0.990, +-1.4 points each). Without the probes
// the schedule that follows its own block ran faster (0.997 against 1.011): what ran before
// matters too. Balanced, the speedups paired by round (step_stats.h) carry both effects as
// spread instead of bias.
std::vector<std::size_t> round_order(int round, std::size_t count);

// Throws InputError with one line saying why when `device` cannot run here ("cuda" on a
// libtorch built without CUDA, or with no CUDA device; unknown names).
void check_device(const std::string& device);
// The device and every RunOptions value (steps, block, --max-time, --ci-points,
// --min-cpu-ratio): InputError naming the option. run_schedules checks them too; the
// commands call it before any work.
void check_run_options(const RunOptions& options);

// How the steps of one schedule were measured.
struct StepQuality {
  int steps_run = 0, steps_dropped = 0;  // measured steps, and those dropped as disturbed
  double cpu_ratio = 1;                  // median main-thread CPU / wall of the kept steps
  double waited_share = -1;              // median run-queue wait / wall (-1: not known)
  double minor_faults = 0;               // median minor page faults per kept step
  std::vector<StepSample> samples;       // every measured step, dropped ones too
  std::vector<bool> dropped;             // parallel to samples
};

// The machine while it ran.
struct RunConditions {
  double load_before = -1, load_after = -1;  // 1-minute load average
  // Mean cores other processes kept busy from the run's start to its end, and the cores the
  // hypervisor stole (step_probe.h, CpuReading); -1: not known.
  double other_cores = -1, steal_cores = -1;
  int cpus = 0, threads = 0;     // online CPUs, intra-op threads
  std::vector<int> pinned_cpus;  // empty: not pinned
  std::string pin_note;
  double elapsed_s = 0;
  int rounds = 1;          // rounds of blocks (1: no extension)
  bool converged = false;  // every speedup CI within +-ci_points
  // GB/s of the DRAM probe before each round, in order (empty: not probed). The host's
  // memory bandwidth while the steps ran; on a shared VM it is not a constant.
  std::vector<double> dram_triad_gbs;
  // Microseconds of the op speed probe before each round, in order (empty: not probed): how
  // fast the host ran small framework ops while the steps ran.
  std::vector<double> op_probe_us;
  // Nanoseconds a line of the core-to-core probe before each round (probe::core_to_core_ns on
  // the first two pinned cores; empty: not probed): whether the two cores shared a cache.
  std::vector<double> core_to_core_ns;
};

// Min, median and max of samples (all 0 when there are none).
struct SampleSpread {
  double min = 0, median = 0, max = 0;
  int samples = 0;
};
SampleSpread sample_spread(const std::vector<double>& samples);

// Min, median and max of the DRAM probe's samples.
using DramSpread = SampleSpread;
inline DramSpread dram_spread(const RunConditions& c) {
  return sample_spread(c.dram_triad_gbs);
}
// describe_run calls the machine busy when other processes used this many cores more than the
// run left free, on average over the run; and says so for steal time above it.
inline constexpr double kBusyCores = 0.25;

// describe_run says the two cores' placement moved when the core-to-core probe's samples
// span more than this factor (13 against 68 ns on the 2-core EPYC VM).
inline constexpr double kPlacementMoved = 2.0;

// describe_run says the host's DRAM bandwidth moved when its samples span more than this
// (max / min - 1): past it, memory-bound ops' times in different rounds are not alike.
inline constexpr double kDramMoved = 0.15;

// `calibrate`'s warning when its DRAM probe samples (before, between and after the op
// probes) span more than kDramMoved: the op costs were then fitted on a host whose memory
// bandwidth moved under them. Empty otherwise.
std::string calibration_drift_note(const std::vector<double>& dram_samples);
// The same for the op speed probe's samples (microseconds; empty when steady).
std::string calibration_speed_note(const std::vector<double>& speed_samples);
// `calibrate`'s warning when the speed its op costs describe (host.op_probe_us, the
// samples' median) is slower than the fastest sample by kDramMoved or more: most of the
// calibration ran in a slow spell, and the costs describe the host in it. Empty otherwise.
std::string calibration_slow_note(const std::vector<double>& speed_samples, double described_us);

// `validate`'s sentence comparing the run's DRAM probe (median) with the one calibrate
// recorded (the machine's host.dram_triad_gbs, with calibrated_threads threads); empty when
// either is missing or they differ by less than kDramMoved. The analytic path predicts for
// the calibrated memory system, so memory-bound ops are off by about that much.
std::string dram_drift_note(const RunConditions& c, double calibrated_gbs, int calibrated_threads);
// The same for the op speed probe against the machine's host.op_probe_us: the analytic
// path's op costs were fitted on the host at the calibrated speed, so every op of a step
// run at another speed is off by about that ratio (the small ones most).
std::string speed_drift_note(const RunConditions& c, double calibrated_us, int calibrated_threads);
// The same for the core-to-core probe against the machine's host.core_to_core_ns, when the
// run's median is kPlacementMoved times it or more (or that much less): the two cores sat
// apart (another chiplet's L3, another socket) where calibrate had them share a cache, or
// the reverse, and the op costs hold the placement calibrate saw.
std::string placement_drift_note(const RunConditions& c, double calibrated_ns,
                                 int calibrated_threads);

struct RunReport {
  std::vector<exec::RunResult> results;  // one per schedule, in the given order; step times
                                         // (and per-op timings) of the kept steps
  int baseline = -1;                     // index of the first eager schedule (-1: none)
  // Per result: its baseline, the eager schedule of the same execution (-1: none).
  std::vector<int> baselines;
  // Per result, vs baselines[k] (speedup 1, CI [1, 1] where it has none); empty when no
  // result has a baseline.
  std::vector<SpeedupInterval> speedups;
  std::vector<StepQuality> quality;  // per result
  RunConditions conditions;
  std::vector<std::string> notes;  // plain sentences: what is inside the noise, a busy host
};

// Runs the schedules interleaved in blocks in round_order (each on the execution it names:
// layers or graph), extends sampling as RunOptions says, drops disturbed steps.
RunReport run_schedules(const workload::Trace& trace,
                        const std::vector<schedule::Schedule>& schedules,
                        const OptimizerConfig& optimizer, const RunOptions& options);

// Plain sentences about a finished run (run_notes.cpp): each speedup inside or outside the
// noise (and the fused orderings against each other), a CI still wider than +-ci_points,
// a busy machine (load average, dropped steps), DRAM bandwidth that moved during the run,
// threads not pinned.
std::vector<std::string> describe_run(const RunReport& report, const RunOptions& options);

}  // namespace fusim::backend
