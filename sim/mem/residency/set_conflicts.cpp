#include "mem/residency/set_conflicts.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace fusim::residency {

double run_variance(std::uint64_t run_bytes, std::uint64_t span) {
  const double f = static_cast<double>(run_bytes % span) / static_cast<double>(span);
  return f * (1.0 - f);
}

double hit_probability(std::uint64_t own_bytes, std::uint64_t other_bytes, double other_var,
                       const SetGeometry& g) {
  const double mean = static_cast<double>(other_bytes) / static_cast<double>(g.span);
  const double sigma = std::sqrt(std::max(0.0, other_var));
  // P(X <= k), X the other runs' lines in the set (continuity-corrected normal; below a
  // variance of 1e-6, no misaligned run since, X is its mean).
  auto at_most = [&](double k) {
    const double margin = k + 0.5 - mean;
    if (sigma < 1e-3) return margin > 0 ? 1.0 : 0.0;
    return 0.5 * std::erfc(-margin / (sigma * std::sqrt(2.0)));
  };
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
