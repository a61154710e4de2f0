// True LRU: each line carries the time stamp of its last use (a per-cache counter); the
// victim is the way with the oldest stamp. O(ways) per miss, O(1) per hit.
#include <limits>
#include <vector>

#include "mem/cache/replacement.h"

namespace fusim::cache {
namespace {
class Lru final : public ReplacementPolicy {
 public:
  explicit Lru(const PolicyParams& p) : ways_(p.ways), stamp_(std::size_t{p.sets} * p.ways, 0) {}
  void on_hit(std::uint32_t set, std::uint32_t way) override { stamp_[idx(set, way)] = ++clock_; }
  void on_fill(std::uint32_t set, std::uint32_t way) override { stamp_[idx(set, way)] = ++clock_; }
  void on_invalidate(std::uint32_t set, std::uint32_t way) override { stamp_[idx(set, way)] = 0; }
  std::uint32_t victim(std::uint32_t set) override {
    std::uint32_t best = 0;
    std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
    for (std::uint32_t w = 0; w < ways_; ++w) {
      std::uint64_t s = stamp_[idx(set, w)];
      if (s < oldest) oldest = s, best = w;
    }
    return best;
  }

 private:
  std::size_t idx(std::uint32_t set, std::uint32_t way) const {
    return std::size_t{set} * ways_ + way;
  }
  std::uint32_t ways_;
  std::uint64_t clock_ = 0;
  std::vector<std::uint64_t> stamp_;
};
}  // namespace

std::unique_ptr<ReplacementPolicy> make_lru(const PolicyParams& params) {
  return std::make_unique<Lru>(params);
}

}  // namespace fusim::cache
