// Random replacement with a per-cache seeded generator (xorshift64*, Vigna 2016), so runs
// are reproducible and two caches never share generator state.
#include "mem/cache/replacement.h"

namespace fusim::cache {
namespace {
class RandomPolicy final : public ReplacementPolicy {
 public:
  explicit RandomPolicy(const PolicyParams& p)
      : ways_(p.ways), state_(p.seed ? p.seed : 0x9E3779B97F4A7C15ull) {}
  void on_hit(std::uint32_t, std::uint32_t) override {}
  void on_fill(std::uint32_t, std::uint32_t) override {}
  std::uint32_t victim(std::uint32_t) override {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    std::uint64_t r = state_ * 0x2545F4914F6CDD1Dull;
    return static_cast<std::uint32_t>((r >> 32) % ways_);
  }

 private:
  std::uint32_t ways_;
  std::uint64_t state_;
};
}  // namespace

std::unique_ptr<ReplacementPolicy> make_random(const PolicyParams& params) {
  return std::make_unique<RandomPolicy>(params);
}

}  // namespace fusim::cache
