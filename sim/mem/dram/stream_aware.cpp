// Stream-aware scheduling for training steps. In the spirit of CADS (core-aware dynamic
// scheduling: rank the requesters by their measured memory behaviour instead of treating
// all requests alike) and of TCM (Kim et al., "Thread Cluster Memory Scheduling", MICRO
// 2010), which ranks latency-sensitive (low-intensity) threads above bandwidth-sensitive
// ones. In a fused training step an optimizer update (Adam over all parameters) is a
// bandwidth-hungry stream with near-perfect row locality; under FR-FCFS its row hits keep
// winning and the backward kernel's misses wait. Here each requester's column accesses and
// row hits are counted per epoch (epoch_cycles); a requester that takes more than 1.5 times
// the mean share of the epoch and mostly hits rows is classified as a bulk stream.
// Priority among the requests ready first: starved (older than starvation_cycles) first,
// then non-bulk requesters, then row hits, then age. It stays work-conserving: a bulk
// stream is only passed over when another request is ready at the same cycle.
#include <vector>

#include "mem/dram/scheduler.h"

namespace fusim::dram {
namespace {

class StreamAware final : public Scheduler {
 public:
  explicit StreamAware(const ControllerConfig& cfg)
      : epoch_(cfg.epoch_cycles), starvation_(cfg.starvation_cycles) {}

  std::size_t pick(const Candidate* c, std::size_t n) override {
    Cycle first = kNoCycle;
    for (std::size_t i = 0; i < n; ++i) first = std::min(first, c[i].ready);
    std::size_t best = n;
    int best_rank = 1 << 30;
    for (std::size_t i = 0; i < n; ++i) {  // age order: ties keep the oldest
      if (c[i].ready > first) continue;
      const bool starved = first - c[i].arrival >= starvation_;
      const int rank =
          (starved ? 0 : 4) + (is_bulk(c[i].requester) ? 2 : 0) + (c[i].row_hit ? 0 : 1);
      if (rank < best_rank) best = i, best_rank = rank;
    }
    return best;
  }

  void on_column(int requester, bool row_hit, Cycle /*arrival*/, Cycle now) override {
    if (now >= epoch_end_) close_epoch(now);
    if (static_cast<std::size_t>(requester) >= current_.size()) {
      current_.resize(requester + 1);
      bulk_.resize(requester + 1, false);
    }
    ++current_[requester].accesses;
    current_[requester].hits += row_hit ? 1 : 0;
  }

 private:
  struct Counts {
    std::uint64_t accesses = 0, hits = 0;
  };
  bool is_bulk(int requester) const {
    return static_cast<std::size_t>(requester) < bulk_.size() && bulk_[requester];
  }
  void close_epoch(Cycle now) {
    std::uint64_t total = 0, active = 0;
    for (const auto& c : current_) total += c.accesses, active += c.accesses > 0;
    for (std::size_t r = 0; r < current_.size(); ++r) {
      const auto& c = current_[r];
      // Share above 1.5x the mean share, and at least half of the accesses row hits.
      bulk_[r] = active > 1 && 2 * c.accesses * active > 3 * total && 2 * c.hits >= c.accesses;
      current_[r] = Counts{};
    }
    epoch_end_ = (now / epoch_ + 1) * epoch_;
  }

  Cycle epoch_, starvation_;
  Cycle epoch_end_ = 0;
  std::vector<Counts> current_;
  std::vector<bool> bulk_;
};

}  // namespace

std::unique_ptr<Scheduler> make_stream_aware_scheduler(const ControllerConfig& cfg) {
  return std::make_unique<StreamAware>(cfg);
}

}  // namespace fusim::dram
