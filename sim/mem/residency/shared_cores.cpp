// Aging of private stacks that share cores (shared_cores.h).
#include "mem/residency/shared_cores.h"

#include <cmath>

#include "core/error.h"

namespace fusim::residency {

SharedCores::SharedCores(int levels, int cores)
    : fills_(static_cast<std::size_t>(levels),
             std::vector<double>(static_cast<std::size_t>(cores), 0.0)),
      taken_(static_cast<std::size_t>(levels)) {}

int SharedCores::add(std::vector<int> cores) {
  FUSIM_ASSERT(!cores.empty(), "a set of at least one core");
  for (int c : cores)
    FUSIM_ASSERT(c >= 0 && static_cast<std::size_t>(c) < fills_.front().size(),
                 "a core of the machine");
  cores_.push_back(std::move(cores));
  const int set = sets() - 1;
  // A new set has seen everything filled so far: nothing of it was in its stack.
  for (std::size_t k = 0; k < taken_.size(); ++k)
    taken_[k].push_back(sum(static_cast<int>(k), set));
  return set;
}

double SharedCores::sum(int level, int set) const {
  const auto& f = fills_[static_cast<std::size_t>(level)];
  double s = 0;
  for (int c : cores_[static_cast<std::size_t>(set)]) s += f[static_cast<std::size_t>(c)];
  return s;
}

std::uint64_t SharedCores::take_foreign(int level, int set, std::uint64_t unit) {
  double& taken = taken_[static_cast<std::size_t>(level)][static_cast<std::size_t>(set)];
  const double pending = sum(level, set) - taken;
  if (pending < static_cast<double>(unit)) return 0;
  const auto units = static_cast<std::uint64_t>(std::floor(pending / static_cast<double>(unit)));
  const std::uint64_t bytes = units * unit;
  taken += static_cast<double>(bytes);  // the rest (under a unit) waits for more
  return bytes;
}

void SharedCores::filled(int level, int set, std::uint64_t bytes) {
  if (bytes == 0) return;
  const auto& cores = cores_[static_cast<std::size_t>(set)];
  auto& f = fills_[static_cast<std::size_t>(level)];
  const double each = static_cast<double>(bytes) / static_cast<double>(cores.size());
  for (int c : cores) f[static_cast<std::size_t>(c)] += each;
  taken_[static_cast<std::size_t>(level)][static_cast<std::size_t>(set)] +=
      static_cast<double>(bytes);
}

}  // namespace fusim::residency
