#include "mem/residency/set_conflicts.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace fusim::residency {

double run_variance(std::uint64_t run_bytes, std::uint64_t span) {
  const double f = static_cast<double>(run_bytes % span) / static_cast<double>(span);
  return f * (1.0 - f);
}

namespace {
// P(X <= k), X the other runs' lines in a set (continuity-corrected normal; below a
// variance of 1e-6, no misaligned run since, X is its mean).
class OtherCount {
 public:
  OtherCount(std::uint64_t other_bytes, double other_var, const SetGeometry& g)
      : mean_(static_cast<double>(other_bytes) / static_cast<double>(g.span)),
        sigma_(std::sqrt(std::max(0.0, other_var))) {}
  double at_most(double k) const {
    const double margin = k + 0.5 - mean_;
    if (sigma_ < 1e-3) return margin > 0 ? 1.0 : 0.0;
    return 0.5 * std::erfc(-margin / (sigma_ * std::sqrt(2.0)));
  }

 private:
  double mean_, sigma_;
};
}  // namespace

double hit_probability(std::uint64_t own_bytes, std::uint64_t other_bytes, double other_var,
                       const SetGeometry& g) {
  const OtherCount x(other_bytes, other_var, g);
  auto at_most = [&](double k) { return x.at_most(k); };
  // The own run of R = q span + r bytes puts q + 1 lines in r / line of the sets, q in the
  // others: a unit of it sees the other n - 1 lines of its set (all used since it), so it
  // stays while X <= ways - n. The long sets hold (q + 1) r of the run's bytes.
  const std::uint64_t q = own_bytes / g.span, r = own_bytes % g.span;
  const double ways = static_cast<double>(g.ways);
  const double in_long =
      own_bytes > 0 ? static_cast<double>((q + 1) * r) / static_cast<double>(own_bytes) : 0.0;
  const double qd = static_cast<double>(q);
  return (1.0 - in_long) * at_most(ways - qd) + in_long * at_most(ways - 1.0 - qd);
}

double held_fraction(std::uint64_t own_bytes, std::uint64_t piece_bytes, std::uint64_t other_bytes,
                     double other_var, const SetGeometry& g) {
  FUSIM_ASSERT(piece_bytes > 0 && piece_bytes <= own_bytes, "a piece of its own run");
  const OtherCount x(other_bytes, other_var, g);
  // stays[n] = T(n): the lines a set keeps of the n newest lines of the run in it.
  std::vector<double> stays(std::size_t{g.ways} + 1, 0.0);
  for (std::uint32_t j = 0; j < g.ways; ++j)
    stays[j + 1] = stays[j] + x.at_most(static_cast<double>(g.ways - 1 - j));
  const double unit = static_cast<double>(g.unit);
  const double sets = static_cast<double>(g.span) / unit;
  auto held = [&](std::uint64_t run) {
    const std::uint64_t q = run / g.span;
    const double longer = static_cast<double>(run % g.span) / unit;
    auto t = [&](std::uint64_t n) { return stays[std::min<std::uint64_t>(n, g.ways)]; };
    return longer * t(q + 1) + (sets - longer) * t(q);
  };
  const double lines = static_cast<double>(piece_bytes) / unit;
  const double kept = (held(own_bytes) - held(own_bytes - piece_bytes)) / lines;
  return std::clamp(kept, 0.0, 1.0);
}

std::uint64_t keep_depth(std::uint64_t capacity, const SetGeometry& g) {
  if (g.ways == 0) return capacity;
  const double m = std::max(1.0, 5.0 / std::sqrt(static_cast<double>(g.ways)));
  const auto extra = static_cast<std::uint64_t>(static_cast<double>(capacity) * m);
  return capacity + extra / g.unit * g.unit;
}

RecencySums::RecencySums(std::uint32_t slots) {
  reset(slots);
}

void RecencySums::reset(std::uint32_t slots) {
  bytes_.assign(std::size_t{slots} + 1, 0);
  var_.assign(std::size_t{slots} + 1, 0.0);
  total_bytes_ = 0;
  total_var_ = 0;
}

void RecencySums::add(std::uint32_t slot, std::int64_t bytes, double var) {
  FUSIM_ASSERT(slot >= 1 && slot < bytes_.size(), "a recency slot in range");
  total_bytes_ += bytes;
  total_var_ += var;
  for (std::size_t i = slot; i < bytes_.size(); i += i & (~i + 1)) {
    bytes_[i] += bytes;
    var_[i] += var;
  }
}

std::int64_t RecencySums::prefix_bytes(std::uint32_t slot) const {
  std::int64_t sum = 0;
  for (std::size_t i = slot; i > 0; i -= i & (~i + 1)) sum += bytes_[i];
  return sum;
}

double RecencySums::var_above(std::uint32_t slot) const {
  double sum = 0;
  for (std::size_t i = slot; i > 0; i -= i & (~i + 1)) sum += var_[i];
  // Sums of added and removed doubles drift by rounding: a variance is never negative.
  return std::max(0.0, total_var_ - sum);
}

}  // namespace fusim::residency
