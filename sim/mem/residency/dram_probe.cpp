// The probe that measures a DRAM system's bandwidth-latency curves (dram_curve.h): one
// load level at a time, cores in closed loops on the controller through DramSystem's
// public interface; the curves' store and interpolation are dram_curve.cpp.
#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "core/event_queue.h"
#include "core/splitmix.h"
#include "mem/dram/dram_system.h"
#include "mem/refused_queues.h"
#include "mem/residency/dram_curve.h"
#include "mem/residency/dram_curve_file.h"

namespace fusim::residency {
namespace {

constexpr std::uint64_t kFootprint = std::uint64_t{1} << 32;
constexpr std::uint64_t kTurnLines = 64;  // a core's lines of one range in a row (read_address)

// One load level: `active` cores in closed loops on the controller (dram_curve.h).
class Probe {
 public:
  Probe(const dram::DramSpec& spec, const DramCurveParams& p, DramPattern pattern, int regions,
        double write_share, int active)
      : dram_(spec, queue_, "dram curve"),
        p_(p),
        pattern_(pattern),
        regions_(std::max(1, regions)),
        write_share_(write_share),
        active_(active),
        seed_(0x5eed ^ (static_cast<std::uint64_t>(active) << 8) ^
              static_cast<std::uint64_t>(regions)) {
    dram_.set_wake_mode(dram::WakeMode::Lookahead);
    refresh_interval_ = spec.t.tREFI * spec.tCK;
    dram_.set_completion([this](const mem::MemRequest& r, Tick done) { completed(r, done); });
    dram_.set_retry([this] { pump(); });
    fifo_.reset(static_cast<std::size_t>(dram_.destinations()));
    // Region bases (and the write stream's, last) anywhere, line aligned; AlignedStream's
    // at tensor boundaries, the victims' too: they are the oldest lines of the last level,
    // written by ops on such tensors a cache size earlier, and the last levels' sizes are
    // multiples of the alignment (the Xeon's 60 MiB LLC; relu over 2 MiB-aligned 128 MB
    // tensors: 2751 us a pass in tensor fidelity, 2580-2667 in line, 2420 with the victims
    // anywhere).
    for (int r = 0; r <= regions_; ++r) {
      const mem::Addr b = random_line();
      base_.push_back(
          pattern == DramPattern::AlignedStream ? b / kTensorAlignment * kTensorAlignment : b);
    }
    // A load of `active` cores is an op on that many cores: the executor cuts each chunk
    // slice among the op's cores (sim/exec/simulate.h). Cut for all `cores` with only
    // `active` of them issuing (as this probe once did), a core read 1/cores of every slice
    // and ran ahead into the next ones (its MSHRs span several slices of a small piece),
    // opening a row in another bank for each piece: the H100's HBM3 streamed 1.57 TB/s of
    // 2.66 at every load, where line and block fidelity, whose op issues one slice at a
    // time, moved 1.7 TB/s through resnet50's elementwise ops, and tensor fidelity put
    // resnet50 b32 at 1.46x block fidelity's step.
    const std::uint64_t per_core = p.chunk_bytes / static_cast<std::uint64_t>(regions_) /
                                   static_cast<std::uint64_t>(std::max(1, active)) /
                                   p.request_bytes * p.request_bytes;
    piece_ = std::max<std::uint64_t>(p.request_bytes, per_core);
    offset_.assign(static_cast<std::size_t>(active) * static_cast<std::size_t>(regions_), 0);
    turn_.assign(static_cast<std::size_t>(active), 0);
    write_offset_.assign(static_cast<std::size_t>(active), 0);
  }

  CurvePoint run() {
    queue_.schedule(0, Priority::Compute, [this] {
      for (int c = 0; c < active_; ++c)
        for (int i = 0; i < p_.mshrs; ++i) issue(c);
    });
    while (!stopped_ && queue_.step()) {
    }
    CurvePoint point;
    point.cores = active_;
    point.bandwidth = window_end_ > window_start_ ? static_cast<double>(window_bytes_) /
                                                        to_seconds(window_end_ - window_start_)
                                                  : 0;
    point.read_latency = window_reads_ > 0 ? latency_sum_ / window_reads_ : 0;
    return point;
  }
  // Whether most of the window's requests found the controller full on arrival (after run).
  bool controller_full() const { return 2 * window_waited_ > window_joined_; }

 private:
  // Warm-up: at least `window` completions and twice the requests in flight (every request
  // measured was sent after the start-up transient). The window is then a whole number of
  // refresh intervals long (so that it holds each rank's refreshes in their proportion,
  // JESD79-4: one tRFC per tREFI) and at least as long as `window` completions took.
  // A whole tREFI under per-bank refresh too, where a thirty-second of it would hold the
  // refreshes in proportion: the window also averages the cores' walk over banks and rows,
  // and windows of tREFI / 32 (or one round of every MSHR) moved the HBM3 curves' points
  // by 10-30% either way and resnet50 b32 on the H100 from 17.92 to 17.45 ms (block
  // 17.95), though the window is 86% of the H100's curve requests (130k at 128 SMs).
  std::int64_t warmup() const {
    return std::max<std::int64_t>(p_.window, 2 * std::int64_t{active_} * p_.mshrs);
  }
  void start_window(Tick now) {
    window_start_ = now;
    const Tick per_request = std::max<Tick>(1, now / std::max<std::int64_t>(1, completions_));
    const Tick wanted = per_request * p_.window;
    const Tick interval = std::max<Tick>(1, refresh_interval_);
    window_end_ = now + interval * std::max<Tick>(1, (wanted + interval - 1) / interval);
  }
  mem::Addr random_line() {
    return splitmix64(seed_) % kFootprint / p_.request_bytes * p_.request_bytes;
  }
  mem::Addr read_address(int core) {
    if (pattern_ == DramPattern::Random) return random_line();
    const auto c = static_cast<std::size_t>(core);
    // AlignedStream: a core's ranges take turns at its first level's port a lookahead
    // window at a time (kLookaheadCycles in mem/cache/timed_path.cpp: about 64 lines), so
    // memory sees runs of each range, a row switch per run where the ranges share banks;
    // alternating line by line, every line of a core switched rows (gpt2-small, 2 blocks
    // of hidden 128, on the 4-core Xeon: +10% against line, within 2% in runs). Stream keeps
    // alternating lines: its ranges lie in other banks, where runs changed nothing but
    // its agreement on resnet18 there (-0.2% -> -4.0% against line).
    const std::size_t run = pattern_ == DramPattern::AlignedStream ? kTurnLines : 1;
    const std::size_t region = turn_[c]++ / run % static_cast<std::size_t>(regions_);
    std::uint64_t& done = offset_[c * static_cast<std::size_t>(regions_) + region];
    const std::uint64_t chunk = done / piece_, within = done % piece_;
    done += p_.request_bytes;
    const std::uint64_t slice = piece_ * static_cast<std::uint64_t>(std::max(1, active_));
    return (base_[region] + chunk * slice + c * piece_ + within) % kFootprint;
  }
  // The dirty victims of core `core`'s misses. A victim leaves with the miss that evicted
  // it (hierarchy.h), so each core's victims are a stream paced by its own misses; they are
  // the oldest lines of the last level, which an earlier op on as many cores wrote, each
  // core a piece of each chunk slice: a core's victims walk pieces cut as its reads are,
  // `active` streams in all. As one sequential stream shared by every core they kept one
  // row open among the reads' rows: the 4-core Xeon's backward convs (40% of their bytes
  // victims) read 8-18% faster on the curves than in line fidelity, and resnet18 there
  // ran 3.5-4.4% faster than in line; resnet50 batch 32 on the H100 (HBM3, 132 SMs), Adam,
  // 3.6-4.3% slower than block fidelity. (As `active` streams taken in
  // turn, whichever core missed, the A100's gpt2-small ran 4% slower than line fidelity;
  // each victim in its fill's set, the fill's address plus a multiple of the last level's
  // size / ways as in the line model's modulo-indexed caches, put it in its read's channel
  // and often its bank: resnet18 on the 4-core Xeon then ran 4-5% slower than in line.)
  mem::Addr write_address(int core) {
    if (pattern_ == DramPattern::Random) return random_line();
    const auto c = static_cast<std::size_t>(core);
    std::uint64_t& done = write_offset_[c];
    const std::uint64_t chunk = done / piece_, within = done % piece_;
    done += p_.request_bytes;
    const std::uint64_t slice = piece_ * static_cast<std::uint64_t>(std::max(1, active_));
    return (base_.back() + chunk * slice + c * piece_ + within) % kFootprint;
  }

  // Core `core`'s next miss: a read reaching the FIFO a path latency from now, with its
  // share of posted writes joining at once (a victim leaves as the miss that evicts it
  // issues); with writes only, a write in the read's place.
  void issue(int core) {
    mem::MemRequest r;
    r.bytes = p_.request_bytes;
    r.requester = core;
    if (write_share_ >= 1.0) {
      r.is_write = true;
      r.addr = write_address(static_cast<int>(writes_++ % static_cast<std::uint64_t>(active_)));
      r.id = static_cast<std::uint64_t>(queue_.now());
      join(r);
      return;
    }
    r.addr = read_address(core);
    queue_.schedule_in(p_.path_latency, Priority::Memory, [this, r]() mutable {
      r.id = static_cast<std::uint64_t>(queue_.now());  // the tick it joined the FIFO
      join(r);
    });
    if (write_share_ <= 0) return;
    // A write for every share / (1 - share) reads, the fraction carried over.
    write_credit_ += write_share_ / (1.0 - write_share_);
    while (write_credit_ >= 1.0) {
      write_credit_ -= 1.0;
      mem::MemRequest w = r;
      w.is_write = true;
      w.addr = write_address(core);
      w.id = static_cast<std::uint64_t>(queue_.now());
      join(w);
    }
  }
  void join(const mem::MemRequest& r) {
    // Refused on arrival (the controller full, or others already waiting in front of it):
    // counted over the window, this says whether the load saturated the controller.
    // (A FIFO per channel, as the hierarchy's outgoing queues are: mem/refused_queues.h.)
    const auto d = static_cast<std::size_t>(dram_.destination(r));
    const bool waits = !fifo_.empty(d) || !dram_.will_accept(r);
    if (window_start_ >= 0 && !stopped_) {
      ++window_joined_;
      if (waits) ++window_waited_;
    }
    fifo_.push(d, r);
    pump();
  }
  void pump() {
    fifo_.drain(dram_, [this](const mem::MemRequest& r) { dram_.send(r); });
    // Refused: wait for the controller's retry (memory_port.h), as the hierarchy's outgoing
    // queues do (mem/cache/timed_path.cpp). Without it the head waited for the next
    // request to join, and once every core's misses sat behind it (writes free no MSHR)
    // nothing joined: write-heavy points measured 0 B/s and ended their curves there.
    if (fifo_.size() != 0) dram_.request_retry();
  }

  void completed(const mem::MemRequest& r, Tick done) {
    ++completions_;
    if (window_start_ < 0) {
      if (completions_ >= warmup()) start_window(done);
    } else if (done <= window_end_) {
      window_bytes_ += r.bytes;
      if (!r.is_write) {
        latency_sum_ += done - static_cast<Tick>(r.id);
        ++window_reads_;
      }
    } else {
      stopped_ = true;
      return;
    }
    // Closed loop: a read answered frees its MSHR (with writes only, a write answered).
    if (!r.is_write || write_share_ >= 1.0) issue(r.requester);
  }

  EventQueue queue_;
  dram::DramSystem dram_;
  DramCurveParams p_;
  DramPattern pattern_;
  int regions_;
  double write_share_;
  int active_;
  std::uint64_t seed_;
  std::vector<mem::Addr> base_;              // region bases, then the victim streams' base
  std::uint64_t piece_ = 64;                 // one core's part of a region's chunk slice
  std::vector<std::uint64_t> offset_;        // per core and region: bytes read of its pieces
  std::vector<std::size_t> turn_;            // per core: requests issued (picks the region)
  std::vector<std::uint64_t> write_offset_;  // per victim stream: bytes written of its pieces
  std::uint64_t writes_ = 0;                 // writes issued (picks the victim stream)
  mem::RefusedQueues fifo_;                  // per channel (DramSystem::destination)
  double write_credit_ = 0;
  Tick refresh_interval_ = 0;
  std::int64_t completions_ = 0, window_reads_ = 0;
  std::int64_t window_joined_ = 0, window_waited_ = 0;  // requests, and those refused
  std::uint64_t window_bytes_ = 0;
  Tick window_start_ = -1, window_end_ = 0, latency_sum_ = 0;
  bool stopped_ = false;
};

}  // namespace

DramCurve measure_dram_curve(const dram::DramSpec& spec, const DramCurveParams& params,
                             DramPattern pattern, int regions, double write_share) {
  FUSIM_ASSERT(
      params.request_bytes > 0 && params.window > 0 && params.cores > 0 && params.mshrs > 0,
      "curve parameters");
  DramCurve curve;
  for (int active = 1;; active = std::min(2 * active, params.cores)) {
    Probe probe(spec, params, pattern, regions, write_share, active);
    const CurvePoint point = probe.run();
    const double before = curve.points.empty() ? 0 : curve.points.back().bandwidth;
    curve.points.push_back(point);
    // Saturated: doubling the cores gained under 2% with the controller full (most of the
    // window's requests refused on arrival: its queues hold no more, and more cores only
    // lengthen the wait in front of it); or every core is running; or past what the caches
    // can ask. A plateau with room in the controller is the streams' addresses, not the
    // memory's limit, and the next doubling may pass it: DDR4's 1-region write-only curve
    // (8 channels, the 40-core Xeon's 12 misses a core) gained 1% from 2 to 4 cores, 48
    // writes in 256 write-queue slots, and 8 cores moved 194 GB/s of the bus's 205 (v5
    // stopped at 4 cores' 97). Bounded all the same: log2(cores) + 2 points at most, and a
    // full controller (the HBM3's thousands of misses past 16 SMs, the costliest points)
    // still ends the curve. The caches' bound is on the reads (they come through the last
    // level's ports); the posted writes come on top of them: stopped at the first point
    // past max_bandwidth in total, the half-write curves of the A100 (180 GB/s of L2
    // port) ended at one core's 222 GB/s, and tensor fidelity held SGD's updates (42%
    // writes) to 253 GB/s of DRAM where line fidelity, port-bound, moved 310 GB/s
    // (gpt2-small's 25.7 MB embedding update: 351 / 285 us).
    const double asked =
        write_share < 1.0 ? point.bandwidth * (1.0 - write_share) : point.bandwidth;
    if ((active > 1 && point.bandwidth < before * 1.02 && probe.controller_full()) ||
        active == params.cores || (params.max_bandwidth > 0 && asked >= params.max_bandwidth))
      break;
  }
  return curve;
}

std::string controller_fingerprint(const dram::DramSpec& spec) {
  // A small fixed probe: any change to what the controller does to these requests (its
  // timing, scheduling, refresh) changes these numbers, and with them the file names.
  DramCurveParams p;
  p.request_bytes = 64;
  p.cores = 4;
  p.mshrs = 8;
  p.path_latency = 10'000;
  p.window = 256;
  std::string out;
  for (double share : {0.0, 0.5}) {
    const CurvePoint point = Probe(spec, p, DramPattern::Stream, 2, share, 4).run();
    out += fmt::format("{:a}/{};", point.bandwidth, point.read_latency);
  }
  return out;
}

}  // namespace fusim::residency
