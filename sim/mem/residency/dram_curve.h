#pragma once
// Bandwidth-latency curves of a DRAM system, produced by the detailed controller itself
// (sim/mem/dram, through DramSystem's public interface), for the `tensor` fidelity: its
// DRAM is these curves, not the controller (Mess, Esmaili-Dokht et al., MICRO 2024:
// memory as bandwidth-latency curves per read/write mix, within 1-3% of real machines).
//
// A curve is measured the way the cache hierarchy loads the controller when a pass of
// the executor misses every level: `a` cores each keep `mshrs` line reads in flight (a
// read answered frees its MSHR and the core's next miss goes out `path_latency` later,
// the lookups down to the last level), posted writes (dirty victims) join at a fixed
// share of the bytes, and what the controller refuses waits in a FIFO per channel in
// front of it (the hierarchy's outgoing queues). Pattern `stream`: `regions` tensors read
// together, each chunk of `chunk_bytes` (all regions) cut into one consecutive piece per
// active core, each core reading its pieces line by line, a region at a time in turn (as
// the executor cuts a pass among an op's cores: sim/exec/simulate.h); each core's writes
// a stream of their own, paced by its reads, through pieces cut as the reads' are (a
// victim leaves with the miss that evicts it, and the oldest lines of the last level are
// what an op on as many cores wrote, each core its own piece of each chunk). Pattern
// `random`: uniform lines over 4 GiB. The load is the number of active cores, an op on
// that many cores: 1, 2, 4, ... up to `cores`, until doubling gains under 2% with the
// controller full (most requests refused on arrival: a plateau with room in its queues is
// the few streams' addresses, and more cores may pass it) or the read bandwidth reaches
// `max_bandwidth`; a point does not depend on `cores` beyond that.
// A point is the bandwidth (reads + writes) and the mean read latency from joining the
// FIFO to the last data beat, over a window after as long a warm-up.
//
// Curves are measured on first use, per pattern, region count (1, 2, 4, 8 or 16: the nearest
// power of two; they differ by a few percent between neighbours) and write share
// (kWriteShares; interpolated linearly between them), and kept: DramCurves is shared by
// every simulation of one DRAM configuration (thread-safe), DramCurveStore holds them per
// configuration for a sweep or a command (owned by the caller: no global state), and,
// given a folder, on disk (dram_curve_file.h), so that a later process finds them without
// measuring. Deterministic: the numbers are the controller's, whichever thread or process
// measured them.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/time.h"
#include "mem/dram/dram_spec.h"

namespace fusim::residency {

// AlignedStream: Stream with the regions' bases at kTensorAlignment boundaries, so the
// same chunk of equal tensors lies at the same offset in the address mapping (the same
// banks, other rows, where the mapping has no bank hashing). PyTorch's allocators put
// every large tensor at such a boundary (sim/schedule/allocator.h: CUDA's kRoundLarge
// segments; glibc's mmap of large CPU tensors is page aligned, THP 2 MiB), and then the
// two operands of an elementwise op or an update fight for the same banks at every chunk,
// where Stream's random bases spread them: on the 40-core Xeon preset (RoBaRaCoCh, 16
// banks x 64 KiB repeating every 1 MiB) line fidelity streamed a relu over 128 MB tensors
// at 151-154 GB/s against Stream's 165-194.
enum class DramPattern { Stream, Random, AlignedStream };
constexpr std::uint64_t kTensorAlignment = std::uint64_t{2} << 20;
const char* to_string(DramPattern pattern);

// Shares of the bytes that are writes, at which curves are measured.
constexpr std::array<double, 5> kWriteShares{0.0, 0.25, 0.5, 0.75, 1.0};

struct CurvePoint {
  int cores = 0;          // active cores (load level)
  double bandwidth = 0;   // bytes per second, reads and writes
  Tick read_latency = 0;  // mean from joining the FIFO to the data; 0 on the write-only curve
};

// One pattern, region count and write share, by increasing load.
struct DramCurve {
  std::vector<CurvePoint> points;
  double peak_bandwidth() const;  // the highest bandwidth measured
  // Mean read latency at `bandwidth` bytes/s: interpolated between the points below the
  // peak; the first point's below it, the peak point's at or above it.
  Tick read_latency_at(double bandwidth) const;
};

struct DramCurveParams {
  std::uint32_t request_bytes = 64;     // the hierarchy's line
  int cores = 1;                        // most cores one op runs on
  int mshrs = 16;                       // line misses in flight per core
  Tick path_latency = 0;                // from a miss's issue to its arrival at memory
  std::uint64_t chunk_bytes = 1 << 20;  // the executor's chunk
  std::int64_t window = 2000;           // completions measured per point (and warm-up)
  // Loads whose reads pass this bandwidth are not measured (0: no limit): what the caches
  // in front can send (their last level's ports) bounds what the executor can ask, and a curve
  // of 128 HBM pseudo-channels at saturation costs seconds to measure.
  double max_bandwidth = 0;
};

// What decides a DRAM configuration's curves, as text: every field of the spec and the
// parameters. Equal keys, equal curves.
std::string dram_curve_key(const dram::DramSpec& spec, const DramCurveParams& params);

// The region counts curves are measured at: the power of two nearest `regions` (1..16).
int region_bucket(int regions);

// One curve, measured now.
DramCurve measure_dram_curve(const dram::DramSpec& spec, const DramCurveParams& params,
                             DramPattern pattern, int regions, double write_share);

// The curves of one DRAM configuration, measured as they are asked for.
class DramCurves {
 public:
  // cache_dir: where curves are kept between processes ("" for nowhere).
  DramCurves(dram::DramSpec spec, DramCurveParams params, std::string cache_dir = "");
  const std::string& key() const { return key_; }
  const DramCurveParams& params() const { return params_; }
  double peak_bandwidth(DramPattern pattern, int regions, double write_share);
  Tick read_latency_at(DramPattern pattern, int regions, double write_share, double bandwidth);
  Tick idle_read_latency(DramPattern pattern);  // one core, one region, no writes
  // The curve at a measured share (kWriteShares[share_index]); regions clamped to 1..16.
  const DramCurve& curve(DramPattern pattern, int regions, std::size_t share_index);
  std::size_t measured() const;  // curves measured so far (not read from disk)
  std::size_t loaded() const;    // curves read from the cache folder

 private:
  dram::DramSpec spec_;
  DramCurveParams params_;
  std::string key_;
  std::string cache_dir_;
  std::string fingerprint_;  // of the controller's behaviour (dram_curve_file.h), lazily
  std::size_t measured_ = 0, loaded_ = 0;
  mutable std::mutex mutex_;
  std::map<std::tuple<int, int, std::size_t>, std::unique_ptr<DramCurve>> curves_;
};

// DRAM configurations' curves by key, for everything one command or sweep simulates.
class DramCurveStore {
 public:
  explicit DramCurveStore(std::string cache_dir = "") : cache_dir_(std::move(cache_dir)) {}
  std::shared_ptr<DramCurves> get(const dram::DramSpec& spec, const DramCurveParams& params);
  const std::string& cache_dir() const { return cache_dir_; }

 private:
  std::string cache_dir_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<DramCurves>> by_key_;
};

}  // namespace fusim::residency
