// Bandwidth-latency curves of a DRAM system (dram_curve.h): the store, measured on first
// use by the probe (dram_probe.cpp) or read from the curve folder, and interpolation.
#include "mem/residency/dram_curve.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "mem/residency/dram_curve_file.h"

namespace fusim::residency {

const char* to_string(DramPattern pattern) {
  switch (pattern) {
    case DramPattern::Stream:
      return "stream";
    case DramPattern::AlignedStream:
      return "aligned-stream";
    case DramPattern::Random:
      break;
  }
  return "random";
}

double DramCurve::peak_bandwidth() const {
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.bandwidth);
  return best;
}

Tick DramCurve::read_latency_at(double bandwidth) const {
  FUSIM_ASSERT(!points.empty(), "a measured curve");
  // Up to the peak only: past it more load only queues (the latency a load beyond the
  // peak would see is not a state the memory can sustain).
  std::size_t peak = 0;
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i].bandwidth > points[peak].bandwidth) peak = i;
  if (bandwidth <= points.front().bandwidth) return points.front().read_latency;
  for (std::size_t i = 1; i <= peak; ++i) {
    const CurvePoint &a = points[i - 1], &b = points[i];
    if (bandwidth <= b.bandwidth && b.bandwidth > a.bandwidth) {
      const double f = (bandwidth - a.bandwidth) / (b.bandwidth - a.bandwidth);
      return a.read_latency +
             static_cast<Tick>(f * static_cast<double>(b.read_latency - a.read_latency) + 0.5);
    }
  }
  return points[peak].read_latency;
}

namespace {
// The two measured shares around `share` and the weight of the upper one.
std::pair<std::size_t, double> bracket(double share) {
  share = std::clamp(share, 0.0, 1.0);
  for (std::size_t i = 1; i < kWriteShares.size(); ++i)
    if (share <= kWriteShares[i])
      return {i - 1, (share - kWriteShares[i - 1]) / (kWriteShares[i] - kWriteShares[i - 1])};
  return {kWriteShares.size() - 2, 1.0};
}
constexpr int kMaxRegions = 16;
}  // namespace

std::string dram_curve_key(const dram::DramSpec& s, const DramCurveParams& p) {
  const auto& o = s.org;
  const auto& t = s.t;
  const auto& c = s.ctrl;
  return fmt::format(
      "v7|{}|{}|{}|{}|org {} {} {} {} {} {} {} {} {}|t {} {} {} {} {} {} {} {} {} {} {} {} {} {} "
      "{} {} {} {} {} {} {} {}|c {} {} {} {} {} {} {} {} {} {} {} {} {} {}|p {} {} {} {} {} {} {}",
      s.name, s.standard, s.data_rate_mts, s.tCK, o.channels, o.pseudo_channels, o.ranks,
      o.bankgroups, o.banks_per_group, o.rows, o.columns, o.bus_width_bits, o.burst_length, t.tCL,
      t.tCWL, t.tRCD, t.tRP, t.tRAS, t.tRC, t.tBL, t.tCCD_S, t.tCCD_L, t.tRRD_S, t.tRRD_L, t.tFAW,
      t.tWR, t.tWTR_S, t.tWTR_L, t.tRTP, t.tRTRS, t.tREFI, t.tRFC, t.tREFIpb, t.tRFCpb, t.tRREFD,
      c.scheduler, c.mapping, c.xor_bank_hash, dram::to_string(c.row_policy), c.row_timeout,
      c.row_cap, dram::to_string(c.refresh), c.read_queue, c.write_queue, c.write_high_watermark,
      c.write_low_watermark, c.interleave_bytes, c.starvation_cycles, c.epoch_cycles,
      p.request_bytes, p.cores, p.mshrs, p.path_latency, p.chunk_bytes, p.window, p.max_bandwidth);
}

int region_bucket(int regions) {
  regions = std::clamp(regions, 1, kMaxRegions);
  int bucket = 1;
  // Nearest in log2: up past a power of two once regions reaches 1.5x it (2^k x sqrt2 would
  // be the exact midpoint; 1.5x keeps the rule in integers: 3 -> 4, 5 -> 4, 6 -> 8).
  while (bucket < kMaxRegions && 2 * regions >= 3 * bucket) bucket *= 2;
  return bucket;
}

DramCurves::DramCurves(dram::DramSpec spec, DramCurveParams params, std::string cache_dir)
    : spec_(std::move(spec)),
      params_(params),
      key_(dram_curve_key(spec_, params_)),
      cache_dir_(std::move(cache_dir)) {}

const DramCurve& DramCurves::curve(DramPattern pattern, int regions, std::size_t share_index) {
  FUSIM_ASSERT(share_index < kWriteShares.size(), "a measured write share");
  regions = region_bucket(regions);
  const auto key = std::make_tuple(static_cast<int>(pattern), regions, share_index);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = curves_.find(key);
  if (it != curves_.end()) return *it->second;  // never moves: the map holds pointers
  const double share = kWriteShares[share_index];
  std::unique_ptr<DramCurve> c;
  CurveFileName name;
  if (!cache_dir_.empty()) {
    if (fingerprint_.empty()) fingerprint_ = controller_fingerprint(spec_);
    name = {cache_dir_, key_, fingerprint_, pattern, regions, share};
    if (auto stored = read_curve_file(name)) {
      c = std::make_unique<DramCurve>(std::move(*stored));
      ++loaded_;
    }
  }
  if (!c) {
    c = std::make_unique<DramCurve>(measure_dram_curve(spec_, params_, pattern, regions, share));
    ++measured_;
    if (!cache_dir_.empty()) write_curve_file(name, *c);
  }
  return *curves_.emplace(key, std::move(c)).first->second;
}

std::size_t DramCurves::measured() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return measured_;
}

std::size_t DramCurves::loaded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return loaded_;
}

double DramCurves::peak_bandwidth(DramPattern pattern, int regions, double write_share) {
  auto [i, f] = bracket(write_share);
  const double lo = curve(pattern, regions, i).peak_bandwidth();
  if (f <= 0) return lo;
  return (1 - f) * lo + f * curve(pattern, regions, i + 1).peak_bandwidth();
}

Tick DramCurves::read_latency_at(DramPattern pattern, int regions, double write_share,
                                 double bandwidth) {
  auto [i, f] = bracket(write_share);
  const Tick lo = curve(pattern, regions, i).read_latency_at(bandwidth);
  // The write-only curve has no reads: a read among almost only writes waits like one
  // among the last mix measured with reads.
  if (f <= 0 || kWriteShares[i + 1] >= 1.0) return lo;
  const Tick hi = curve(pattern, regions, i + 1).read_latency_at(bandwidth);
  return lo + static_cast<Tick>(f * static_cast<double>(hi - lo) + 0.5);
}

Tick DramCurves::idle_read_latency(DramPattern pattern) {
  return curve(pattern, 1, 0).points.front().read_latency;
}

std::shared_ptr<DramCurves> DramCurveStore::get(const dram::DramSpec& spec,
                                                const DramCurveParams& params) {
  std::string key = dram_curve_key(spec, params);
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = by_key_[key];
  if (!slot) slot = std::make_shared<DramCurves>(spec, params, cache_dir_);
  return slot;
}

}  // namespace fusim::residency
