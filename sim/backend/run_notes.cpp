// The sentences `fusim run` and `fusim validate` print under their tables, so that a
// difference inside the noise or a disturbed measurement is said in words, not left to be
// read off an interval.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/executor.h"

namespace fusim::backend {
namespace {
std::string label(const exec::RunResult& r, bool with_execution) {
  return with_execution ? fmt::format("{} ({})", r.ordering, r.execution) : r.ordering;
}
}  // namespace

SampleSpread sample_spread(const std::vector<double>& samples) {
  SampleSpread d;
  if (samples.empty()) return d;
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  d.samples = int(v.size());
  d.min = v.front();
  d.max = v.back();
  const std::size_t n = v.size();
  d.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return d;
}

std::string calibration_drift_note(const std::vector<double>& dram_samples) {
  RunConditions c;
  c.dram_triad_gbs = dram_samples;
  const DramSpread d = dram_spread(c);
  if (d.samples < 2 || d.max <= (1 + kDramMoved) * d.min) return {};
  return fmt::format(
      "the host's DRAM bandwidth moved during calibration: the probe read {:.1f} to {:.1f} "
      "GB/s; the op costs describe a moving host (on a shared VM, calibrations minutes apart "
      "predicted the same steps 9-30% apart): calibrate again when it is steady",
      d.min, d.max);
}

std::string calibration_speed_note(const std::vector<double>& speed_samples) {
  const SampleSpread d = sample_spread(speed_samples);
  if (d.samples < 2 || d.max <= (1 + kDramMoved) * d.min) return {};
  return fmt::format(
      "the host's speed moved during calibration: the op speed probe took {:.0f} to {:.0f} us; "
      "the op costs describe a moving host: calibrate again when it is steady",
      d.min, d.max);
}

std::string calibration_slow_note(const std::vector<double>& speed_samples, double described_us) {
  const SampleSpread d = sample_spread(speed_samples);
  if (d.samples < 2 || !(d.min > 0) || described_us < (1 + kDramMoved) * d.min) return {};
  return fmt::format(
      "the op costs describe the host at {:.0f} us an op speed probe, {:.2f}x the fastest "
      "sample ({:.0f} us): most of the calibration ran in a slow spell (on a 2-core EPYC VM, "
      "three calibrations at 1.20-1.32x predicted the same measured steps 14-19% long, the "
      "other seven, at 1.05-1.09x, 8-13%); if the host is usually faster, calibrate again "
      "when it is, or predict with validate --host-speed run",
      described_us, described_us / d.min, d.min);
}

namespace {
// A probe's median during the run against its calibrated figure: nothing when either is
// missing or their ratio is not `far` (by default: within kDramMoved of 1),
// `not_comparable(median)` when the thread counts differ, else `moved(median, ratio)`.
bool beyond_dram_moved(double ratio) {
  return std::abs(ratio - 1) >= kDramMoved;
}

template <class NotComparable, class Moved>
std::string against_calibration(const std::vector<double>& samples, double calibrated, int threads,
                                int calibrated_threads, NotComparable not_comparable, Moved moved,
                                bool (*far)(double) = beyond_dram_moved) {
  const SampleSpread d = sample_spread(samples);
  if (d.samples == 0 || calibrated <= 0) return {};
  if (calibrated_threads != threads) return not_comparable(d.median);
  const double ratio = d.median / calibrated;
  if (!far(ratio)) return {};
  return moved(d.median, ratio);
}
}  // namespace

std::string speed_drift_note(const RunConditions& c, double calibrated_us, int calibrated_threads) {
  return against_calibration(
      c.op_probe_us, calibrated_us, c.threads, calibrated_threads,
      [&](double median) {
        return fmt::format(
            "op speed probe: {:.0f} us (median) on {} thread(s), not comparable with the "
            "machine file's {:.0f} us on {} thread(s) (host.op_probe_us)",
            median, c.threads, calibrated_us, calibrated_threads);
      },
      [&](double median, double ratio) {
        return fmt::format(
            "host speed during the steps: the op speed probe took {:.0f} us (median), {:.2f}x "
            "the {:.0f} us of calibration (host.op_probe_us): the op costs describe the host as "
            "it was then, so ops, the small ones most, will run about that much {} than "
            "predicted; this error is the host's, not the model's: recalibrate on a steadier "
            "host, compare with --profile in-run, or predict with --host-speed run",
            median, ratio, calibrated_us, ratio > 1 ? "slower" : "faster");
      });
}

std::string placement_drift_note(const RunConditions& c, double calibrated_ns,
                                 int calibrated_threads) {
  return against_calibration(
      c.core_to_core_ns, calibrated_ns, c.threads, calibrated_threads,
      [&](double median) {
        return fmt::format(
            "core-to-core probe: {:.0f} ns (median) on {} thread(s), not comparable with the "
            "machine file's {:.0f} ns on {} thread(s) (host.core_to_core_ns)",
            median, c.threads, calibrated_ns, calibrated_threads);
      },
      [&](double median, double ratio) {
        return fmt::format(
            "the two cores sat {} during the steps than when calibrated: a line one had just "
            "written took the other {:.0f} ns to read (median), {:.1f}x the {:.0f} ns of "
            "calibration (host.core_to_core_ns), as when a VM's cores {} a chiplet's L3; the "
            "op costs hold calibration's placement, so ops that read what the other core "
            "wrote run {} than predicted (on a 2-core EPYC VM, 4 of 18 runs at 64-111 ns "
            "against 12-23 ns came out 14-23% slower than the analytic path predicted, the "
            "others within 13%); this error is the host's, not the model's: compare with "
            "--profile in-run, or recalibrate in this placement",
            ratio > 1 ? "further apart" : "closer together", median, ratio, calibrated_ns,
            ratio > 1 ? "stop sharing" : "come to share", ratio > 1 ? "slower" : "faster");
      },
      [](double ratio) { return ratio >= kPlacementMoved || ratio <= 1 / kPlacementMoved; });
}

std::string dram_drift_note(const RunConditions& c, double calibrated_gbs, int calibrated_threads) {
  return against_calibration(
      c.dram_triad_gbs, calibrated_gbs, c.threads, calibrated_threads,
      [&](double median) {
        return fmt::format(
            "DRAM probe: {:.1f} GB/s (median) on {} thread(s), not comparable with the machine "
            "file's {:.1f} GB/s on {} thread(s) (host.dram_triad_gbs)",
            median, c.threads, calibrated_gbs, calibrated_threads);
      },
      [&](double median, double ratio) {
        return fmt::format(
            "DRAM bandwidth during the steps: median {:.1f} GB/s, {:.0f}% of the {:.1f} GB/s "
            "calibrate measured (host.dram_triad_gbs): predictions are for the calibrated "
            "memory system, so memory-bound ops will be about that much {} than predicted; "
            "recalibrate on a quieter host, or compare with --profile in-run",
            median, 100 * ratio, calibrated_gbs, ratio < 1 ? "slower" : "faster");
      });
}

std::vector<std::string> describe_run(const RunReport& report, const RunOptions& o) {
  std::vector<std::string> notes;
  const auto& c = report.conditions;
  bool several = false;
  for (const auto& r : report.results)
    several = several || r.execution != report.results.front().execution;

  // Busy: other processes used more than the cores the run left free, by a quarter core on
  // average. Measured over the run (/proc/stat less this process) where the host says; the
  // load average, which trails by a minute, only where it does not.
  const double spare = double(std::max(0, c.cpus - c.threads)) + kBusyCores;
  if (c.other_cores >= 0 && c.cpus > 0) {
    if (c.other_cores > spare)
      notes.push_back(fmt::format(
          "busy machine: other processes kept {:.2f} cores busy on average during the run "
          "(/proc/stat, this process's own CPU time taken out) on {} cores for {} threads: "
          "they compete for the cores, step times are noisy",
          c.other_cores, c.cpus, c.threads));
  } else if (c.load_before >= 0 && c.cpus > 0 && c.load_before > double(c.cpus - c.threads) + 0.5) {
    notes.push_back(fmt::format(
        "busy machine: load average {:.2f} before the run on {} cores for {} threads: other "
        "processes compete for the cores, step times are noisy",
        c.load_before, c.cpus, c.threads));
  }
  if (c.steal_cores > kBusyCores)
    notes.push_back(fmt::format(
        "the hypervisor ran other guests on this VM's cores: {:.2f} cores of steal time on "
        "average during the run; step times are noisy",
        c.steal_cores));
  int dropped = 0, run = 0, kept_all = 0;
  for (const auto& q : report.quality) {
    dropped += q.steps_dropped;
    run += q.steps_run;
    int disturbed_steps = 0;
    for (const auto& s : q.samples) disturbed_steps += disturbed(s, o.min_cpu_ratio) ? 1 : 0;
    if (disturbed_steps > 0 && q.steps_dropped == 0) ++kept_all;
  }
  if (dropped > 0)
    notes.push_back(fmt::format(
        "dropped {} of {} measured steps as disturbed (main thread CPU < {:.2f} of wall, or "
        "threads waiting for a core > {:.2f} of it)",
        dropped, run, o.min_cpu_ratio, 1 - o.min_cpu_ratio));
  if (kept_all > 0)
    notes.push_back(fmt::format(
        "{} schedule(s) had fewer than 2 undisturbed steps: all their steps were kept, their "
        "figures are from a busy machine",
        kept_all));
  const DramSpread dram = dram_spread(c);
  if (dram.samples >= 2 && dram.max > (1 + kDramMoved) * dram.min)
    notes.push_back(fmt::format(
        "the host's DRAM bandwidth moved during the run: the probe read {:.1f} to {:.1f} GB/s "
        "(median {:.1f}) over {} rounds; memory-bound ops' times move with it (the orderings "
        "are interleaved, so speedups suffer less than step times)",
        dram.min, dram.max, dram.median, dram.samples));
  const SampleSpread speed = sample_spread(c.op_probe_us);
  if (speed.samples >= 2 && speed.max > (1 + kDramMoved) * speed.min)
    notes.push_back(fmt::format(
        "the host's speed moved during the run: the op speed probe took {:.0f} to {:.0f} us "
        "(median {:.0f}) over {} rounds; every op's time moves with it (the orderings are "
        "interleaved, so speedups suffer less than step times)",
        speed.min, speed.max, speed.median, speed.samples));
  const SampleSpread c2c = sample_spread(c.core_to_core_ns);
  if (c2c.samples >= 2 && c2c.max > kPlacementMoved * c2c.min)
    notes.push_back(fmt::format(
        "the two cores' placement moved during the run: a line one core had just written took "
        "the other {:.0f} to {:.0f} ns to read (median {:.0f}) over {} rounds, as when a VM's "
        "cores share a chiplet's L3 in some rounds and not in others; ops that read what the "
        "other core wrote (a backward-fused update after its backward op) cost more in the "
        "slow rounds (on a 2-core EPYC VM, efficientnet_b0 Adam backward-fused measured "
        "0.963-0.980x eager after 68-ns probes and 0.977-1.006x after 13-ns ones)",
        c2c.min, c2c.max, c2c.median, c2c.samples));
  if (!c.pin_note.empty()) notes.push_back(c.pin_note);
  // libtorch's default intra-op threads are its count of physical cores, which a VM may
  // report as fewer than it runs on (this project's 2-core host: 1). calibrate and profile
  // use every core by default, so a bare run then measures another op than they predict.
  if (o.threads == 0 && o.device == "cpu" && c.threads > 0 && c.cpus > c.threads)
    notes.push_back(fmt::format(
        "libtorch's default here is {} intra-op thread(s) on {} online cores; `fusim calibrate` "
        "and `fusim profile` use every core unless told otherwise, so to compare with their "
        "predictions pass --threads (the machine's threads_per_op), as validate does",
        c.threads, c.cpus));

  if (report.speedups.empty()) return notes;
  std::vector<std::string> wide;
  for (std::size_t k = 0; k < report.results.size(); ++k) {
    const int b = report.baselines[k];
    if (b < 0 || b == int(k)) continue;
    const auto& s = report.speedups[k];
    const auto& r = report.results[k];
    const std::string name = label(r, several);
    if (s.outside_noise())
      notes.push_back(
          fmt::format("{}: {:.3f}x eager, 95% CI [{:.3f}, {:.3f}]: {} than eager, "
                      "outside the noise",
                      name, s.speedup, s.low, s.high, s.speedup > 1 ? "faster" : "slower"));
    else
      notes.push_back(
          fmt::format("{}: {:.3f}x eager, 95% CI [{:.3f}, {:.3f}]: inside the noise, "
                      "this run cannot tell it from eager",
                      name, s.speedup, s.low, s.high));
    if (s.half_width_points() >= o.ci_points)
      wide.push_back(fmt::format("{} +-{:.1f}", name, s.half_width_points()));
    const auto& base = report.results[std::size_t(b)];
    const std::size_t n = report.results.size();
    const auto first = [&](int round) {
      const auto order = round_order(round, n);
      return std::find(order.begin(), order.end(), std::size_t(b)) <
             std::find(order.begin(), order.end(), k);
    };
    const OrderEffect e =
        order_effect(base.step_times, base.step_rounds, r.step_times, r.step_rounds, first);
    if (e.differs)
      notes.push_back(fmt::format(
          "{}: the order within a round moved its speedup: {:.3f} in the {} rounds where {} ran "
          "first, {:.3f} in the {} where it ran after (95% apart): the host carries one "
          "ordering's state into the next; the rounds balance the orders, so the speedup above "
          "is the mean of both",
          name, e.first_speedup, e.first_rounds, label(base, several), e.after_speedup,
          e.after_rounds));
  }
  // The fused orderings against each other, within one execution.
  for (std::size_t a = 0; a < report.results.size(); ++a)
    for (std::size_t b = a + 1; b < report.results.size(); ++b) {
      const auto& ra = report.results[a];
      const auto& rb = report.results[b];
      if (ra.execution != rb.execution || ra.ordering == "eager" || rb.ordering == "eager")
        continue;
      if (ra.step_times.size() < 2 || rb.step_times.size() < 2) continue;
      const auto s = paired_speedup(rb.step_times, rb.step_rounds, ra.step_times, ra.step_rounds);
      notes.push_back(fmt::format("{} vs {}: {:.3f}x, 95% CI [{:.3f}, {:.3f}]: {}",
                                  label(ra, several), label(rb, several), s.speedup, s.low, s.high,
                                  s.outside_noise()
                                      ? (s.speedup > 1 ? "the first is faster, outside the noise"
                                                       : "the first is slower, outside the noise")
                                      : "inside the noise, their order is not decided"));
    }
  if (!wide.empty()) {
    std::string list;
    for (const auto& w : wide) list += (list.empty() ? "" : ", ") + w;
    notes.push_back(
        o.max_time_s > 0
            ? fmt::format("after {:.0f} s ({} rounds, --max-time {} s) some 95% CIs are still "
                          "wider than +-{} point(s): {}",
                          c.elapsed_s, c.rounds, o.max_time_s, o.ci_points, list)
            : fmt::format(
                  "95% CIs wider than +-{} point(s): {} (raise --measured-steps or --max-time)",
                  o.ci_points, list));
  }
  return notes;
}

}  // namespace fusim::backend
