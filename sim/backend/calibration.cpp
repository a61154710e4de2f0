#include "backend/calibration.h"

#include <fmt/format.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "backend/host_allocator.h"
#include "core/error.h"
#include "core/units.h"

namespace fusim::backend {
namespace {

// Cache hints, innermost first: sysfs (Linux cacheinfo) where the kernel exposes it, else
// glibc's sysconf (CPUID leaves 4 / 0x8000001D). Data and unified caches only.
void cache_hints(std::vector<std::int64_t>& sizes, std::vector<int>& assoc) {
  for (int level = 1; level <= 3; ++level) {
    std::int64_t size = 0;
    int ways = 0;
    for (int index = 0; index < 8 && size == 0; ++index) {
      const auto dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
      std::ifstream lv(dir + "level"), ty(dir + "type"), sz(dir + "size"),
          wa(dir + "ways_of_associativity");
      int l = 0;
      std::string type, text;
      if (!(lv >> l) || l != level || !(ty >> type) || type == "Instruction") continue;
      if (sz >> text) size = parse_bytes(text).value_or(0);
      wa >> ways;
    }
    if (size == 0) {
      const int name[3][2] = {{_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC},
                              {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC},
                              {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_ASSOC}};
      size = std::max(0L, sysconf(name[level - 1][0]));
      ways = int(std::max(0L, sysconf(name[level - 1][1])));
    }
    if (size <= 0) break;
    sizes.push_back(size);
    assoc.push_back(ways > 0 ? ways : 16);
  }
}

std::int64_t round_pow2(double bytes) {
  return std::int64_t(1) << std::int64_t(std::llround(std::log2(std::max(bytes, 1024.0))));
}

// The footprint at which the curve first rises above `threshold` (log-interpolated).
double crossing(const std::vector<LatencyPoint>& curve, double threshold, std::int64_t from) {
  for (std::size_t i = 1; i < curve.size(); ++i) {
    if (curve[i].bytes <= from || curve[i].ns < threshold || curve[i - 1].ns >= threshold) continue;
    const double f = (threshold - curve[i - 1].ns) / (curve[i].ns - curve[i - 1].ns);
    return std::exp(std::log(double(curve[i - 1].bytes)) +
                    f * (std::log(double(curve[i].bytes)) - std::log(double(curve[i - 1].bytes))));
  }
  return double(curve.back().bytes);
}
}  // namespace

std::vector<Plateau> latency_plateaus(const std::vector<LatencyPoint>& curve) {
  std::vector<Plateau> out;
  std::size_t first = 0;
  double low = curve.empty() ? 0 : curve[0].ns;
  auto close = [&](std::size_t end) {
    if (end - first < 3 && end != curve.size()) return;  // a transition, not a plateau
    std::vector<double> v;
    for (std::size_t i = first; i < end; ++i) v.push_back(curve[i].ns);
    std::sort(v.begin(), v.end());
    out.push_back({first, end, v[v.size() / 2]});
  };
  for (std::size_t i = 1; i < curve.size(); ++i) {
    low = std::min(low, curve[i].ns);
    if (curve[i].ns <= kPlateauRise * low) continue;
    close(i);
    first = i;
    low = curve[i].ns;
  }
  if (!curve.empty()) close(curve.size());
  // Neighbouring plateaus less than kLevelStep apart are one level whose far end drifted
  // (TLB reach, a noisy neighbour): real level steps are 3x and more (L1 -> L2 -> L3 -> DRAM).
  std::vector<Plateau> merged;
  for (const auto& p : out) {
    if (!merged.empty() && p.ns < kLevelStep * merged.back().ns && p.end != curve.size()) {
      merged.back().end = p.end;  // the transition between them joins too
      continue;
    }
    merged.push_back(p);
  }
  return merged;
}

std::vector<MeasuredLevel> find_cache_levels(const std::vector<LatencyPoint>& curve,
                                             const std::vector<std::int64_t>& hints,
                                             const std::vector<int>& hint_assoc) {
  FUSIM_ASSERT(curve.size() >= 4, "a latency curve needs points");
  const std::vector<Plateau> plateaus = latency_plateaus(curve);
  std::vector<MeasuredLevel> levels;
  // Every plateau but the last (DRAM: the curve ends beyond the caches) is a level; at most
  // three (L1, L2, LLC), the innermost ones. The outermost is the shared one.
  const std::size_t count = std::min<std::size_t>(plateaus.size() - 1, 3);
  for (std::size_t k = 0; k < count; ++k) {
    const Plateau& p = plateaus[k];
    const Plateau& next = plateaus[k + 1];
    const double measured = crossing(curve, std::sqrt(p.ns * next.ns), curve[p.first].bytes);
    MeasuredLevel level;
    level.latency_ns = p.ns;
    const double reach = k + 1 == count ? kSharedHintReach : kPrivateHintReach;
    // The hint of the same level, matched by size rather than index: a level the curve
    // cannot see (a hint beyond it) must not shift the others.
    std::int64_t hint = 0;
    int ways = 16;
    for (std::size_t h = 0; h < hints.size(); ++h)
      if (hints[h] > 0 && measured >= hints[h] / reach && measured <= hints[h] * reach) {
        hint = hints[h];
        ways = h < hint_assoc.size() && hint_assoc[h] > 0 ? hint_assoc[h] : 16;
      }
    if (hint > 0) {
      level.size = hint;
      level.listed = true;
      level.assoc = ways;
      level.how = fmt::format("hint {} confirmed by the curve (crossing at {})", format_bytes(hint),
                              format_bytes(round_pow2(measured)));
    } else {
      level.size = round_pow2(measured);
      level.assoc = k < hint_assoc.size() && hint_assoc[k] > 0 ? hint_assoc[k] : 16;
      const std::int64_t listed = k < hints.size() ? hints[k] : 0;
      level.how = fmt::format(
          "curve crossing at {}{}", format_bytes(level.size),
          listed > 0 ? fmt::format(" (the system lists {}: this process sees less of it, e.g. "
                                   "a cache partition of the VM, or more, if it is wrong)",
                                   format_bytes(listed))
                     : "");
      if (level.size % (std::int64_t(level.assoc) * 64) != 0) level.assoc = 16;
    }
    level.name = k == 0 ? "L1" : "L2";
    levels.push_back(level);
  }
  if (!levels.empty()) {
    levels.back().name = "LLC";
    levels.back().shared = true;
  }
  return levels;
}

std::optional<StreamingLevel> streaming_level(const std::vector<BandwidthPoint>& curve,
                                              std::int64_t beyond) {
  if (curve.size() < 5) return std::nullopt;
  std::vector<double> tail{curve[curve.size() - 1].gbs, curve[curve.size() - 2].gbs,
                           curve[curve.size() - 3].gbs};
  std::sort(tail.begin(), tail.end());
  const double dram = tail[1];
  // The last footprint clearly faster than DRAM (none: no streaming level).
  std::size_t last = curve.size(), first = curve.size();
  for (std::size_t i = 0; i + 3 < curve.size(); ++i)
    if (curve[i].bytes > beyond && curve[i].gbs >= 1.5 * dram) {
      last = i;
      first = std::min(first, i);
    }
  if (last == curve.size()) return std::nullopt;
  // The level's own plateau: the run of footprints from the first clearly cached one that
  // stay within kStreamingPlateauRise of it. Not every point up to `last`: where the curve
  // falls slowly (the one-thread curve of the 2-core VM: 65 GB/s at 11 MiB, 54, 42, 37, 34
  // at 46 MiB, DRAM 23), the slope's own points pulled the median down and whether 46 MiB
  // passed 1.5x DRAM moved the LLC from 28 to 61 MiB between two calibrations 10 minutes
  // apart. Such a slope is no level at all (calibration.h, kStreamingPlateauPoints).
  std::vector<double> plateau;
  for (std::size_t i = first;
       i + 3 < curve.size() && curve[i].gbs * kStreamingPlateauRise >= curve[first].gbs; ++i)
    plateau.push_back(curve[i].gbs);
  if (plateau.size() < kStreamingPlateauPoints) return std::nullopt;
  std::sort(plateau.begin(), plateau.end());
  const double cached = plateau[plateau.size() / 2];
  const double threshold = std::sqrt(cached * dram);
  double size = double(curve[last].bytes);
  for (std::size_t i = first + 1; i < curve.size(); ++i) {
    if (curve[i].gbs > threshold) continue;
    const auto& p = curve[i - 1];
    const double f = p.gbs > curve[i].gbs ? (p.gbs - threshold) / (p.gbs - curve[i].gbs) : 0;
    size = std::exp(std::log(double(p.bytes)) +
                    std::clamp(f, 0.0, 1.0) *
                        (std::log(double(curve[i].bytes)) - std::log(double(p.bytes))));
    break;
  }
  constexpr double kMiB = 1 << 20;
  return StreamingLevel{std::max<std::int64_t>(1, std::llround(size / kMiB)) << 20, cached, dram};
}

std::vector<BandwidthPoint> best_of_sweeps(const std::vector<std::vector<BandwidthPoint>>& sweeps,
                                           int* disturbed) {
  if (disturbed) *disturbed = 0;
  if (sweeps.empty()) return {};
  std::vector<BandwidthPoint> best = sweeps.front();
  for (std::size_t i = 0; i < best.size(); ++i) {
    double worst = best[i].gbs;
    for (const auto& sweep : sweeps) {
      if (sweep.size() != best.size() || sweep[i].bytes != best[i].bytes)
        throw std::invalid_argument("best_of_sweeps: the sweeps measured different footprints");
      best[i].gbs = std::max(best[i].gbs, sweep[i].gbs);
      worst = std::min(worst, sweep[i].gbs);
    }
    if (disturbed && worst * kSweepSpread < best[i].gbs) ++*disturbed;
  }
  return best;
}

std::vector<PortWidth> stream_port_widths(const std::vector<MeasuredLevel>& levels,
                                          const std::vector<BandwidthPoint>& curve, int threads,
                                          double clock_mhz) {
  std::vector<PortWidth> widths(levels.size());
  const int t = std::max(1, threads);
  double above = 0;  // the capacity of the levels above, for the whole footprint
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const double ways = levels[k].shared ? 1.0 : double(t);
    const double capacity = double(levels[k].size) * ways;
    std::vector<double> gbs;
    for (const auto& p : curve)
      if (double(p.bytes) > 1.5 * above && double(p.bytes) <= capacity / 1.4)
        gbs.push_back(p.gbs / ways);
    above = std::max(above, capacity);
    if (gbs.empty() || clock_mhz <= 0) continue;
    std::sort(gbs.begin(), gbs.end());
    const double median =
        gbs.size() % 2 ? gbs[gbs.size() / 2] : (gbs[gbs.size() / 2 - 1] + gbs[gbs.size() / 2]) / 2;
    widths[k] = {std::max(1, int(std::lround(median * 1e3 / clock_mhz))), median, int(gbs.size())};
  }
  // A level beyond a measured one with no footprint of its own (its range narrower than
  // the curve's steps: an LLC of 21 MiB beyond an 8 MiB L3 holds (12, 15] MiB) streams no
  // faster than the level above it.
  const PortWidth* inner = nullptr;
  for (auto& w : widths) {
    if (w.bytes_per_cycle > 0) {
      if (!inner || w.bytes_per_cycle < inner->bytes_per_cycle) inner = &w;
    } else if (inner) {
      w = {inner->bytes_per_cycle, inner->gbs, 0};
    }
  }
  return widths;
}

void extend_shared_level(std::vector<MeasuredLevel>& levels,
                         const std::vector<BandwidthPoint>& triad, int threads) {
  if (levels.empty() || !levels.back().shared || levels.back().listed) return;
  MeasuredLevel& level = levels.back();
  const double inner =
      levels.size() >= 2 ? double(levels[levels.size() - 2].size) * std::max(threads, 1) : 0;
  std::vector<double> own;
  std::size_t next = triad.size();  // the first point past the chase's size
  for (std::size_t i = 0; i < triad.size(); ++i) {
    if (double(triad[i].bytes) <= 1.5 * inner) continue;
    if (triad[i].bytes <= level.size) {
      own.push_back(triad[i].gbs);
    } else if (next == triad.size()) {
      next = i;
    }
  }
  if (own.empty() && next < triad.size()) own.push_back(triad[next].gbs);
  if (own.empty()) return;
  std::sort(own.begin(), own.end());
  const double reference = own[own.size() / 2];
  std::int64_t reach = 0;
  for (std::size_t i = next; i < triad.size(); ++i) {
    if (triad[i].gbs * kStreamingPlateauRise < reference) break;
    reach = triad[i].bytes;
  }
  constexpr std::int64_t kMiB = std::int64_t(1) << 20;
  const std::int64_t size = reach / kMiB * kMiB;
  if (size <= level.size) return;
  level.how += fmt::format(
      "; the {}-thread triad streams within {:.1f}x of the level's {:.1f} GB/s up to {}: the "
      "size (the chase's share moves with the VM's neighbours, streams find this much)",
      threads, kStreamingPlateauRise, reference, format_bytes(size));
  level.size = size;
  if (level.size % (std::int64_t(level.assoc) * 64) != 0) level.assoc = 16;
}

void add_streaming_level(std::vector<MeasuredLevel>& levels, const StreamingLevel& s,
                         const std::vector<LatencyPoint>& latency_curve) {
  const std::int64_t inner = levels.empty() ? 0 : levels.back().size;
  if (s.size <= 2 * inner) return;
  std::vector<double> v;
  for (const auto& p : latency_curve)
    if (p.bytes >= 2 * inner && p.bytes * 2 <= s.size) v.push_back(p.ns);
  if (v.empty())
    for (const auto& p : latency_curve)
      if (p.bytes > inner && p.bytes <= s.size) v.push_back(p.ns);
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  if (!levels.empty()) {
    levels.back().name = levels.size() == 1 ? "L2" : "L3";
    levels.back().shared = levels.size() >= 3;
  }
  MeasuredLevel llc;
  llc.name = "LLC";
  llc.shared = true;
  llc.size = s.size;
  llc.assoc = 16;  // whole MiB: 1024 sets of 16 x 64 B per MiB
  llc.latency_ns = v[v.size() / 2];
  llc.how = fmt::format(
      "streaming: the {} triad runs at {:.1f} GB/s up to here and {:.1f} GB/s (DRAM) "
      "beyond; its random-access latency is close to DRAM's, so the latency curve alone "
      "misses it",
      s.threads > 0 ? fmt::format("{}-thread", s.threads) : std::string("all-thread"), s.cached_gbs,
      s.dram_gbs);
  levels.push_back(llc);
}

Calibration calibrate_host(const std::function<void(const std::string&)>& progress, int threads) {
  keep_freed_memory_in_heap();  // as measured runs do (backend/host_allocator.h)
  Calibration c;
  c.cores = int(std::max(1u, std::thread::hardware_concurrency()));
  c.threads = threads > 0 ? std::min(threads, c.cores) : c.cores;
  progress("clock: dependent-multiply chain");
  c.clock_mhz = probe::core_clock_mhz();
  progress("vector FMA throughput");
  c.vector_flops_per_cycle = probe::vector_flops_per_cycle(c.clock_mhz);
  // Footprints 4 KiB .. 256 MiB, 2 points per octave (x sqrt 2).
  progress("pointer chase, 4 KiB .. 256 MiB");
  for (double b = 4096; b <= double(256 << 20) * 1.01; b *= std::sqrt(2.0)) {
    const auto bytes = std::int64_t(b) / 64 * 64;
    c.curve.push_back({bytes, probe::pointer_chase_ns(bytes, 42)});
  }
  std::vector<std::int64_t> hints;
  std::vector<int> assoc;
  cache_hints(hints, assoc);
  c.levels = find_cache_levels(c.curve, hints, assoc);
  // Streaming bandwidth per footprint, 1 MiB .. 1 GiB (2 points per octave), with the
  // threads the predictions are for: the cache one core streams from is not what two do.
  // On the 2-core EPYC VM one thread streams ~75 GB/s at 1-8 MiB and falls to DRAM's ~30
  // from 24 MiB, while two threads still get ~100 GB/s at 24 MiB; sized from the two-thread
  // curve, a one-thread machine file had a 45 MiB LLC, and its predictions kept 40 MiB of
  // weights cached across a backward-fused step (README, "Loads serial, stores posted").
  // Three sweeps, each point the best of them (best_of_sweeps: a disturbance lowers a
  // stretch of one sweep; ~2-3 s a sweep on the 2-core VM).
  constexpr int kSweeps = 3;
  std::vector<std::vector<BandwidthPoint>> sweeps(kSweeps);
  for (int k = 0; k < kSweeps; ++k) {
    progress(
        fmt::format("triad bandwidth vs footprint, 1 MiB .. 1 GiB, {} thread{} (sweep {} of {})",
                    c.threads, c.threads == 1 ? "" : "s", k + 1, kSweeps));
    for (double b = double(1 << 20); b <= double(std::int64_t(1) << 30) * 1.01; b *= std::sqrt(2.0))
      sweeps[std::size_t(k)].push_back(
          {std::int64_t(b) / 4096 * 4096, probe::triad_gbs(std::int64_t(b), c.threads)});
  }
  c.bw_sweeps = kSweeps;
  c.bw_curve = best_of_sweeps(sweeps, &c.bw_disturbed);
  extend_shared_level(c.levels, c.bw_curve, c.threads);
  const std::int64_t inner = c.levels.empty() ? 0 : c.levels.back().size;
  if (auto s = streaming_level(c.bw_curve, inner)) {
    s->threads = c.threads;
    add_streaming_level(c.levels, *s, c.curve);
    if (!c.levels.empty() && c.levels.back().size == s->size) {
      // Idle latency beyond it: the latency curve must reach 4x the LLC.
      for (double b = double(c.curve.back().bytes) * std::sqrt(2.0);
           b <= 4.0 * double(s->size) * 1.01; b *= std::sqrt(2.0)) {
        progress(
            fmt::format("pointer chase at {} (beyond the LLC)", format_bytes(std::int64_t(b))));
        const auto bytes = std::int64_t(b) / 64 * 64;
        c.curve.push_back({bytes, probe::pointer_chase_ns(bytes, 42)});
      }
      c.llc_triad_one = probe::triad_gbs(s->size / 2, 1);
    }
  }
  c.dram_latency_ns = c.curve.back().ns;
  // Arrays far beyond the LLC (at least 128 MiB, 2x the LLC each), so the kernels stream
  // from DRAM.
  const std::int64_t llc = c.levels.empty() ? 0 : c.levels.back().size;
  c.dram_array_bytes = std::max<std::int64_t>(128 << 20, 2 * llc);
  progress("DRAM bandwidth, 1 thread (read, copy, triad)");
  c.bw_one = probe::stream_bandwidth(c.dram_array_bytes, 1, 3);
  progress(fmt::format("DRAM bandwidth, {} threads", c.cores));
  c.bw_all = probe::stream_bandwidth(c.dram_array_bytes, c.cores, 3);
  progress(fmt::format(
      "libtorch op classes (gemm, conv, elementwise, norm, reduction, pool, attention), {} "
      "thread{}",
      c.threads, c.threads == 1 ? "" : "s"));
  c.ops = measure_op_classes(c.threads);
  return c;
}

}  // namespace fusim::backend
