// Static RRIP with 2-bit re-reference prediction values (Jaleel et al., "High Performance
// Cache Replacement Using Re-Reference Interval Prediction", ISCA 2010), hit-priority
// variant: a fill predicts a long interval (RRPV = 2^M - 2 = 2), a hit predicts near-
// immediate reuse (RRPV = 0); the victim is the first way (lowest index) with RRPV = 3,
// ageing the whole set by one until one exists. Scan-resistant: a streaming pass cannot
// flush lines that were reused.
#include <vector>

#include "mem/cache/replacement.h"

namespace fusim::cache {
namespace {
constexpr std::uint8_t kMaxRrpv = 3;  // M = 2 bits

class Srrip final : public ReplacementPolicy {
 public:
  explicit Srrip(const PolicyParams& p)
      : ways_(p.ways), rrpv_(std::size_t{p.sets} * p.ways, kMaxRrpv) {}
  void on_hit(std::uint32_t set, std::uint32_t way) override { rrpv_[idx(set, way)] = 0; }
  void on_fill(std::uint32_t set, std::uint32_t way) override {
    rrpv_[idx(set, way)] = kMaxRrpv - 1;
  }
  void on_invalidate(std::uint32_t set, std::uint32_t way) override {
    rrpv_[idx(set, way)] = kMaxRrpv;
  }
  std::uint32_t victim(std::uint32_t set) override {
    std::uint8_t* r = &rrpv_[std::size_t{set} * ways_];
    for (;;) {
      for (std::uint32_t w = 0; w < ways_; ++w)
        if (r[w] == kMaxRrpv) return w;
      for (std::uint32_t w = 0; w < ways_; ++w) ++r[w];
    }
  }

 private:
  std::size_t idx(std::uint32_t set, std::uint32_t way) const {
    return std::size_t{set} * ways_ + way;
  }
  std::uint32_t ways_;
  std::vector<std::uint8_t> rrpv_;
};
}  // namespace

std::unique_ptr<ReplacementPolicy> make_srrip(const PolicyParams& params) {
  return std::make_unique<Srrip>(params);
}

}  // namespace fusim::cache
