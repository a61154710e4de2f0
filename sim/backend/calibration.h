#pragma once
// `fusim calibrate`: measures this host into a machine model (models/machines/SCHEMA.md).
// Cache levels come from the pointer-chase latency-vs-footprint curve; sysfs (or CPUID via
// sysconf) sizes are hints only, because VMs misreport them (this one reports a 508 MiB
// L3). No torch in this header.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/memory_probe.h"

namespace fusim::backend {

struct LatencyPoint {
  std::int64_t bytes = 0;
  double ns = 0;
};

struct BandwidthPoint {
  std::int64_t bytes = 0;
  double gbs = 0;
};

struct MeasuredLevel {
  std::string name;  // "L1", "L2", "LLC"
  std::int64_t size = 0;
  double latency_ns = 0;
  int assoc = 8;
  bool shared = false;
  bool listed = false;  // the size is the system's (a hint the curve confirmed)
  std::string how;      // where the size came from, for the machine's "sources"
};

// Throughput of each op class of compute::OpClass measured with libtorch on operands that
// fit in cache, as FLOP/s with FLOPs counted by workload::layer_cost (the simulator's count).
struct OpClassRates {
  double gemm = 0, conv = 0, elementwise = 0, norm = 0, reduction = 0, pool = 0, attention = 0;
  double dispatch_ns = 0;  // host time of one tiny op (a 1-element add)
};
OpClassRates measure_op_classes(int threads);  // op_probe.cpp (libtorch)

struct Calibration {
  int cores = 1;
  // Intra-op threads the op probes ran with (the machine's compute.threads_per_op): the
  // threads the predictions are for, so that an op family's efficiency is measured against
  // the peak of the cores it runs on. 1 on a multi-core host keeps a step on one core and
  // its private caches (on a VM whose vCPUs share no cache, what a fused ordering reuses).
  int threads = 1;
  double clock_mhz = 0;
  double vector_flops_per_cycle = 0;
  std::vector<LatencyPoint> curve;
  std::vector<MeasuredLevel> levels;
  double dram_latency_ns = 0;
  // Triad GB/s (all threads) per footprint: the streaming view of the hierarchy, which
  // can see a cache the latency curve does not (streaming_level).
  std::vector<BandwidthPoint> bw_curve;
  int bw_sweeps = 1;                // sweeps of the footprints bw_curve is the best of
  int bw_disturbed = 0;             // points whose sweeps differed by more than kSweepSpread
  double llc_triad_one = 0;         // 1-thread triad GB/s inside the LLC (for its MSHRs)
  probe::Bandwidth bw_one, bw_all;  // GB/s, 1 thread and all cores, arrays far beyond the LLC
  std::int64_t dram_array_bytes = 0;
  OpClassRates ops;
};

// A plateau of the latency curve: points [first, end) whose latency stays within
// kPlateauRise of the lowest latency seen since the plateau began, and their median.
// Transitions between levels (fewer than 3 points) are not plateaus; the last run of the
// curve always is (DRAM).
struct Plateau {
  std::size_t first = 0, end = 0;
  double ns = 0;
};
constexpr double kPlateauRise = 1.35;  // TLB misses lift a level's far end ~20-30%
// Plateaus closer than this are merged into one level (latency_plateaus keeps the first
// one's median): a level's median latency is at least this many times the one above it.
constexpr double kLevelStep = 1.6;
std::vector<Plateau> latency_plateaus(const std::vector<LatencyPoint>& curve);

// Finds cache levels in a latency curve (sorted by footprint, ending in DRAM): every plateau
// but the last is a level (at most three, innermost first), its latency the plateau's
// median, its size the footprint where the curve crosses the geometric mean of its plateau
// and the next one, rounded to a power of two, unless a hint (bytes; may be empty, wrong or
// more than this process gets) lies within kPrivateHintReach of it for a private level, or
// kSharedHintReach for the outermost, shared one (then the hint, which is exact when right).
// A private level is the core's own: where its crossing falls short of the hint, the curve's
// far end was lifted by TLB misses or replacement (a 2 MiB L2 crossed at 1.25 MiB on a
// 2026-12-01 VM), and the hint is its size. A shared level is the physical cache, of which a
// VM gets what its neighbours on the same chiplet leave: the chase, one random cycle over
// the footprint, measures the share that keeps data between reuses, which is what the
// simulated LRU levels need. On the 2-core EPYC VM (2026-12-07) sysfs listed a 32 MiB L3 and
// the chase read 16.3 ns at 16 MiB and 115 ns at 23 MiB (crossing at 17.4 MiB); the 32 MiB
// hint, then taken within 2x, predicted the nine-model fidelity check's fused speedups with a
// mean error of 0.98 points against four runs' mean (44 of 54 within 2 points), the measured
// 16 MiB with 0.71 (53 of 54), from the same measured steps (README, Fidelity). The chase's
// share moves with the neighbours: extend_shared_level sizes it from the triad afterwards.
constexpr double kPrivateHintReach = 2.0;
// One step of the curve's footprints (x sqrt 2): a sharp step at the hint crosses within it.
constexpr double kSharedHintReach = 1.4143;
std::vector<MeasuredLevel> find_cache_levels(const std::vector<LatencyPoint>& curve,
                                             const std::vector<std::int64_t>& hint_sizes,
                                             const std::vector<int>& hint_assoc);

// The outermost cache as streaming sees it: the bandwidth curve (sorted by footprint, its
// last points beyond every cache) stays well above its DRAM plateau (the median of its last
// three points) up to some footprint; that level's size is where the curve falls through
// the geometric mean of the two plateaus, rounded to whole MiB. Its plateau is the run of
// footprints beyond `beyond` from the first at >= 1.5x DRAM that stay within kPlateauRise
// of that first one (the median of the run). A cache whose random-access
// latency is close to DRAM's (far slices of a large shared L3, seen through a VM's share)
// shows here and not in the latency curve. nullopt when no footprint streams at >= 1.5x
// DRAM's bandwidth beyond `beyond` bytes, or when the plateau (the footprints within
// kStreamingPlateauRise of its first) spans less than an octave (kStreamingPlateauPoints
// footprints, sqrt 2 apart). A level streams at one bandwidth over a range of footprints (the
// VM of 2026-12-01: 47-53 GB/s from 24 to 96 MiB, DRAM 26); a curve that falls steadily past
// the chase's last level, by a fifth or more a step, is that level's tail (the part of a
// partly shared L3 that streams still find), not a cache of its own. On the 2-core EPYC VM
// (2026-12-07, four calibrations within 10 minutes) the chase crossed at 8-17 MiB and the
// triad fell from there: 177 GB/s at 16 MiB, then 135, 102, 71, 60, 53 at 92 MiB, DRAM 46;
// or 158 at 11 MiB, 153, 118, 92, 64. Taken as levels (38-44 MiB with the chase's ~140 ns)
// they predicted the nine-model check's fused speedups with a mean error of 0.91-1.00
// points against four runs' mean, the chase's level alone as the last 0.63-0.67 (README,
// Fidelity).
constexpr double kStreamingPlateauRise = 1.2;
constexpr std::size_t kStreamingPlateauPoints = 3;
struct StreamingLevel {
  std::int64_t size = 0;
  double cached_gbs = 0, dram_gbs = 0;
  int threads = 0;  // of the triad curve, for the level's sources (0: not said)
};
std::optional<StreamingLevel> streaming_level(const std::vector<BandwidthPoint>& curve,
                                              std::int64_t beyond);

// The best of several sweeps of the same footprints (each point's highest GB/s). A
// disturbance (another process, a noisy neighbour of the VM) only ever lowers a triad's
// bandwidth, and it lasts for a stretch of time, not a footprint: within one sweep it
// lowered a run of consecutive points (the 2026-12-06 17:32 one-thread curve: 30.7 GB/s at
// 1 MiB and 31.7 at 16 MiB, where quiet sweeps hold ~75 and ~55, which sized the LLC at
// 8 MiB instead of ~20). Sweeps far apart in time rarely all meet one at the same point.
// `disturbed` (when given) counts the points whose worst sweep is under the best divided
// by kSweepSpread. Every sweep must have the same footprints; an empty list gives {}.
constexpr double kSweepSpread = 1.25;
std::vector<BandwidthPoint> best_of_sweeps(const std::vector<std::vector<BandwidthPoint>>& sweeps,
                                           int* disturbed = nullptr);

// The width of each cache level's port as the triad curve measured it: a level's
// footprints are the curve's points beyond 1.5x the capacity of the levels above it and
// within its own capacity / 1.4 (capacities of the whole footprint: a private level's
// size times `threads`, each thread streaming its own slice); its rate the median of
// their GB/s (of a private level: per thread), as bytes per cycle at `clock_mhz`. The
// triad counts 24 B an element (read b and c, write a), which is what the simulated
// ports see (one lookup per line read or written; writebacks take no port). On the 2-core
// EPYC VM one thread streams ~73 GB/s from its 8 MiB L3 (23 B a cycle) where the default
// port (a line a cycle) would pass 204 GB/s. A level with no point in its range takes the
// narrowest width measured above it (points 0), or 0 when none is (not measured: the
// default stays).
struct PortWidth {
  int bytes_per_cycle = 0;
  double gbs = 0;  // the median it came from (per port)
  int points = 0;
};
std::vector<PortWidth> stream_port_widths(const std::vector<MeasuredLevel>& levels,
                                          const std::vector<BandwidthPoint>& curve, int threads,
                                          double clock_mhz);

// The outermost level, shared, when the chase sized it below what the system lists (a VM's
// share of its chiplet's L3): the chase, one random cycle over the footprint, loses what
// the VM's neighbours evict to a full DRAM latency per line, and on the 2-core EPYC VM
// (2026-12-07, nine calibrations from 10:24 to 12:37) it crossed anywhere from 3.1 to
// 17.4 MiB, while the all-thread triad streamed within 1.2x of the level's own bandwidth up
// to 16 MiB in seven of them (the other two, with 13 and 14 of the triad's 21 points
// disturbed, 22.6 and 32 MiB). Streams are what the ops of a step are, and the fidelity check's four
// runs re-predicted with the level at 8, 16, 18 and 24 MiB erred by 0.79, 0.71, 0.71 and
// 0.77 points, at 4 MiB by 1.04 (README, Fidelity). So the level grows to the last
// footprint of `triad` (sorted by footprint, `threads` threads) whose bandwidth is within
// kStreamingPlateauRise of the level's own: the median of the triad's points past 1.5x
// the private levels' capacity on those threads and up to the chase's size (the nearest
// point past it when none), down to whole MiB. A level of the system's listed size, a
// private one or a triad with no point in the level stays as it is.
void extend_shared_level(std::vector<MeasuredLevel>& levels,
                         const std::vector<BandwidthPoint>& triad, int threads);

// Adds the streaming level as the LLC when it is more than twice the latency curve's last
// level (which then becomes "L2" or "L3", shared from the third level on), its latency the
// latency curve's median over the footprints it holds alone.
void add_streaming_level(std::vector<MeasuredLevel>& levels, const StreamingLevel& level,
                         const std::vector<LatencyPoint>& latency_curve);

// progress(line) is called before each phase. `threads`: intra-op threads of the op probes,
// in [1, cores] (0: every core this process sees).
Calibration calibrate_host(const std::function<void(const std::string&)>& progress,
                           int threads = 0);

// The machine JSON (host-template.json's shape) with every number's source cited.
nlohmann::json machine_json(const Calibration& c, const std::string& name);

}  // namespace fusim::backend
