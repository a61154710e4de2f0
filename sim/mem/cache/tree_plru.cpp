// Tree pseudo-LRU (as in Intel/ARM L1s; Handy, "The Cache Memory Book"): ways-1 bits per set
// form a binary tree; each bit points to the half that was used *less* recently. A use
// flips the bits on its path to point away from it; the victim follows the bits from the
// root. Bit 0 is the root, node n's children are 2n+1 (left, lower ways) and 2n+2.
// Requires a power-of-two associativity (checked when the configuration is read).
#include <vector>

#include "mem/cache/replacement.h"

namespace fusim::cache {
namespace {
class TreePlru final : public ReplacementPolicy {
 public:
  explicit TreePlru(const PolicyParams& p)
      : ways_(p.ways), bits_(std::size_t{p.sets} * (p.ways > 1 ? p.ways - 1 : 1), 0) {}
  void on_hit(std::uint32_t set, std::uint32_t way) override { touch(set, way); }
  void on_fill(std::uint32_t set, std::uint32_t way) override { touch(set, way); }
  std::uint32_t victim(std::uint32_t set) override {
    if (ways_ == 1) return 0;
    std::uint8_t* tree = &bits_[std::size_t{set} * (ways_ - 1)];
    std::uint32_t node = 0, lo = 0, span = ways_;
    while (span > 1) {
      span /= 2;
      if (tree[node]) {  // 1: the right half is less recently used
        lo += span;
        node = 2 * node + 2;
      } else {
        node = 2 * node + 1;
      }
    }
    return lo;
  }

 private:
  void touch(std::uint32_t set, std::uint32_t way) {
    if (ways_ == 1) return;
    std::uint8_t* tree = &bits_[std::size_t{set} * (ways_ - 1)];
    std::uint32_t node = 0, lo = 0, span = ways_;
    while (span > 1) {
      span /= 2;
      bool right = way >= lo + span;
      tree[node] = right ? 0 : 1;  // point to the other half
      if (right) {
        lo += span;
        node = 2 * node + 2;
      } else {
        node = 2 * node + 1;
      }
    }
  }
  std::uint32_t ways_;
  std::vector<std::uint8_t> bits_;
};
}  // namespace

std::unique_ptr<ReplacementPolicy> make_tree_plru(const PolicyParams& params) {
  return std::make_unique<TreePlru>(params);
}

}  // namespace fusim::cache
